package vfs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/control/wire"
	"github.com/skillfs/skillfs/internal/store"
	"github.com/skillfs/skillfs/resolver"
)

// MetaDir is the name of the generated directory at the mount root.
const MetaDir = wire.MetaDir

// Options configure a Core.
type Options struct {
	Config *config.Config
	Store  *store.Store
	// Dial replaces the transport of the origins it names (the demo).
	Dial    map[string]func(ctx context.Context) (io.ReadWriteCloser, error)
	Logger  *slog.Logger
	Version string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// StaleRetry bounds how often a failed read asks for a fresh entry of
	// one skill with skills/get; 0 means DefaultStaleRetry.
	StaleRetry time.Duration
	// RelistGap is resolver.Options.RelistGap of every origin; 0 means
	// resolver.DefaultRelistGap.
	RelistGap time.Duration
	// MountPoint is the mount's absolute path, for the locations of the
	// <available_skills> block in index.md; "" leaves them mount-relative.
	MountPoint string
}

// A Change names what a catalog swap changed under one origin, as
// mount-relative paths: enough for a mount to invalidate the kernel's
// caches without asking the tree again.
type Change struct {
	// Files changed content or metadata, or went away.
	Files []string
	// Dirs changed attributes (a directory's time is its newest file's) or
	// gained or lost children.
	Dirs []string
	// Added are the entries that appeared in their directory, Removed those
	// that left it (a path whose kind changed is in both): the kernel may
	// hold a negative entry for the one and a positive entry for the other.
	Added, Removed []string
	// done, when set, is called by Done.
	done func()
}

// Done tells the feed that the subscriber has acted on c (the kernel has
// been told). A subscriber calls it once for every Change it is given, or
// one who waits for the feed to settle waits out its bound.
func (c Change) Done() {
	if c.done != nil {
		c.done()
	}
}

// Core is the mount's surface: what the kernel (through package fs) and
// the generated files need — Lookup, Stat, ReadDir, ReadFile, Xattrs, the
// feed of Changes — and the mount's life (Start, Ready, Apply, Stop). Every
// path goes through one route to the origin's branch or the generated
// files. What the user's commands act on is its Consent.
type Core struct {
	opts       Options
	log        *slog.Logger
	now        func() time.Time
	staleRetry time.Duration
	*branches
	started time.Time
	// runCtx is Start's context, for origins a reload adds later.
	runCtx   context.Context
	reloadMu sync.Mutex
	// stopped is set by Stop: a reload still under way stops what it
	// started instead of serving it (reload.go).
	stopped atomic.Bool
	// reload is the last reload's failure, nil once one succeeds
	// (NoteReload).
	reload atomic.Pointer[ReloadStatus]

	feed
	// readied wakes Ready when an origin becomes ready.
	readied chan struct{}

	// gen is the generated files under .skillfs (meta.go).
	gen     *generated
	consent *Consent
	// mem is the mount's memory policy, shared by its origins.
	mem *memory
	wg  sync.WaitGroup
}

// New builds the Core for a config. Nothing connects until Start.
func New(opts Options) (*Core, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	gen := &generated{}
	f := &Core{branches: &branches{}, mem: newMemory(), gen: gen, opts: opts, log: log, now: now, staleRetry: cmp.Or(opts.StaleRetry, DefaultStaleRetry), started: now(), readied: make(chan struct{}, 1)}
	gen.f = f
	f.consent = &Consent{branches: f.branches, gen: gen, feed: &f.feed}
	set := &branchSet{byLabel: map[string]*branch{}}
	for _, oc := range opts.Config.Origins {
		if oc.Label == MetaDir {
			return nil, fmt.Errorf("origin label %q is reserved", oc.Label)
		}
		so, err := opts.Store.Bucket(oc.ID())
		if err != nil {
			return nil, fmt.Errorf("store for %s: %w", oc.Label, err)
		}
		set.byLabel[oc.Label] = newBranch(f, oc, so)
		set.labels = append(set.labels, oc.Label)
	}
	slices.Sort(set.labels)
	f.set.Store(set)
	return f, nil
}

// Consent is the mount as the control endpoint serves it to the user's
// commands.
func (c *Core) Consent() *Consent { return c.consent }

// branches is the origins the mount serves, shared by the mount and its
// Consent; Apply swaps in another set.
type branches struct {
	set atomic.Pointer[branchSet]
}

// A branchSet is the origins of one config, immutable once stored: a
// reload (Apply) stores a new one.
type branchSet struct {
	byLabel map[string]*branch
	labels  []string // sorted
}

// all yields every origin in label order, from one set.
func (b *branches) all() iter.Seq2[string, *branch] {
	set := b.set.Load()
	return func(yield func(string, *branch) bool) {
		for _, label := range set.labels {
			if !yield(label, set.byLabel[label]) {
				return
			}
		}
	}
}

// branch returns the origin with a label.
func (b *branches) branch(label string) (*branch, bool) {
	o, ok := b.set.Load().byLabel[label]
	return o, ok
}

// Start loads each origin's saved catalog and starts its supervisor. The
// supervisors stop when ctx ends (or at Stop); wait, which Start returns,
// waits for them, and for those a reload starts later, to have stopped and
// saved what they hold.
func (c *Core) Start(ctx context.Context) (wait func()) {
	c.reloadMu.Lock()
	defer c.reloadMu.Unlock()
	c.runCtx = ctx
	for _, o := range c.all() {
		o.arm(ctx)
	}
	for _, o := range c.all() {
		o.launch(&c.wg)
	}
	return c.wg.Wait
}

// Stop stops every origin's supervisor and fails the reads waiting on a
// server (ReasonStopped), so that an unmount need not wait for a stalled
// server's call timeout. Bytes already held are still served.
func (c *Core) Stop() {
	c.stopped.Store(true)
	for _, o := range c.all() {
		if o.stop != nil {
			o.stop()
		}
	}
}

// arm gives an origin the context it lives in (a child of ctx), before
// any read can reach it.
func (o *branch) arm(ctx context.Context) {
	o.life, o.stop = context.WithCancel(ctx)
	o.rd.life = o.life
	o.done = make(chan struct{})
}

// launch loads an armed origin's saved state and starts its supervisor,
// counted in wg, which runs until its context ends or the origin is
// stopped.
func (o *branch) launch(wg *sync.WaitGroup) {
	o.rd.flags.load()
	o.approvals.load()
	if o.cat.loadSaved() {
		o.markReady()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(o.done)
		o.res.Run(o.life)
		o.keep.wait()     // nothing kept is stored after this
		o.rd.flags.stop() // a save still waiting for its delay
		o.cat.stop()
		o.approvals.stop()
	}()
}

// Subscribe has fn told, from then on, which mount-relative paths every
// catalog swap changed, so that a mount can invalidate the kernel's caches.
// fn is called without locks held and must not block; it calls the
// Change's Done once it has acted on it (settle waits for that). The
// returned func ends the subscription.
func (f *feed) Subscribe(fn func(Change)) (cancel func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.subs == nil {
		f.subs = map[int]func(Change){}
	}
	f.n++
	id := f.n
	f.subs[id] = fn
	return func() {
		f.mu.Lock()
		delete(f.subs, id)
		f.mu.Unlock()
	}
}

// A feed is the stream of Change values catalog swaps produce, and who
// listens to it.
type feed struct {
	mu   sync.Mutex
	subs map[int]func(Change)
	n    int
}

// settleWait bounds how long settle waits for the subscribers.
const settleWait = 5 * time.Second

// settle waits until every subscriber has acted on the Changes published
// before it (it publishes an empty Change and waits for its Done), or for
// settleWait. The user's commands settle before they answer, so that a
// skill revoked is gone, and one approved is there, for the next lookup
// the kernel makes, whatever it held. It reports whether they all did.
// A subscriber that acts on its Changes in order (fs.Mount does, until its
// queue of 64 overflows) has then acted on every earlier one.
func (f *feed) settle() bool {
	f.mu.Lock()
	fns := slices.Collect(maps.Values(f.subs))
	f.mu.Unlock()
	if len(fns) == 0 {
		return true
	}
	var left atomic.Int64
	left.Store(int64(len(fns)))
	all := make(chan struct{})
	for _, fn := range fns {
		fn(Change{done: sync.OnceFunc(func() {
			if left.Add(-1) == 0 {
				close(all)
			}
		})})
	}
	t := time.NewTimer(settleWait)
	defer t.Stop()
	select {
	case <-all:
		return true
	case <-t.C:
		return false
	}
}

func (f *feed) publish(c Change) {
	f.mu.Lock()
	fns := slices.Collect(maps.Values(f.subs))
	f.mu.Unlock()
	for _, fn := range fns {
		fn(c)
	}
}

// Ready waits until every origin has a catalog (live or saved) or has
// failed its first connection, or until ctx ends. It reports the labels
// still waiting.
func (c *Core) Ready(ctx context.Context) []string {
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		var waiting []string
		for label, o := range c.all() {
			select {
			case <-o.ready:
				continue
			default:
			}
			switch o.res.Status().State {
			case resolver.StateOffline, resolver.StateFailed, resolver.StateGaveUp, resolver.StateNoSkills:
				o.markReady()
				continue
			}
			waiting = append(waiting, label)
		}
		if len(waiting) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return waiting
		case <-c.readied:
		case <-tick.C:
		}
	}
}

// labels returns the origin labels in order.
func (b *branches) labels() []string { return slices.Clone(b.set.Load().labels) }

// Refresh asks every origin to enumerate again (SIGHUP); an origin that gave
// up starting tries again.
func (c *Core) Refresh() {
	for _, o := range c.all() {
		o.res.Refresh()
	}
}

func joinPath(a, b string) string {
	if b == "" {
		return a
	}
	if a == "" {
		return b
	}
	return a + "/" + b
}

// A place is where a mount-relative path leads: the mount's root, the
// generated files under .skillfs (gen, meta.go), or a path under the
// directory of an origin (its branch).
type place struct {
	kind  placeKind
	label string  // atOrigin and atNowhere: the path's first name
	rest  string  // atOrigin and atNowhere: the path below it
	o     *branch // atOrigin: the origin with that label
}

type placeKind uint8

const (
	atNowhere placeKind = iota // under a label the mount does not serve
	atRoot
	atMeta
	atOrigin
)

// route is where every operation on a mount-relative path turns to the
// part of the mount that serves it.
func (b *branches) route(p string) place {
	at := locate(p)
	if at.kind == atNowhere {
		at.o, _ = b.branch(at.label)
		if at.o != nil {
			at.kind = atOrigin
		}
	}
	return at
}

// locate is route without the origins: what the path's shape alone says
// (an origin's path comes back atNowhere, with its label and rest).
func locate(p string) place {
	switch {
	case p == "":
		return place{kind: atRoot}
	case p == MetaDir || strings.HasPrefix(p, MetaDir+"/"):
		return place{kind: atMeta}
	}
	label, rest, _ := strings.Cut(p, "/")
	return place{kind: atNowhere, label: label, rest: rest}
}

// Kind is the type of a node.
type Kind uint8

const (
	KindDir Kind = iota
	KindFile
)

// Attr is what Stat reports.
type Attr struct {
	Kind  Kind
	Ino   uint64
	Size  int64
	Mtime time.Time
	// Volatile: the size may change without a catalog swap (a file whose
	// size the server did not declare, a generated file), so the kernel must
	// not cache the attributes.
	Volatile bool
	// Dynamic: a file of a dynamic skill, whose every open should look it
	// up again to get a fetch of its own (see File).
	Dynamic bool
}

// A DirEntry is one child in ReadDir.
type DirEntry struct {
	Name string
	Kind Kind
	Ino  uint64
}

// ErrNotExist is returned for paths the tree does not have.
var ErrNotExist = errors.New("no such file or directory")

// Stat describes the node at a mount-relative path ("" is the root). It
// may ask the server for a directory read (dirread.go), never for a file.
func (c *Core) Stat(ctx context.Context, p string) (Attr, error) {
	switch at := c.route(p); at.kind {
	case atRoot:
		return Attr{Kind: KindDir, Ino: 1, Mtime: c.started}, nil
	case atMeta:
		return c.gen.statMeta(p)
	case atOrigin:
		n, err := at.o.lookup(ctx, at.rest)
		if err != nil {
			return Attr{}, err
		}
		return at.o.attr(n), nil
	}
	return Attr{}, ErrNotExist
}

func (o *branch) attr(n *node) Attr {
	if n.isDir() {
		return Attr{Kind: KindDir, Ino: n.ino, Mtime: n.mtime.Time()}
	}
	a := Attr{Kind: KindFile, Ino: n.ino, Mtime: n.mtime.Time()}
	switch r := n.file.f.Resource; {
	case r.HasSize:
		a.Size = r.Size
	default:
		l, ok := o.rd.learned.length(r.Digest)
		if ok && r.Digest != "" {
			a.Size = l
		} else {
			// The older revision of the SEP declares no size (and dynamic
			// skills have none): until the file has been read and verified
			// its length is unknown. It is shown as the per-file cap, an
			// upper bound, so that the kernel asks for the bytes at all;
			// the first read's short answer tells it the real end.
			a.Size = o.cfg.Limits.MaxFileSize
			a.Volatile = true
		}
	}
	return a
}

// ReadDir lists the directory at a mount-relative path.
func (c *Core) ReadDir(ctx context.Context, p string) ([]DirEntry, error) {
	switch at := c.route(p); at.kind {
	case atRoot:
		set := c.set.Load()
		out := make([]DirEntry, 0, len(set.labels)+1)
		out = append(out, DirEntry{Name: MetaDir, Kind: KindDir, Ino: metaIno(MetaDir)})
		for _, label := range set.labels {
			o := set.byLabel[label]
			out = append(out, DirEntry{Name: label, Kind: KindDir, Ino: o.cat.current().nodes[""].ino})
		}
		return out, nil
	case atMeta:
		return c.gen.readMetaDir(p)
	case atOrigin:
		return at.o.readDir(ctx, at.rest)
	}
	return nil, ErrNotExist
}

// readDir lists the directory at an origin-relative path: its children in
// the tree, then what a directory read found there.
func (o *branch) readDir(ctx context.Context, rest string) ([]DirEntry, error) {
	n, err := o.lookup(ctx, rest)
	if err != nil {
		return nil, err
	}
	if !n.isDir() {
		return nil, ErrNotDir
	}
	found := o.dirs.children(ctx, o.cat.current(), rest)
	if err := ctx.Err(); err != nil {
		return nil, err // a listing without what the directory read would add
	}
	t := o.cat.current()
	if cur := t.nodes[rest]; cur != nil {
		n = cur // a directory read may have confirmed a skill here
	}
	out := make([]DirEntry, 0, len(n.children)+len(found))
	for _, name := range n.children {
		c := t.nodes[joinPath(rest, name)]
		k := KindFile
		if c.isDir() {
			k = KindDir
		}
		delete(found, name)
		out = append(out, DirEntry{Name: name, Kind: k, Ino: c.ino})
	}
	for _, name := range slices.Sorted(maps.Keys(found)) {
		k := KindFile
		if found[name] {
			k = KindDir
		}
		out = append(out, DirEntry{Name: name, Kind: k, Ino: inoFor(o.cfg.Label, joinPath(rest, name), found[name])})
	}
	return out, nil
}

// DirIno is the inode number of the directory at a mount-relative path:
// what Stat reports for it when it exists. A directory's inode number
// depends on its path alone, so listings can name "." and ".." without a
// lookup, and without the mount.
func DirIno(p string) uint64 {
	at := locate(p)
	switch at.kind {
	case atRoot:
		return 1
	case atMeta:
		return metaIno(p)
	}
	return inoFor(at.label, at.rest, true)
}

// ErrNotDir is returned when a directory operation names a file.
var ErrNotDir = errors.New("not a directory")

// DirCacheable reports whether the kernel may keep a directory's listing
// until it is told the directory changed: true unless directory reads can
// change it between catalog swaps.
func (c *Core) DirCacheable(p string) bool {
	switch at := c.route(p); at.kind {
	case atRoot:
		return true
	case atMeta:
		return p == MetaDir
	case atOrigin:
		return at.rest == "" || !at.o.dirs.readable(at.o.cat.current(), at.rest)
	}
	return false
}
