package vfs

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillfs/skillfs/config"
	"github.com/skillfs/skillfs/resolver"
	"github.com/skillfs/skillfs/store"
	"github.com/skillfs/skillfs/verify"
)

// MetaDir is the name of the generated directory at the mount root.
const MetaDir = ".skillfs"

// Options configure an FS.
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
}

// A Change names what a catalog swap changed under one origin.
type Change struct {
	// Files changed content or metadata, or went away.
	Files []string
	// Dirs gained or lost children.
	Dirs []string
}

// FS is the mount's core: the origins, their trees and the read path.
type FS struct {
	opts       Options
	log        *slog.Logger
	now        func() time.Time
	staleRetry time.Duration
	origins    map[string]*origin
	labels     []string
	started    time.Time

	subMu sync.Mutex
	subs  map[int]func(Change)
	subN  int

	metaMu sync.Mutex
	meta   map[string]rendering // generated files, by path
	wg     sync.WaitGroup
}

type origin struct {
	fs     *FS
	cfg    config.Origin
	id     string
	log    *slog.Logger
	res    *resolver.Origin
	store  *store.Origin
	tree   atomic.Pointer[tree]
	ready  chan struct{}
	readyO sync.Once
	flight flight
	gate   *gate

	mu          sync.Mutex
	live        map[string]*liveListing           // path → last directory read
	extra       map[string]*verify.Skill          // unlisted skills confirmed with skills/get
	confirmedAt map[string]time.Time              // uri → last skills/get for an unlisted skill
	unconfirmed map[string]bool                   // skill directories skills/get did not confirm
	failures    map[string]failure                // path → the last failed read
	gotAt       map[string]time.Time              // skill uri → last staleness skills/get
	flags       map[string][]string               // fileVersion.key of a SKILL.md → flags found in its content
	lengths     map[string]int64                  // digest → verified length, for entries without size
	verified    map[string]struct{}               // fileVersion.key → passed every check in this run
	dynGen      map[string]uint64                 // dynamic file path → fetches so far
	dynHeld     map[string]int64                  // dynamic skill uri → bytes its live Files hold
	swapMu      sync.Mutex                        // serialises tree swaps
	catSaved    atomic.Pointer[[sha256.Size]byte] // hash of the last saved catalog, to skip rewrites
}

type failure struct {
	reason string
	detail string
	at     time.Time
}

// New builds the FS for a config. Nothing connects until Start.
func New(opts Options) (*FS, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	f := &FS{opts: opts, log: log, now: now, staleRetry: cmp.Or(opts.StaleRetry, DefaultStaleRetry), origins: map[string]*origin{}, started: now()}
	for _, oc := range opts.Config.Origins {
		if oc.Label == MetaDir {
			return nil, fmt.Errorf("origin label %q is reserved", oc.Label)
		}
		so, err := opts.Store.Origin(oc.ID())
		if err != nil {
			return nil, fmt.Errorf("store for %s: %w", oc.Label, err)
		}
		o := &origin{
			fs:          f,
			cfg:         oc,
			id:          oc.ID(),
			log:         log.With("origin", oc.Label),
			store:       so,
			ready:       make(chan struct{}),
			gate:        newGate(),
			failures:    map[string]failure{},
			live:        map[string]*liveListing{},
			extra:       map[string]*verify.Skill{},
			confirmedAt: map[string]time.Time{},
			unconfirmed: map[string]bool{},
			gotAt:       map[string]time.Time{},
			flags:       map[string][]string{},
			lengths:     map[string]int64{},
			verified:    map[string]struct{}{},
			dynGen:      map[string]uint64{},
			dynHeld:     map[string]int64{},
		}
		o.res = resolver.New(resolver.Options{
			Origin:    oc,
			Dial:      opts.Dial[oc.Label],
			OnCatalog: o.onCatalog,
			Logger:    log,
			Version:   opts.Version,
		})
		o.tree.Store(buildTree(oc.Label, &resolver.Catalog{}, "none", nil, f.started, nil))
		f.origins[oc.Label] = o
		f.labels = append(f.labels, oc.Label)
	}
	slices.Sort(f.labels)
	return f, nil
}

// Start loads each origin's saved catalog and starts its supervisor. The
// supervisors stop when ctx ends; Wait waits for them.
func (f *FS) Start(ctx context.Context) {
	for _, label := range f.labels {
		o := f.origins[label]
		o.loadFlags()
		o.loadSaved()
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			o.res.Run(ctx)
		}()
	}
}

// Subscribe has fn told, from then on, which mount-relative paths every
// catalog swap changed, so that a mount can invalidate the kernel's caches.
// fn is called without locks held and must not block. The returned func
// ends the subscription.
func (f *FS) Subscribe(fn func(Change)) (cancel func()) {
	f.subMu.Lock()
	defer f.subMu.Unlock()
	if f.subs == nil {
		f.subs = map[int]func(Change){}
	}
	f.subN++
	id := f.subN
	f.subs[id] = fn
	return func() {
		f.subMu.Lock()
		delete(f.subs, id)
		f.subMu.Unlock()
	}
}

func (f *FS) publish(c Change) {
	f.subMu.Lock()
	fns := slices.Collect(maps.Values(f.subs))
	f.subMu.Unlock()
	for _, fn := range fns {
		fn(c)
	}
}

// Wait waits for the supervisors started by Start to stop.
func (f *FS) Wait() { f.wg.Wait() }

// Ready waits until every origin has a catalog (live or saved) or has
// failed its first connection, or until ctx ends. It reports the labels
// still waiting.
func (f *FS) Ready(ctx context.Context) []string {
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		var waiting []string
		for _, label := range f.labels {
			o := f.origins[label]
			select {
			case <-o.ready:
				continue
			default:
			}
			switch o.res.Status().State {
			case resolver.StateOffline, resolver.StateNoSkills:
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
		case <-tick.C:
		}
	}
}

func (o *origin) markReady() { o.readyO.Do(func() { close(o.ready) }) }

// Labels returns the origin labels in order.
func (f *FS) Labels() []string { return slices.Clone(f.labels) }

// Refresh asks every origin to enumerate again (SIGHUP).
func (f *FS) Refresh() {
	for _, o := range f.origins {
		o.res.Refresh()
	}
}

// onCatalog swaps in a live catalog.
func (o *origin) onCatalog(c *resolver.Catalog) {
	o.swap(func(*tree) (*resolver.Catalog, string) { return c, "live" })
	o.saveCatalog()
	o.markReady()
	// Decoding a large listing and saving it leave much garbage behind;
	// give it back rather than keep the daemon at that peak.
	releaseMemory()
}

// swap builds a new tree from the catalog next returns and swaps it in,
// then reports what changed.
func (o *origin) swap(next func(old *tree) (*resolver.Catalog, string)) {
	o.swapMu.Lock()
	old := o.tree.Load()
	cat, source := next(old)
	cat = o.withExtra(cat)
	o.mu.Lock()
	confirmed := map[string]bool{}
	for u := range o.extra {
		confirmed[u] = true
	}
	o.mu.Unlock()
	t := buildTree(o.cfg.Label, cat, source, old, o.fs.now(), confirmed)
	o.tree.Store(t)
	o.swapMu.Unlock()
	for _, i := range t.placement {
		r := t.rejected[i]
		o.log.Warn("skill rejected", "op", "list", "uri", r.URI, "err", r.Detail)
	}
	files, dirs := changes(old, t)
	if len(files) > 0 {
		o.forget(files)
	}
	o.changed(files, dirs)
}

// changed tells the mount which origin-relative paths changed.
func (o *origin) changed(files, dirs []string) {
	if len(files) > 0 || len(dirs) > 0 {
		o.fs.publish(Change{Files: o.mountPaths(files), Dirs: o.mountPaths(dirs)})
	}
}

// forget drops the failures recorded for paths whose entry changed.
func (o *origin) forget(paths []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, p := range paths {
		delete(o.failures, p)
	}
}

func (o *origin) mountPaths(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = joinPath(o.cfg.Label, p)
	}
	return out
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

// resolve splits a mount-relative path into its origin and the path below.
func (f *FS) resolve(p string) (*origin, string, bool) {
	label, rest, _ := strings.Cut(p, "/")
	o, ok := f.origins[label]
	return o, rest, ok
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
// may ask the server for a directory read (see live.go), never for a file.
func (f *FS) Stat(ctx context.Context, p string) (Attr, error) {
	if p == "" {
		return Attr{Kind: KindDir, Ino: 1, Mtime: f.started}, nil
	}
	if p == MetaDir || strings.HasPrefix(p, MetaDir+"/") {
		return f.statMeta(p)
	}
	o, rest, ok := f.resolve(p)
	if !ok {
		return Attr{}, ErrNotExist
	}
	n, err := o.lookup(ctx, rest)
	if err != nil {
		return Attr{}, err
	}
	return o.attr(n), nil
}

func (o *origin) attr(n *node) Attr {
	if n.isDir() {
		return Attr{Kind: KindDir, Ino: n.ino, Mtime: n.mtime}
	}
	a := Attr{Kind: KindFile, Ino: n.ino, Mtime: n.mtime}
	switch r := n.file.f.Resource; {
	case r.HasSize:
		a.Size = r.Size
	default:
		o.mu.Lock()
		l, ok := o.lengths[string(r.Digest)]
		o.mu.Unlock()
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
func (f *FS) ReadDir(ctx context.Context, p string) ([]DirEntry, error) {
	if p == "" {
		out := make([]DirEntry, 0, len(f.labels)+1)
		out = append(out, DirEntry{Name: MetaDir, Kind: KindDir, Ino: metaIno(MetaDir)})
		for _, label := range f.labels {
			o := f.origins[label]
			out = append(out, DirEntry{Name: label, Kind: KindDir, Ino: o.tree.Load().nodes[""].ino})
		}
		return out, nil
	}
	if p == MetaDir {
		return f.readMetaDir(), nil
	}
	o, rest, ok := f.resolve(p)
	if !ok {
		return nil, ErrNotExist
	}
	n, err := o.lookup(ctx, rest)
	if err != nil {
		return nil, err
	}
	if !n.isDir() {
		return nil, ErrNotDir
	}
	live := o.liveChildren(ctx, o.tree.Load(), rest)
	t := o.tree.Load()
	if cur := t.nodes[rest]; cur != nil {
		n = cur // a directory read may have confirmed a skill here
	}
	out := make([]DirEntry, 0, len(n.children)+len(live))
	for _, name := range n.children {
		c := t.nodes[joinPath(rest, name)]
		k := KindFile
		if c.isDir() {
			k = KindDir
		}
		delete(live, name)
		out = append(out, DirEntry{Name: name, Kind: k, Ino: c.ino})
	}
	for _, name := range slices.Sorted(maps.Keys(live)) {
		k := KindFile
		if live[name] {
			k = KindDir
		}
		out = append(out, DirEntry{Name: name, Kind: k, Ino: inoFor(o.cfg.Label, joinPath(rest, name), live[name])})
	}
	return out, nil
}

// ErrNotDir is returned when a directory operation names a file.
var ErrNotDir = errors.New("not a directory")

// DirCacheable reports whether the kernel may keep a directory's listing
// until it is told the directory changed: true unless directory reads can
// change it between catalog swaps.
func (f *FS) DirCacheable(p string) bool {
	if p == "" || p == MetaDir {
		return true
	}
	o, rest, ok := f.resolve(p)
	if !ok {
		return false
	}
	return rest == "" || !o.liveable(o.tree.Load(), rest)
}
