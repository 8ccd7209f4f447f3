package store

import (
	"errors"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/skillfs/skillfs/internal/skill"
)

func obj(origin string, i int, size int64, used time.Time) Object {
	return Object{Origin: origin, Digest: digestOf(content(i, 8)), Size: size, Used: used}
}

func evicted(e Eviction) []skill.Digest {
	var out []skill.Digest
	for _, o := range e.Evict {
		out = append(out, o.Digest)
	}
	return out
}

func heldNone(Object) bool { return false }

func TestPlanEvictionLeastRecentlyUsedFirst(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := obj("a-1", 1, 100, t0.Add(3*time.Hour))
	b := obj("a-1", 2, 100, t0.Add(1*time.Hour)) // oldest
	c := obj("b-1", 3, 100, t0.Add(2*time.Hour))
	d := obj("b-1", 4, 100, t0.Add(4*time.Hour)) // newest
	e := PlanEviction([]Object{a, b, c, d}, 200, heldNone)
	if got, want := evicted(e), []skill.Digest{b.Digest, c.Digest}; !slices.Equal(got, want) {
		t.Errorf("evicted %v, want the two least recently used %v", got, want)
	}
	if e.Total != 400 || e.Freed != 200 || e.After() != 200 || e.OverHeld() {
		t.Errorf("plan = %+v, want 400 bytes, 200 freed, not over held", e)
	}
}

func TestPlanEvictionAtTheLimit(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	objs := []Object{obj("a-1", 1, 600, t0), obj("a-1", 2, 400, t0.Add(time.Hour))}
	if e := PlanEviction(objs, 1000, heldNone); len(e.Evict) != 0 {
		t.Errorf("exactly max_size (1000 bytes): evicted %v, want nothing", evicted(e))
	}
	e := PlanEviction(objs, 999, heldNone)
	if got := evicted(e); !slices.Equal(got, []skill.Digest{objs[0].Digest}) {
		t.Errorf("one byte over max_size: evicted %v, want the older object alone", got)
	}
	if e.After() != 400 {
		t.Errorf("after = %d, want 400", e.After())
	}
}

func TestPlanEvictionKeepsHeld(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	old := obj("a-1", 1, 500, t0) // oldest, but held
	mid := obj("a-1", 2, 500, t0.Add(time.Hour))
	newer := obj("a-1", 3, 500, t0.Add(2*time.Hour))
	held := func(o Object) bool { return o.Digest == old.Digest }
	e := PlanEviction([]Object{old, mid, newer}, 1000, held)
	if got := evicted(e); !slices.Equal(got, []skill.Digest{mid.Digest}) {
		t.Errorf("evicted %v, want the oldest unheld one, %v", got, mid.Digest)
	}
	// Held objects alone over the limit: every unheld one goes, the held
	// stay, and the plan says so.
	all := func(o Object) bool { return o.Digest != newer.Digest }
	e = PlanEviction([]Object{old, mid, newer}, 800, all)
	if got := evicted(e); !slices.Equal(got, []skill.Digest{newer.Digest}) {
		t.Errorf("over held: evicted %v, want only the unheld %v", got, newer.Digest)
	}
	if !e.OverHeld() || e.HeldBytes != 1000 || e.After() != 1000 {
		t.Errorf("over held: plan %+v, want OverHeld with 1000 held bytes kept", e)
	}
}

func setUsed(t *testing.T, o *Bucket, d skill.Digest, at time.Time) {
	t.Helper()
	if err := os.Chtimes(objectPath(o, d), at, at); err != nil {
		t.Fatal(err)
	}
}

func TestEvictRemovesOnlyTheFileAndAReadRefetches(t *testing.T) {
	s, _ := openStore(t, Options{MemoryLimit: -1})
	o := mustOrigin(t, s, "a-1")
	d1 := mustPut(t, o, content(1, 1000))
	d2 := mustPut(t, o, content(2, 1000))
	d3 := mustPut(t, o, content(3, 1000))
	t0 := time.Now().Add(-time.Hour)
	setUsed(t, o, d1, t0)
	setUsed(t, o, d2, t0.Add(time.Minute))
	setUsed(t, o, d3, t0.Add(2*time.Minute))
	// Loading d1 from disk makes it the most recently used.
	if _, err := o.Get(d1); err != nil {
		t.Fatal(err)
	}
	// An open descriptor keeps its bytes after the eviction.
	f, err := os.Open(objectPath(o, d2))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	objs, err := s.Objects([]string{"a-1"})
	if err != nil || len(objs) != 3 {
		t.Fatalf("Objects = %v, %v; want 3", objs, err)
	}
	e := PlanEviction(objs, 2000, heldNone)
	if got := evicted(e); !slices.Equal(got, []skill.Digest{d2}) {
		t.Fatalf("evicted %v, want %v (d1 was read since)", got, d2)
	}
	if err := s.Evict(e); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Get(d2); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get of an evicted object: %v, want ErrNotFound", err)
	}
	buf := make([]byte, 1000)
	if n, err := f.ReadAt(buf, 0); n != 1000 || string(buf) != string(content(2, 1000)) {
		t.Errorf("the open descriptor read %d bytes (%v), not the evicted file's", n, err)
	}
	for _, d := range []skill.Digest{d1, d3} {
		if b, err := o.Get(d); err != nil || string(b) == "" {
			t.Errorf("Get(%s) after eviction: %v", d, err)
		}
	}
	// Putting it again (a refetch) stores it again.
	mustPut(t, o, content(2, 1000))
	if _, err := o.Get(d2); err != nil {
		t.Errorf("Get after the refetch: %v", err)
	}
}

func TestWritesOverMaxSizeEvictUnheld(t *testing.T) {
	var keep skill.Digest
	held := func() (func(Object) bool, error) {
		return func(o Object) bool { return o.Digest == keep }, nil
	}
	root := filepath.Join(t.TempDir(), "store")
	s, rec := openStoreAt(t, root, Options{MemoryLimit: -1, MaxSize: 3000, Held: held})
	o := mustOrigin(t, s, "a-1")
	keep = mustPut(t, o, content(0, 1000))
	for i := 1; i <= 10; i++ {
		mustPut(t, o, content(i, 1000))
	}
	s.sizeKeeper.done.Wait()
	// A pass is started by the write that crosses the limit; writes during
	// a pass ask for one more. Whatever the interleaving, the last pass
	// ran after the last write.
	objs, err := s.Objects([]string{"a-1"})
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	var hasKeep bool
	for _, x := range objs {
		total += x.Size
		hasKeep = hasKeep || x.Digest == keep
	}
	if total > 3000 || !hasKeep {
		t.Errorf("after the writes: %d bytes in %d objects (held kept: %v), want at most 3000 with the held one", total, len(objs), hasKeep)
	}
	if sz := s.Size(); sz.Evicted == 0 || sz.OverHeld || sz.MaxSize != 3000 {
		t.Errorf("Size = %+v", sz)
	}
	if rs := rec.Matching(slog.LevelInfo, "cache evicted least recently used objects"); len(rs) == 0 {
		t.Error("no log line says what was evicted")
	}
}

func TestHeldOverMaxSizeIsKeptAndLogged(t *testing.T) {
	held := func() (func(Object) bool, error) { return func(Object) bool { return true }, nil }
	s, rec := openStore(t, Options{MemoryLimit: -1, MaxSize: 1500, Held: held})
	o := mustOrigin(t, s, "a-1")
	d1 := mustPut(t, o, content(1, 1000))
	d2 := mustPut(t, o, content(2, 1000))
	s.sizeKeeper.done.Wait()
	for _, d := range []skill.Digest{d1, d2} {
		if _, err := os.Lstat(objectPath(o, d)); err != nil {
			t.Errorf("held object %s removed: %v", d, err)
		}
	}
	if sz := s.Size(); !sz.OverHeld || sz.HeldBytes != 2000 {
		t.Errorf("Size = %+v, want OverHeld with 2000 held bytes", sz)
	}
	ws := rec.TakeWarnings()
	if len(ws) != 1 || ws[0].Attrs["held_bytes"] != "2000" {
		t.Errorf("warnings = %v, want one saying 2000 held bytes are kept", ws)
	}
}

// TestSavedCatalogRetriesAPassOverHeld: a pass that found the held objects
// alone over the limit runs again when a catalog is saved, since the
// catalog is what held them: the version a listing replaced is evicted
// without waiting for another write. (A mount holds what its saved
// catalog names until the debounced save of the new one lands.)
func TestSavedCatalogRetriesAPassOverHeld(t *testing.T) {
	var mu sync.Mutex
	var keep map[skill.Digest]bool
	held := func() (func(Object) bool, error) {
		mu.Lock()
		k := maps.Clone(keep)
		mu.Unlock()
		return func(o Object) bool { return k[o.Digest] }, nil
	}
	s, rec := openStore(t, Options{MemoryLimit: -1, MaxSize: 1500, Held: held})
	o := mustOrigin(t, s, "a-1")
	d1 := mustPut(t, o, content(1, 1000))
	mu.Lock()
	keep = map[skill.Digest]bool{d1: true}
	mu.Unlock()
	d2 := digestOf(content(2, 1000))
	mu.Lock()
	keep[d2] = true // the new version, before the old one's catalog is replaced
	mu.Unlock()
	mustPut(t, o, content(2, 1000))
	s.sizeKeeper.done.Wait()
	if sz := s.Size(); !sz.OverHeld || len(rec.TakeWarnings()) != 1 {
		t.Fatalf("Size = %+v, want OverHeld, and said once", sz)
	}
	mu.Lock()
	delete(keep, d1) // the catalog naming d2 alone is saved
	mu.Unlock()
	if err := o.NewSaver(CatalogSidecar, SaverOptions{}).Write([]byte(`{"version":2}`)); err != nil {
		t.Fatal(err)
	}
	s.sizeKeeper.done.Wait()
	if _, err := os.Lstat(objectPath(o, d1)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the replaced version after the catalog's save: %v, want it evicted", err)
	}
	if _, err := os.Lstat(objectPath(o, d2)); err != nil {
		t.Errorf("the held version: %v", err)
	}
	if sz := s.Size(); sz.OverHeld {
		t.Errorf("Size = %+v, want under the limit", sz)
	}
}

func TestEvictionSkippedWhenHeldIsUnknown(t *testing.T) {
	held := func() (func(Object) bool, error) { return nil, errors.New("no catalog") }
	s, rec := openStore(t, Options{MemoryLimit: -1, MaxSize: 100, Held: held})
	o := mustOrigin(t, s, "a-1")
	d := mustPut(t, o, content(1, 1000))
	s.sizeKeeper.done.Wait()
	if _, err := os.Lstat(objectPath(o, d)); err != nil {
		t.Errorf("object removed although what is held was unknown: %v", err)
	}
	if ws := rec.TakeWarnings(); len(ws) != 1 {
		t.Errorf("warnings = %v, want one", ws)
	}
}

func TestDropUnused(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	user, _ := openStoreAt(t, root, Options{Lease: true})
	mustOrigin(t, user, "inuse-1")
	s, _ := openStoreAt(t, root, Options{})
	for _, id := range []string{"old-1", "recent-1"} {
		o := mustOrigin(t, s, id)
		mustPut(t, o, content(1, 10))
		if err := save(o, ApprovalsSidecar, []byte(`{"version": 1, "approvals": []}`)); err != nil {
			t.Fatal(err)
		}
	}
	longAgo := time.Now().Add(-40 * 24 * time.Hour)
	for _, p := range []string{"old-1", "old-1/approvals.json", "old-1/catalog.json", "inuse-1", "inuse-1/last-used"} {
		os.Chtimes(filepath.Join(root, p), longAgo, longAgo)
	}
	cutoff := time.Now().Add(-30 * 24 * time.Hour)
	for id, want := range map[string]bool{"old-1": true, "recent-1": false, "inuse-1": false} {
		got, err := s.DropUnused(id, cutoff)
		if err != nil || got != want {
			t.Errorf("DropUnused(%s) = %v, %v; want %v", id, got, err, want)
		}
		_, err = os.Lstat(filepath.Join(root, id))
		if gone := errors.Is(err, os.ErrNotExist); gone != want {
			t.Errorf("%s gone: %v, want %v", id, gone, want)
		}
	}
	if !s.InUse("inuse-1") || s.InUse("recent-1") {
		t.Errorf("InUse: inuse-1 %v, recent-1 %v; want true, false", s.InUse("inuse-1"), s.InUse("recent-1"))
	}
	// Once the mount's store closes, the origin is no longer in use, and
	// its last use is now.
	user.Close()
	if s.InUse("inuse-1") {
		t.Error("inuse-1 still in use after its store closed")
	}
	if got, _ := s.DropUnused("inuse-1", cutoff); got {
		t.Error("inuse-1 dropped right after its mount let go of it")
	}
}

func TestClearKeepsTheBucketWorking(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	user, _ := openStoreAt(t, root, Options{Lease: true, MemoryLimit: -1})
	o := mustOrigin(t, user, "a-1")
	d := mustPut(t, o, content(1, 100))
	if err := save(o, CatalogSidecar, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	cli, _ := openStoreAt(t, root, Options{})
	if err := cli.Clear("a-1"); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(filepath.Join(root, "a-1"))
	if len(ents) != 1 || ents[0].Name() != "last-used" {
		t.Errorf("after Clear: %v, want only last-used", ents)
	}
	if !cli.InUse("a-1") {
		t.Error("the mount's lease did not survive Clear")
	}
	if _, err := o.Get(d); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Clear: %v, want ErrNotFound", err)
	}
	mustPut(t, o, content(1, 100))
	if b, err := o.Get(d); err != nil || string(b) != string(content(1, 100)) {
		t.Errorf("Get after a new Put: %q, %v", b, err)
	}
	if err := save(o, CatalogSidecar, []byte(`{"a":1}`)); err != nil {
		t.Errorf("saving a sidecar after Clear: %v", err)
	}
}
