package vfs

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/resolver"
	"github.com/skillfs/skillfs/verify"
)

// Directory reads (servers that declare directoryRead) add what no manifest
// covers: directories above and between skills that the listing did not
// mention, and the files of "dynamic" skills. Inside a skill with a
// manifest they add nothing — the manifest is the skill. Their results are
// kept for dirReadTTL, or until the server's next listing: a listing comes
// when the server said its resources changed (or on a refresh, or a
// reconnect), and a directory read from before it may name a skill that
// listing removed.
//
// A directory read that shows a SKILL.md in a directory no held skill owns
// makes skillfs ask for that skill with skills/get; a confirmed entry joins
// the origin's catalog like a listed one (source "get").

// dirReadTTL is how long a directory read is trusted.
const dirReadTTL = 30 * time.Second

// confirmRetry bounds how often skills/get is asked about one unlisted URI.
const confirmRetry = 30 * time.Second

// dirReads are one origin's directory reads: their results, for dirReadTTL,
// and which unlisted skills they led to confirm or not.
type dirReads struct {
	label   string
	res     *resolver.Session
	cat     *catalog
	log     *slog.Logger
	now     func() time.Time
	started time.Time

	mu          sync.Mutex
	listings    map[string]*dirListing // path → last directory read
	gen         uint64                 // listings forgotten so far (forget)
	confirmed   throttle               // uri → last skills/get for an unlisted skill
	confirming  flight                 // uri → the skills/get in flight, which later askers wait for
	unconfirmed map[string]bool        // skill directories skills/get did not confirm
}

func newDirReads(label string, res *resolver.Session, cat *catalog, log *slog.Logger, now func() time.Time, started time.Time) *dirReads {
	return &dirReads{label: label, res: res, cat: cat, log: log, now: now, started: started,
		listings: map[string]*dirListing{}, unconfirmed: map[string]bool{}}
}

type dirListing struct {
	at       time.Time
	children map[string]bool // name → is a directory
	ok       bool            // false: the server said no such directory
}

// readable reports whether directory reads may add children under p: the
// server supports them, p is not inside a skill with a manifest, and the
// origin does not require approval. Under approval: required the tree is
// the approved skills' manifests and nothing else: a directory read would
// show names the server chose (the directories above and around a skill
// not yet approved, or any other) before the user approved anything, and
// confirm unlisted skills nobody asked for. `skillfs get` still adds an
// unlisted skill, which then waits for approval.
func (lr *dirReads) readable(t *tree, p string) bool {
	if !lr.res.DirectoryRead() || lr.cat.cfg.Approval.Required() {
		return false
	}
	sn := t.skillAt(p)
	return sn == nil || sn.s.Dynamic
}

// lookup returns the node at p: from the tree, or from directory reads.
func (lr *dirReads) lookup(ctx context.Context, p string) (*node, error) {
	t := lr.cat.current()
	if n := t.nodes[p]; n != nil {
		return n, nil
	}
	if p == "" {
		return nil, ErrNotExist
	}
	parent := parentOf(p)
	name := p[len(parent):]
	if parent != "" {
		name = name[1:]
	}
	if !lr.readable(t, parent) || lr.hidden(t, p) {
		return nil, ErrNotExist
	}
	if parent == "" {
		// The scheme root has no URI to list; ask for the child itself.
		return lr.dirAt(ctx, p)
	}
	l := lr.listing(ctx, parent)
	if l == nil || !l.ok {
		return nil, unread(ctx)
	}
	if t2 := lr.cat.current(); t2 != t {
		// A directory read may have confirmed a skill.
		if n := t2.nodes[p]; n != nil {
			return n, nil
		}
		t = t2
	}
	isDir, ok := l.children[name]
	if !ok {
		return nil, ErrNotExist
	}
	if isDir {
		return lr.dirAt(ctx, p)
	}
	sn := t.skillAt(parent)
	if sn == nil || !sn.s.Dynamic {
		// A file outside any skill's manifest is not shown: there is
		// nothing to verify it against.
		return nil, ErrNotExist
	}
	return lr.dynamicFile(sn, p)
}

// dirAt answers for a directory that directory reads found at p. It
// reads p itself first: a directory holding a SKILL.md is a skill, which
// must be confirmed with skills/get before it is shown, so that lookup,
// getattr and readdir agree from the first answer on — a skill that
// cannot be confirmed never appears as a directory at all.
func (lr *dirReads) dirAt(ctx context.Context, p string) (*node, error) {
	l := lr.listing(ctx, p)
	if l == nil || !l.ok {
		return nil, unread(ctx)
	}
	t := lr.cat.current()
	if n := t.nodes[p]; n != nil {
		return n, nil
	}
	if lr.hidden(t, p) {
		return nil, ErrNotExist
	}
	return lr.dirNode(p), nil
}

// unread is the answer for a path whose directory read did not come: the
// asker's cancellation when it gave up (a FUSE interrupt), which the kernel
// retries, rather than ENOENT, which it would keep as the name's absence.
func unread(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return ErrNotExist
}

func (lr *dirReads) dirNode(p string) *node {
	return &node{path: p, ino: inoFor(lr.label, p, true), mtime: stampOf(lr.started)}
}

func (lr *dirReads) dynamicFile(sn *skillNode, p string) (*node, error) {
	u, err := verify.URIFromPath(p)
	if err != nil {
		return nil, ErrNotExist
	}
	f := &fileNode{f: &verify.File{URI: u, Resource: &skill.Resource{URI: u.String()}}, owners: []*skillNode{sn}, dynamic: true}
	if u.String() == sn.uri() {
		f.entryOf = []*skillNode{sn}
		f.f.Resource.URI = sn.s.Entry.URI // the server's own spelling
	}
	f.setVersion()
	return &node{path: p, ino: inoFor(lr.label, p, false), mtime: stampOf(lr.started), file: f}, nil
}

// children returns the children directory reads add under p (sorted),
// with whether each is a directory.
func (lr *dirReads) children(ctx context.Context, t *tree, p string) map[string]bool {
	if p == "" || !lr.readable(t, p) {
		return nil
	}
	l := lr.listing(ctx, p)
	if l == nil || !l.ok {
		return nil
	}
	t = lr.cat.current()
	sn := t.skillAt(p)
	out := map[string]bool{}
	for name, isDir := range l.children {
		if lr.hidden(t, joinPath(p, name)) {
			continue
		}
		if isDir || (sn != nil && sn.s.Dynamic) {
			out[name] = isDir
		}
	}
	return out
}

// hidden reports whether a directory directory reads found is a skill
// skillfs rejected (from the listing, or when skills/get could not confirm
// it): it stays out of the tree rather than show up empty.
func (lr *dirReads) hidden(t *tree, p string) bool {
	if t.rejectedDirs[p] || t.heldAt(p) {
		return true
	}
	lr.mu.Lock()
	defer lr.mu.Unlock()
	return lr.unconfirmed[p]
}

// listing returns the directory read of p, from the cache or the server;
// nil when the server could not be asked or the asker gave up (unread). A
// listing that holds a SKILL.md the tree does not is an unlisted skill: it
// is confirmed (or its refusal waited for) before the listing is used,
// whichever reader got here first.
func (lr *dirReads) listing(ctx context.Context, p string) *dirListing {
	l := lr.read(ctx, p)
	if l == nil || !l.ok {
		return l
	}
	if isDir, ok := l.children["SKILL.md"]; ok && !isDir {
		if t := lr.cat.current(); (t.nodes[p] == nil || t.nodes[p].skill == nil) && !t.pendingDirs[p] {
			if u, err := verify.URIFromPath(p); err == nil {
				if sm, err := u.Child("SKILL.md"); err == nil {
					lr.confirm(ctx, sm.String())
				}
			}
		}
	}
	if ctx.Err() != nil {
		// The asker gave up, perhaps while a skills/get it waited for
		// was in flight: what the listing means is not known yet.
		return nil
	}
	return l
}

// forget drops every directory read taken so far, and any in flight
// (read does not keep those): a new listing has come from the server.
func (lr *dirReads) forget() {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	lr.gen++
	clear(lr.listings)
}

// read returns the directory read of p, from the cache or the server.
func (lr *dirReads) read(ctx context.Context, p string) *dirListing {
	lr.mu.Lock()
	l := lr.listings[p]
	gen := lr.gen
	lr.mu.Unlock()
	if l != nil && lr.now().Sub(l.at) < dirReadTTL {
		return l
	}
	u, err := verify.URIFromPath(p)
	if err != nil {
		return nil
	}
	kids, err := lr.res.ReadDir(ctx, u)
	switch {
	case errors.Is(err, resolver.ErrNotServed):
		l = &dirListing{at: lr.now()}
	case err != nil:
		if !errors.Is(err, context.Canceled) {
			lr.log.Warn("directory read failed", "op", "readdir", "path", joinPath(lr.label, p), "err", err)
		}
		return nil
	default:
		l = &dirListing{at: lr.now(), ok: true, children: map[string]bool{}}
		for _, k := range kids {
			l.children[k.URI.Name()] = k.Dir
		}
	}
	lr.mu.Lock()
	if lr.gen == gen {
		lr.listings[p] = l
	}
	lr.mu.Unlock()
	return l
}

// confirm asks for an unlisted skill with skills/get and, when the entry
// passes, holds it like a listed one. A reader that asks while the call
// is in flight waits for its outcome: answering at once would show the
// directory a moment before a refusal hides it (a stat that said ENOENT,
// then an ls that still listed the name).
func (lr *dirReads) confirm(ctx context.Context, uri string) {
	lr.confirming.do(ctx, uri, func(ctx context.Context) ([]byte, error) {
		lr.confirmNow(ctx, uri)
		return nil, nil
	})
}

// confirmNow is confirm's one call. The answer is kept for every reader,
// and the throttle holds the next ask back for confirmRetry; the call runs
// detached from the asker's cancellation (flight): a reader that gave up
// (a FUSE interrupt, which a Go program's preemption signal sends while it
// waits) must not cancel it, or the skill stays hidden until then. The
// call's own timeout bounds it.
func (lr *dirReads) confirmNow(ctx context.Context, uri string) {
	if !lr.confirmed.due(uri, lr.now(), confirmRetry) {
		return
	}
	s, err := lr.res.GetSkill(ctx, uri)
	if err == nil {
		err = lr.cat.confirm(s)
	}
	if err != nil {
		lr.log.Warn("unlisted skill not confirmed", "op", "get", "uri", uri, "err", err)
		if u, perr := verify.ParseURI(uri); perr == nil && !errors.Is(err, resolver.ErrOffline) && !errors.Is(err, context.Canceled) {
			if d, ok := u.Parent(); ok {
				lr.mu.Lock()
				was := lr.unconfirmed[d.Path()]
				lr.unconfirmed[d.Path()] = true
				lr.mu.Unlock()
				if !was {
					// The kernel may already know the directory.
					lr.cat.onChange(Change{Dirs: []string{parentOf(d.Path())}, Removed: []string{d.Path()}})
				}
			}
		}
		return
	}
	lr.log.Info("unlisted skill confirmed with skills/get", "op", "get", "uri", uri)
}
