package vfs

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/store"
	"github.com/skillfs/skillfs/resolver"
)

// A branch is one origin (a configured server) as the mount holds it: its session
// (resolver), its catalog of held entries, its read path and its directory
// reads, each a part of its own with its own lock.
type branch struct {
	cfg   config.Origin
	id    string
	log   *slog.Logger
	res   *resolver.Session
	store *store.Bucket
	cat   *catalog
	rd    *reader
	dirs  *dirReads
	// approvals are the user's approvals of this origin's skills (approval:
	// required); the catalog places only approved skills.
	approvals *approvalBook
	keep      keeper    // fetches what approvals keep for later diffs
	files     fileTable // the Files the kernel holds, one per version
	mem       *memory   // the mount's

	// life ends when the origin stops (unmount, or a reload that removes
	// or changes it); stop ends it, and done is closed once its supervisor
	// has returned. arm sets them.
	life context.Context
	stop context.CancelFunc
	done chan struct{}

	ready  chan struct{} // closed once a catalog (live or saved) is held, or the server failed
	readyO sync.Once
	// readied is the Core's: markReady wakes Ready through it rather than
	// leave the mount to notice at its next tick.
	readied chan struct{}
}

func newBranch(f *Core, oc config.Origin, so *store.Bucket) *branch {
	log := f.log.With("origin", oc.Label)
	o := &branch{cfg: oc, id: oc.ID(), log: log, store: so, mem: f.mem, ready: make(chan struct{}), readied: f.readied}
	o.cat = newCatalog(oc, so, log, f.now, f.started)
	o.cat.mem = f.mem
	o.approvals = newApprovalBook(oc, so, log, f.now)
	if oc.Approval.Required() {
		o.cat.admit = o.approvals.state
	}
	failures := newFailureLog(oc.Label, log, f.now, func(p string) string {
		if n := o.cat.current().nodes[p]; n != nil && n.file != nil {
			return n.file.f.URI.String()
		}
		return ""
	})
	o.cat.onChange = func(c Change) {
		failures.forget(c.Files...)
		f.publish(o.mountChange(c))
	}
	o.res = resolver.New(resolver.Options{
		Origin:    oc,
		Dial:      f.opts.Dial[oc.Label],
		OnCatalog: o.onCatalog,
		Logger:    f.log,
		Version:   f.opts.Version,
		RelistGap: f.opts.RelistGap,
	})
	o.rd = &reader{
		cfg: oc, mem: f.mem, res: o.res, store: so, cat: o.cat,
		flags: newFlagBook(so, log), failures: failures, dyn: newDynamics(),
		log: log, now: f.now, staleRetry: f.staleRetry, gate: newGate(f.mem.fetches),
		rejected: rejections{cfg: oc},
		learned:  learned{lengths: map[string]int64{}, verified: map[string]struct{}{}},
	}
	o.dirs = newDirReads(oc.Label, o.res, o.cat, log, f.now, f.started)
	return o
}

// ReasonStopped: the read was waiting on a server when the mount began to
// unmount, or when a reload removed or changed the server.
const ReasonStopped = "stopped"

var errStopped = errors.New("the mount is stopping, or this server's entry was removed or changed by a config reload")

// bound ties a read to the origin's life: a read waiting on the server
// fails with ReasonStopped when the origin stops, rather than hold an
// unmount (and Ctrl-C) for as long as a stalled server's call timeout. The
// returned func, given the read's error, turns the cancellation into that
// ReadError.
func (o *branch) bound(ctx context.Context) (context.Context, func(error) error) {
	if o.life == nil {
		return ctx, func(err error) error { return err }
	}
	ctx, cancel := context.WithCancelCause(ctx)
	unhook := context.AfterFunc(o.life, func() { cancel(errStopped) })
	return ctx, func(err error) error {
		unhook()
		stopped := context.Cause(ctx) == errStopped
		cancel(nil)
		if err != nil && stopped {
			return &ReadError{Path: joinPath(o.cfg.Label, ""), Reason: ReasonStopped, Err: errStopped}
		}
		return err
	}
}

func (o *branch) markReady() {
	o.readyO.Do(func() {
		close(o.ready)
		select {
		case o.readied <- struct{}{}:
		default: // Ready is already woken
		}
	})
}

// onCatalog holds a live catalog from the server.
func (o *branch) onCatalog(c *resolver.Catalog) {
	// Once the tree is in force the mount may go live, while what changed
	// is worked out and the catalog is encoded and saved: for a large
	// listing those take a good part of the time building its tree does.
	o.cat.hold(c, func() {
		// What the server's directory reads said before this listing
		// may be gone with it: ask again (the kernel lists such
		// directories anew on every open).
		o.dirs.forget()
		o.markReady()
	})
	o.cat.save()
	// Decoding a large listing and saving it leave much garbage behind;
	// give it back rather than keep the daemon at that peak.
	o.mem.releaseSoon()
}

// lookup returns the node at an origin-relative path: from the tree, or
// from directory reads.
func (o *branch) lookup(ctx context.Context, p string) (*node, error) { return o.dirs.lookup(ctx, p) }

// mountChange is an origin-relative Change made mount-relative.
func (o *branch) mountChange(c Change) Change {
	return Change{Files: o.mountPaths(c.Files), Dirs: o.mountPaths(c.Dirs), Added: o.mountPaths(c.Added), Removed: o.mountPaths(c.Removed)}
}

func (o *branch) mountPaths(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = joinPath(o.cfg.Label, p)
	}
	return out
}
