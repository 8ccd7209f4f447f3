package vfs

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/skillfs/skillfs/internal/config"
)

// A Reload says what Apply changed, by origin label.
type Reload struct {
	Added   []string
	Removed []string
	// Changed origins kept their label but not their entry (command, args,
	// env, URL, headers, limits, approval…): the old session was stopped
	// and a new one started.
	Changed []string
}

// Empty reports whether the reload changed nothing.
func (r Reload) Empty() bool { return len(r.Added)+len(r.Removed)+len(r.Changed) == 0 }

func (r Reload) String() string {
	if r.Empty() {
		return "no server changed"
	}
	s := ""
	for _, part := range []struct {
		what   string
		labels []string
	}{{"added", r.Added}, {"removed", r.Removed}, {"changed", r.Changed}} {
		if len(part.labels) == 0 {
			continue
		}
		if s != "" {
			s += "; "
		}
		s += fmt.Sprintf("%s %v", part.what, part.labels)
	}
	return s
}

var errStopping = errors.New("apply: the mount is stopping")

// NoteReload records how a reload of the config ended: err nil clears a
// failure shown in status.json, any other is shown there until then.
func (c *Core) NoteReload(err error) {
	if err == nil {
		c.reload.Store(nil)
		return
	}
	c.reload.Store(&ReloadStatus{At: c.now(), Error: err.Error()})
}

// stopWait bounds how long Apply waits for a stopped origin's supervisor:
// its calls end with its context, so this is only a guard.
const stopWait = 10 * time.Second

// Apply makes the mount serve cfg's origins (SIGHUP re-reads the config): an
// origin whose entry is unchanged keeps its session, its tree and its open
// files; a removed origin leaves the tree; a changed one is stopped and
// started again from its new entry. Nothing changes when an origin's cache
// cannot be opened. Start must have been called.
//
// Files open under a removed or changed origin keep their version: a read of
// bytes already held is served, a read that needs the server fails with EIO.
func (c *Core) Apply(cfg *config.Config) (Reload, error) {
	c.reloadMu.Lock()
	defer c.reloadMu.Unlock()
	if c.runCtx == nil {
		return Reload{}, fmt.Errorf("apply: the mount has not started")
	}
	if c.stopped.Load() {
		return Reload{}, errStopping
	}
	old := c.set.Load()
	next := &branchSet{byLabel: map[string]*branch{}}
	var r Reload
	var stop, start []*branch
	for _, oc := range cfg.Origins {
		if oc.Label == MetaDir {
			return Reload{}, fmt.Errorf("origin label %q is reserved", oc.Label)
		}
		if _, dup := next.byLabel[oc.Label]; dup {
			return Reload{}, fmt.Errorf("origin label %q appears twice", oc.Label)
		}
		prev, had := old.byLabel[oc.Label]
		if had && reflect.DeepEqual(prev.cfg, oc) {
			next.byLabel[oc.Label] = prev
			next.labels = append(next.labels, oc.Label)
			continue
		}
		so, err := c.opts.Store.Bucket(oc.ID())
		if err != nil {
			return Reload{}, fmt.Errorf("store for %s: %w", oc.Label, err)
		}
		o := newBranch(c, oc, so)
		next.byLabel[oc.Label] = o
		next.labels = append(next.labels, oc.Label)
		start = append(start, o)
		if had {
			r.Changed = append(r.Changed, oc.Label)
			stop = append(stop, prev)
		} else {
			r.Added = append(r.Added, oc.Label)
		}
	}
	for _, label := range old.labels {
		if _, ok := next.byLabel[label]; !ok {
			r.Removed = append(r.Removed, label)
			stop = append(stop, old.byLabel[label])
		}
	}
	slices.Sort(next.labels)
	slices.Sort(r.Added)
	slices.Sort(r.Removed)
	slices.Sort(r.Changed)
	if r.Empty() {
		return r, nil
	}
	// The old supervisors stop before the new ones start, so that an
	// origin whose change kept its identity (a limit, say) never has two
	// sessions writing its cache directory.
	for _, o := range stop {
		o.stop()
	}
	for _, o := range stop {
		select {
		case <-o.done:
		case <-time.After(stopWait):
			o.log.Warn("stopped server's session did not end in time; going on", "op", "reload")
		}
	}
	for _, o := range start {
		o.arm(c.runCtx)
	}
	c.set.Store(next)
	for _, o := range start {
		o.launch(&c.wg)
	}
	if c.stopped.Load() {
		// Stop ran meanwhile and may have missed the origins started here
		// (it stops those of the set it saw): stop them, and keep the
		// set, which no longer serves anything new.
		for _, o := range start {
			o.stop()
		}
		return Reload{}, errStopping
	}
	// The kernel forgets the names it held for every origin that went,
	// came or changed, and lists the root again.
	var names []string
	names = append(names, r.Added...)
	names = append(names, r.Removed...)
	names = append(names, r.Changed...)
	c.publish(Change{Files: names, Dirs: []string{""}})
	return r, nil
}
