package vfs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/internal/store"
	"github.com/skillfs/skillfs/resolver"
	"github.com/skillfs/skillfs/verify"
)

// savedCatalog is the on-disk form of an origin's last held catalog. The
// entries are stored as the server sent them and checked again on load, so
// a stored catalog an agent tampered with cannot pass as verified: it can
// only name digests, and bytes are served only when they hash to them.
//
// A listing the server marked cacheScope "private" belongs to the
// credentials it was asked with: it is saved with a fingerprint of them
// (Credentials) and shown again only under the same ones.
type savedCatalog struct {
	Version     int                  `json:"version"`
	At          time.Time            `json:"at"`
	Truncated   string               `json:"truncated,omitempty"`
	CacheScope  string               `json:"cache_scope"`
	Credentials string               `json:"credentials,omitempty"`
	Entries     []skill.Entry        `json:"entries"`
	Rejected    []resolver.Rejection `json:"rejected,omitempty"`
}

// encode is catalog.json's bytes for sc, as a json.Encoder without HTML
// escaping writes them (TestSavedCatalogEncoding), written into one buffer
// of about the entries' size as received (sizeHint) plus the rest: each
// entry appends itself, where the Encoder would reflect over every entry
// and check and copy what its MarshalJSON returned. Without HTML escaping
// the saved catalog is no larger than the entries as received
// (max_list_bytes), so it fits the store's cap.
func (sc savedCatalog) encode(sizeHint int) ([]byte, error) {
	head := sc
	head.Entries, head.Rejected = nil, nil
	var buf bytes.Buffer
	buf.Grow(sizeHint + 4096)
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(head); err != nil {
		return nil, err
	}
	// head ends `"entries":null}` and a newline: the entries go in place
	// of the null.
	b, ok := bytes.CutSuffix(buf.Bytes(), []byte(`"entries":null}`+"\n"))
	if !ok {
		return nil, fmt.Errorf("the saved catalog's head does not end with its entries: %.40q", buf.Bytes())
	}
	b = append(b, `"entries":[`...)
	for i := range sc.Entries {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = sc.Entries[i].AppendJSON(b); err != nil {
			return nil, err
		}
	}
	b = append(b, ']')
	if len(sc.Rejected) > 0 {
		var rb bytes.Buffer
		renc := json.NewEncoder(&rb)
		renc.SetEscapeHTML(false)
		if err := renc.Encode(sc.Rejected); err != nil {
			return nil, err
		}
		b = append(b, `,"rejected":`...)
		b = append(b, bytes.TrimSuffix(rb.Bytes(), []byte("\n"))...)
	}
	return append(b, "}\n"...), nil
}

// Version 2 records the cache scope; a version 1 catalog, whose scope is
// unknown, is not shown.
const savedCatalogVersion = 2

// credentials names what an origin authenticates with without holding
// it: the origin's identity, which covers its env, headers and URL (keyed
// with the cache's identity key, so nothing on disk can be tested against
// a guessed secret). The store directory is already per identity; the
// saved catalog says it again so that a catalog copied elsewhere is not
// shown under other credentials.
func credentials(oc config.Origin) string { return oc.ID() }

// A catalog is one origin's held entries: the immutable tree built from
// them, the skills confirmed with skills/get that no listing carries, and
// their saved copy in the store. Every change goes through swap, which
// builds a new tree, swaps it in atomically and tells onChange which
// origin-relative paths changed. It needs neither MCP nor a kernel.
type catalog struct {
	cfg   config.Origin
	store *store.Bucket
	log   *slog.Logger
	now   func() time.Time
	mem   *memory // the mount's; its own when made alone (tests)
	// onChange learns the files and directories a swap changed. It is
	// called without locks held.
	onChange func(Change)
	// admit is the approval gate (see buildGated); nil places every skill.
	admit func(*verify.Skill) string

	tree   atomic.Pointer[tree]
	swapMu sync.Mutex // serialises swaps

	mu    sync.Mutex
	extra map[string]*verify.Skill // unlisted skills confirmed with skills/get, by uri
	// refused says why the first skill confirmed with skills/get that was
	// not held was refused: it would have passed a listing cap. Added to
	// the catalog's truncation.
	refused string

	saver *store.Saver // writes catalog.json, unless it holds the catalog already

	// times are the first times of the catalog's digests: the files'
	// mtimes.
	times *timeBook
}

func newCatalog(cfg config.Origin, st *store.Bucket, log *slog.Logger, now func() time.Time, started time.Time) *catalog {
	c := &catalog{cfg: cfg, store: st, log: log, now: now, mem: newMemory(), extra: map[string]*verify.Skill{}, onChange: func(Change) {}, times: newTimeBook(st, log)}
	c.saver = st.NewSaver(store.CatalogSidecar, store.SaverOptions{Encode: c.encode, Logger: log})
	c.tree.Store(buildTree(cfg.Label, &resolver.Catalog{}, "none", nil, started, nil))
	return c
}

// stop is the final flush of the catalog's files, when the origin's
// supervisor has ended: a save under way is written, the file times still
// waiting for their delay too, and nothing is saved after it.
func (c *catalog) stop() {
	c.times.stop()
	c.saver.Stop()
}

// current is the tree in force.
func (c *catalog) current() *tree { return c.tree.Load() }

// swap builds a new tree from the catalog next returns (with the
// confirmed skills added) and swaps it in, then reports what changed.
func (c *catalog) swap(next func(old *tree) (*resolver.Catalog, string)) {
	c.swapThen(next, nil)
}

// swapThen is swap, calling installed as soon as the new tree is in force,
// before the changes are worked out and reported.
func (c *catalog) swapThen(next func(old *tree) (*resolver.Catalog, string), installed func()) {
	c.swapMu.Lock()
	old := c.tree.Load()
	cat, source := next(old)
	c.mu.Lock()
	extra := maps.Clone(c.extra)
	refused := c.refused
	c.mu.Unlock()
	cat = withExtra(cat, extra)
	if refused != "" && !strings.Contains(cat.Truncated, refused) {
		cut := *cat
		cut.Truncated = refused
		if cat.Truncated != "" {
			cut.Truncated = cat.Truncated + "; " + refused
		}
		cat = &cut
	}
	confirmed := map[string]bool{}
	for u := range extra {
		confirmed[u] = true
	}
	now := c.now()
	if source != "none" {
		// The empty tree before any catalog must not make the book
		// forget the times the saved catalog is about to need.
		// Worked out beside the tree, which waits for it only to stamp
		// the times.
		c.times.trackAsync(cat, now)
	}
	t := buildGated(c.cfg.Label, cat, source, old, now, confirmed, c.admit, c.times)
	c.tree.Store(t)
	c.swapMu.Unlock()
	if installed != nil {
		installed()
	}
	for _, i := range t.placement {
		r := t.rejected[i]
		c.log.Warn("skill rejected", "op", "list", "uri", r.URI, "err", r.Detail)
	}
	files, dirs := changes(old, t)
	if len(files) > 0 || len(dirs) > 0 {
		added, removed := entries(old, t)
		c.onChange(Change{Files: files, Dirs: dirs, Added: added, Removed: removed})
	}
}

// regate rebuilds the tree from the held catalog, so that a changed
// approval takes effect: a skill approved joins the tree, one revoked
// leaves it, and the kernel is told.
func (c *catalog) regate() {
	c.swap(func(t *tree) (*resolver.Catalog, string) { return t.catalog(), t.source })
}

// put holds a live catalog from the server and saves it.
func (c *catalog) put(cat *resolver.Catalog) {
	c.hold(cat, nil)
	c.save()
}

// hold holds a live catalog from the server without saving it, and
// calls installed (when not nil) once its tree is in force.
func (c *catalog) hold(cat *resolver.Catalog, installed func()) {
	c.swapThen(func(*tree) (*resolver.Catalog, string) { return cat, "live" }, installed)
}

// replace holds a fresh entry (from skills/get) in place of old, and
// saves the catalog.
func (c *catalog) replace(old, fresh *verify.Skill) {
	c.swap(func(t *tree) (*resolver.Catalog, string) {
		cat := t.catalog()
		for i, s := range cat.Skills {
			if s.URI.String() == old.URI.String() {
				cat.Skills[i] = fresh
				if fresh.Private {
					cat.CacheScope = resolver.ScopePrivate
				}
			}
		}
		return cat, t.source
	})
	c.save()
}

// confirm holds an unlisted skill confirmed with skills/get like a listed
// one, from now on and across re-lists, and saves the catalog. Confirmed
// skills count against the listing caps (max_list_entries,
// max_list_resources, max_list_bytes) with the listed ones: one that
// would pass a cap is refused, and the catalog says why (status.json
// "truncated").
func (c *catalog) confirm(s *verify.Skill) error {
	if err := c.admitExtra(s); err != nil {
		// The first refusal is kept: the catalog says that one.
		c.mu.Lock()
		first := c.refused == ""
		if first {
			c.refused = err.Error()
		}
		c.mu.Unlock()
		if first {
			c.swap(func(t *tree) (*resolver.Catalog, string) { return t.catalog(), t.source })
		}
		return err
	}
	c.swap(func(t *tree) (*resolver.Catalog, string) { return t.catalog(), t.source })
	c.save()
	return nil
}

// ErrListCap refuses a skill confirmed with skills/get that would take the
// held catalog past a listing cap.
var ErrListCap = errors.New("over the listing caps")

// admitExtra adds s to the confirmed skills if the held catalog with s
// added stays within the listing caps. The held catalog counts what its
// listing cost and every confirmed skill; a skill already held is
// admitted.
func (c *catalog) admitExtra(s *verify.Skill) error {
	uri := s.URI.String()
	held := c.current().catalog()
	lim := c.cfg.Limits
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.extra[uri]; ok {
		c.extra[uri] = s
		return nil
	}
	for _, x := range held.Skills {
		if x.URI.String() == uri {
			c.extra[uri] = s
			return nil
		}
	}
	entries, resources, size := len(held.Skills), held.Resources, held.Bytes
	for _, x := range c.extra {
		resources += len(x.Files)
		size += entrySize(x)
	}
	switch n := len(s.Files); {
	case entries+1 > lim.MaxListEntries:
		return fmt.Errorf("%w: %s not held: %d skills are held (max_list_entries is %d)", ErrListCap, uri, entries, lim.MaxListEntries)
	case resources+n > lim.MaxListResources:
		return fmt.Errorf("%w: %s not held: %d resources are held and it has %d (max_list_resources is %d)", ErrListCap, uri, resources, n, lim.MaxListResources)
	case size+entrySize(s) > lim.MaxListBytes:
		return fmt.Errorf("%w: %s not held: %d bytes of entries are held and it has %d (max_list_bytes is %d)", ErrListCap, uri, size, entrySize(s), lim.MaxListBytes)
	}
	c.extra[uri] = s
	return nil
}

// entrySize is the size of a skill's entry as JSON, what max_list_bytes
// counts.
func entrySize(s *verify.Skill) int64 {
	b, err := json.Marshal(s.Entry)
	if err != nil {
		return 0
	}
	return int64(len(b))
}

// withExtra adds the confirmed skills a catalog does not carry itself.
func withExtra(c *resolver.Catalog, extra map[string]*verify.Skill) *resolver.Catalog {
	if len(extra) == 0 {
		return c
	}
	out := *c
	out.Skills = slices.Clone(c.Skills)
	for _, s := range c.Skills {
		delete(extra, s.URI.String())
	}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		out.Skills = append(out.Skills, extra[k])
		if extra[k].Private {
			// A skills/get answer marked private makes the catalog holding
			// it private: saved only with the credentials' fingerprint.
			out.CacheScope = resolver.ScopePrivate
		}
	}
	return &out
}

// save writes the held catalog to the store, unless it is what was saved
// last. Two saves at once (a confirm during a re-list) write in turn, each
// the tree in force when its turn comes (store.Saver.Save).
func (c *catalog) save() {
	if err := c.saver.Save(); err != nil {
		if errors.Is(err, store.ErrStopped) {
			// The origin has stopped (a confirm through a file left
			// open): a new session of it may own the store by now.
			return
		}
		// store records it for status.json: a restart with the server
		// down will not show this catalog.
		c.log.Warn("catalog not saved; a restart with the server down will not show it", "op", "save", "err", err)
	}
}

// encode is catalog.json of the tree in force.
func (c *catalog) encode() ([]byte, error) {
	held := c.tree.Load().catalog()
	sc := savedCatalog{Version: savedCatalogVersion, At: held.At, Truncated: held.Truncated, CacheScope: held.CacheScope, Rejected: held.Rejected}
	if sc.CacheScope == "" {
		sc.CacheScope = resolver.ScopePublic
	}
	if sc.CacheScope == resolver.ScopePrivate {
		sc.Credentials = credentials(c.cfg)
	}
	sc.Entries = make([]skill.Entry, 0, len(held.Skills))
	for _, s := range held.Skills {
		sc.Entries = append(sc.Entries, s.Entry)
	}
	b, err := sc.encode(int(held.Bytes))
	if err != nil {
		return nil, fmt.Errorf("encode the catalog of %s: %w", c.cfg.Label, err)
	}
	// Listing and saving a large catalog leaves garbage of about this
	// size (pages, decode buffers, this encoding): give it back once the
	// burst is over, as after a burst of fetches.
	c.mem.releaseWhenQuiet(len(b))
	return b, nil
}

// loadSaved shows the last held catalog until the server answers, so that a
// restart with the server down still shows the tree. It reports whether
// there was one.
func (c *catalog) loadSaved() bool {
	b, err := c.store.Load(store.CatalogSidecar)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			c.log.Warn("loading saved catalog", "op", "load", "err", err)
		}
		return false
	}
	var sc savedCatalog
	if err := json.Unmarshal(b, &sc); err != nil {
		c.log.Warn("ignoring unreadable saved catalog", "op", "load", "err", err)
		return false
	}
	if sc.Version != savedCatalogVersion {
		c.log.Info("ignoring a saved catalog of another skillfs version", "op", "load", "version", sc.Version)
		return false
	}
	scope := resolver.ScopePublic
	if sc.CacheScope != resolver.ScopePublic {
		scope = resolver.ScopePrivate
	}
	if scope == resolver.ScopePrivate && sc.Credentials != credentials(c.cfg) {
		c.log.Info("not showing the saved catalog: it is private to other credentials", "op", "load")
		return false
	}
	cat := &resolver.Catalog{At: sc.At, Truncated: sc.Truncated, Rejected: sc.Rejected, CacheScope: scope}
	opts := verify.EntryOptions{Strict: c.cfg.Strict, MaxFileSize: c.cfg.Limits.MaxFileSize}
	for _, e := range sc.Entries {
		s, err := verify.CheckEntry(e, opts)
		if err != nil {
			c.log.Warn("saved entry no longer passes", "op", "load", "uri", e.URI, "err", err)
			continue
		}
		if s.Dynamic && !c.cfg.AllowDynamic {
			continue
		}
		cat.Skills = append(cat.Skills, s)
		cat.Resources += len(s.Files)
	}
	if scope == resolver.ScopePrivate && c.cfg.Shared {
		cat.Withheld = resolver.WithheldReason(len(cat.Skills))
		c.log.Warn("saved listing withheld from the shared mount", "op", "load", "err", cat.Withheld)
	}
	c.saver.Seen(b)
	c.swap(func(old *tree) (*resolver.Catalog, string) {
		if old.source == "live" {
			// The server answered first; keep its catalog.
			return old.catalog(), "live"
		}
		return cat, "saved"
	})
	c.log.Info("showing saved catalog until the server answers", "op", "load", "skills", len(cat.Skills))
	return true
}
