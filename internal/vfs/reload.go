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
	p, err := planReload(c, c.set.Load(), cfg)
	if err != nil {
		return Reload{}, err
	}
	r := p.r
	if r.Empty() {
		return r, nil
	}
	// The old supervisors stop before the new ones start, so that an
	// origin whose change kept its identity (a limit, say) never has two
	// sessions writing its cache directory.
	stopAndWait(p.stop)
	for _, o := range p.start {
		o.arm(c.runCtx)
	}
	c.set.Store(p.next)
	for _, o := range p.start {
		o.launch(&c.wg)
	}
	if c.stopped.Load() {
		// Stop ran meanwhile and may have missed the origins started here
		// (it stops those of the set it saw): stop them, and keep the
		// set, which no longer serves anything new.
		for _, o := range p.start {
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

// A reloadPlan is what Apply is to do: the set to serve next, what
// changed, and the origins to stop and to start.
type reloadPlan struct {
	next  *branchSet
	r     Reload
	stop  []*branch
	start []*branch
}

// planReload compares cfg's origins with old's (the set in force: Apply holds
// reloadMu) and opens a cache for each new or changed one; it starts and
// stops nothing, so an error changes nothing.
func planReload(c *Core, old *branchSet, cfg *config.Config) (reloadPlan, error) {
	p := reloadPlan{next: &branchSet{byLabel: map[string]*branch{}}}
	for _, oc := range cfg.Origins {
		if oc.Label == MetaDir {
			return reloadPlan{}, fmt.Errorf("origin label %q is reserved", oc.Label)
		}
		if _, dup := p.next.byLabel[oc.Label]; dup {
			return reloadPlan{}, fmt.Errorf("origin label %q appears twice", oc.Label)
		}
		prev, had := old.byLabel[oc.Label]
		if had && reflect.DeepEqual(prev.cfg, oc) {
			p.next.byLabel[oc.Label] = prev
			p.next.labels = append(p.next.labels, oc.Label)
			continue
		}
		so, err := c.opts.Store.Bucket(oc.ID())
		if err != nil {
			return reloadPlan{}, fmt.Errorf("store for %s: %w", oc.Label, err)
		}
		o := newBranch(c, oc, so)
		p.next.byLabel[oc.Label] = o
		p.next.labels = append(p.next.labels, oc.Label)
		p.start = append(p.start, o)
		if had {
			p.r.Changed = append(p.r.Changed, oc.Label)
			p.stop = append(p.stop, prev)
		} else {
			p.r.Added = append(p.r.Added, oc.Label)
		}
	}
	for _, label := range old.labels {
		if _, ok := p.next.byLabel[label]; !ok {
			p.r.Removed = append(p.r.Removed, label)
			p.stop = append(p.stop, old.byLabel[label])
		}
	}
	slices.Sort(p.next.labels)
	slices.Sort(p.r.Added)
	slices.Sort(p.r.Removed)
	slices.Sort(p.r.Changed)
	return p, nil
}

// stopAndWait tells every origin of stop to stop first, so they end
// together, then waits for each supervisor, at most stopWait each.
func stopAndWait(stop []*branch) {
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
}
