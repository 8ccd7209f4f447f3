package vfs

import (
	"bytes"
	"crypto/sha256"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/internal/store"
	"github.com/skillfs/skillfs/internal/testkit"
	"github.com/skillfs/skillfs/resolver"
	"github.com/skillfs/skillfs/verify"
)

// A testClock is a clock the test moves.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) set(sec int64) {
	c.mu.Lock()
	c.now = time.Unix(sec, 0)
	c.mu.Unlock()
}

// warnLog keeps what is logged through it (testkit.Log); take returns the
// messages of the warnings so far.
type warnLog struct{ *testkit.Log }

func newWarnLog() *warnLog { return &warnLog{testkit.NewLog(nil)} }

func (w *warnLog) take() []string {
	var out []string
	for _, r := range w.TakeWarnings() {
		out = append(out, r.Msg)
	}
	return out
}

// timedCatalog is a catalog on the store at root, as one run of the daemon
// holds it, with a clock the test moves. The bucket is the same for every
// catalog on one root, as for one server across remounts.
func timedCatalog(t *testing.T, root string, clock *testClock, log *warnLog) (*catalog, *changeLog) {
	t.Helper()
	st, err := store.Open(root, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	oc := config.Origin{Label: "o", Kind: config.Stdio, Command: "srv", Limits: config.DefaultLimits()}
	b, err := st.Bucket(oc.ID())
	if err != nil {
		t.Fatal(err)
	}
	c := newCatalog(oc, b, slog.New(log), clock.Now, clock.Now())
	changes := &changeLog{}
	c.onChange = changes.record
	t.Cleanup(func() {
		// Write now what a save due later would write, so that it does
		// not land in a directory being removed.
		c.times.stop()
		for _, w := range log.take() {
			t.Errorf("unexpected warning: %s", w)
		}
	})
	return c, changes
}

// mtimes maps every node of the tree to its time in unix seconds.
func mtimes(tr *tree) map[string]int64 {
	out := map[string]int64{}
	for p, n := range tr.nodes {
		out[p] = n.mtime.Unix()
	}
	return out
}

func twoSkills(t *testing.T, notes string) *resolver.Catalog {
	return &resolver.Catalog{
		At:         time.Unix(1, 0),
		CacheScope: resolver.ScopePublic,
		Skills: []*verify.Skill{
			checkedSkill(t, "a", "First", map[string]string{"SKILL.md": "x", "refs/notes.md": notes}),
			checkedSkill(t, "b", "Second", map[string]string{"SKILL.md": "y"}),
		},
	}
}

// TestFileTimesAreWhenTheContentWasFirstHeld: a file's time is when this
// host first held its digest; a re-list, a restart of the server (a new
// listing of the same content) and a remount (a new catalog on the same
// store) keep every time; an edit changes the file's time and its
// ancestors' only, and is announced for them; content that comes back
// after an edit gets the time it came back.
func TestFileTimesAreWhenTheContentWasFirstHeld(t *testing.T) {
	root := t.TempDir()
	clock := &testClock{}
	clock.set(1000)
	c, _ := timedCatalog(t, root, clock, newWarnLog())
	c.put(twoSkills(t, "n1"))
	first := mtimes(c.current())
	for p, sec := range first {
		if sec != 1000 {
			t.Errorf("%q: time %d, want 1000 (first listed)", p, sec)
		}
	}

	clock.set(2000)
	c.put(twoSkills(t, "n1")) // a re-list, or the server restarted
	if got := mtimes(c.current()); !maps.Equal(got, first) {
		t.Errorf("a re-list of the same content changed times:\n got %v\nwant %v", got, first)
	}
	c.times.flush()

	// A remount: a new run on the same store, which shows the saved
	// catalog first and then the server's.
	clock.set(3000)
	again, _ := timedCatalog(t, root, clock, newWarnLog())
	again.regate() // an approval change before any catalog must not lose the times
	if !again.loadSaved() {
		t.Fatal("the saved catalog was not loaded")
	}
	if got := mtimes(again.current()); !maps.Equal(got, first) {
		t.Errorf("times from the saved catalog after a remount:\n got %v\nwant %v", got, first)
	}
	again.put(twoSkills(t, "n1"))
	if got := mtimes(again.current()); !maps.Equal(got, first) {
		t.Errorf("times after a remount and a re-list:\n got %v\nwant %v", got, first)
	}

	clock.set(4000)
	changes := &changeLog{}
	again.onChange = changes.record
	again.put(twoSkills(t, "n2"))
	edited := mtimes(again.current())
	want := maps.Clone(first)
	for _, p := range []string{"a/refs/notes.md", "a/refs", "a", ""} {
		want[p] = 4000
	}
	if !maps.Equal(edited, want) {
		t.Errorf("after editing a/refs/notes.md:\n got %v\nwant %v", edited, want)
	}
	_, dirs := changes.take()
	slices.Sort(dirs)
	if !slices.Equal(dirs, []string{"", "a", "a/refs"}) {
		t.Errorf("the edit announced directories %q; want the file's ancestors, whose times changed", dirs)
	}

	clock.set(5000)
	again.put(twoSkills(t, "n1"))
	if got := again.current().nodes["a/refs/notes.md"].mtime.Unix(); got != 5000 {
		t.Errorf("content back after an edit: time %d, want 5000 (when it came back), not its earlier time", got)
	}
}

// TestFileTimesOnlyForVerifiableContent: a dynamic skill's files have no
// digest to go by and keep the time of the catalog that first showed them
// while they stay the same; an empty origin shows the listing time.
// After the final flush (stop) the file times are not saved again: a
// catalog still changing once its origin has stopped (a confirm through a
// file left open) changes the book, and a timer that fires then writes
// nothing; a new session of the origin may own the store by then.
func TestFileTimesNotSavedAfterStop(t *testing.T) {
	root := t.TempDir()
	clock := &testClock{}
	clock.set(1000)
	c, _ := timedCatalog(t, root, clock, newWarnLog())
	c.put(twoSkills(t, "n1"))
	c.times.snapshot() // the track under way is done
	c.times.stop()
	path := filepath.Join(c.store.Dir(), "times.bin")
	before, err := os.Stat(path)
	if err != nil {
		t.Fatalf("times.bin after stop: %v", err)
	}
	clock.set(2000)
	c.put(twoSkills(t, "n2"))
	c.times.snapshot()
	c.times.flush() // as the timer would
	after, err := os.Stat(path)
	if err != nil || !os.SameFile(before, after) {
		t.Errorf("times.bin was written again after stop (%v)", err)
	}
}

func TestFileTimesOnlyForVerifiableContent(t *testing.T) {
	clock := &testClock{}
	clock.set(1000)
	c, _ := timedCatalog(t, t.TempDir(), clock, newWarnLog())
	c.put(&resolver.Catalog{At: time.Unix(900, 0)})
	if got := c.current().nodes[""].mtime.Unix(); got != 900 {
		t.Errorf("an empty origin: time %d, want the listing's 900", got)
	}
	clock.set(1500)
	c.put(&resolver.Catalog{At: time.Unix(1400, 0)})
	if got := c.current().nodes[""].mtime.Unix(); got != 900 {
		t.Errorf("an origin that stays empty: time %d, want 900 still", got)
	}

	dyn, err := verify.CheckEntry(skill.Entry{URI: "skill://d/SKILL.md", Frontmatter: map[string]any{"name": "d", "description": "D"}, Manifest: skill.Dynamic}, verify.EntryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	clock.set(2000)
	c.put(&resolver.Catalog{Skills: []*verify.Skill{dyn}})
	clock.set(3000)
	c.put(&resolver.Catalog{Skills: []*verify.Skill{dyn}})
	tr := c.current()
	if got := tr.nodes["d/SKILL.md"].mtime.Unix(); got != 2000 {
		t.Errorf("a dynamic SKILL.md: time %d, want 2000 (the catalog that first showed it)", got)
	}
	if got := tr.nodes[""].mtime.Unix(); got != 2000 {
		t.Errorf("the origin root: time %d, want its newest child's, 2000", got)
	}
}

// TestUnreadableTimesAreIgnored: a times.bin that is not one is logged
// once and ignored — files get this run's times — and replaced by the
// next save; it never fails the catalog.
func TestUnreadableTimesAreIgnored(t *testing.T) {
	root := t.TempDir()
	clock := &testClock{}
	clock.set(1000)
	log := newWarnLog()
	c, _ := timedCatalog(t, root, clock, log)
	if err := os.WriteFile(filepath.Join(c.store.Dir(), "times.bin"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.put(twoSkills(t, "n1"))
	if w := log.take(); len(w) != 1 || !strings.Contains(w[0], "unreadable file times") {
		t.Errorf("warnings %q; want one about the unreadable times", w)
	}
	if got := c.current().nodes["a/SKILL.md"].mtime.Unix(); got != 1000 {
		t.Errorf("time %d, want this run's 1000", got)
	}
	c.times.flush()
	b, err := os.ReadFile(filepath.Join(c.store.Dir(), "times.bin"))
	if err != nil || !bytes.HasPrefix(b, timesMagic) {
		t.Errorf("times.bin was not replaced by a good one: %q %v", b, err)
	}
}

func TestTimesEncoding(t *testing.T) {
	m := firstTimes{{[sha256.Size]byte{1}, 1_700_000_000}, {[sha256.Size]byte{2}, 5}, {[sha256.Size]byte{0xff}, 1 << 40}}
	b := encodeTimes(m)
	if len(b) != len(timesMagic)+3*timesRecord {
		t.Errorf("%d bytes for three times", len(b))
	}
	got, err := decodeTimes(b)
	if err != nil || !slices.Equal(got, m) {
		t.Errorf("round trip: %v %v", got, err)
	}
	// Another writer's order, a repeated digest and a time before 1970:
	// sorted, the first of the repeats kept, the early one skipped.
	odd := encodeTimes(firstTimes{{[sha256.Size]byte{9}, 7}, {[sha256.Size]byte{3}, 0}, {[sha256.Size]byte{9}, 8}, {[sha256.Size]byte{4}, 6}})
	got, err = decodeTimes(odd)
	if want := (firstTimes{{[sha256.Size]byte{4}, 6}, {[sha256.Size]byte{9}, 7}}); err != nil || !slices.Equal(got, want) {
		t.Errorf("odd records: %v %v, want %v", got, err, want)
	}
	if tm, ok := got.get([sha256.Size]byte{9}); !ok || tm != 7 {
		t.Errorf("get: %d %v", tm, ok)
	}
	if _, ok := got.get([sha256.Size]byte{3}); ok {
		t.Errorf("get found the skipped record")
	}
	for name, bad := range map[string][]byte{
		"empty":         nil,
		"another magic": append([]byte("skillfs-times-2\n"), b[len(timesMagic):]...),
		"torn":          b[:len(b)-1],
	} {
		if _, err := decodeTimes(bad); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// TestSnapshotWaitsForTrackAsync: a snapshot taken while the book is
// still being brought up to date (trackAsync, beside the tree's build) is
// of the book after it, never before; later catalogs queue behind
// earlier ones.
func TestSnapshotWaitsForTrackAsync(t *testing.T) {
	for range 200 {
		b := newTimeBook(nil, nil)
		b.loadOnce.Do(func() {})
		first := twoSkills(t, "one")
		b.trackAsync(first, time.Unix(100, 0))
		b.trackAsync(twoSkills(t, "two"), time.Unix(200, 0))
		snap := b.snapshot()
		if len(snap) != 3 {
			t.Fatalf("snapshot holds %d digests, want the 3 of the second catalog", len(snap))
		}
		notes := first.Skills[0].Files[1].Resource.Digest
		if _, ok := snap.at(notes); ok {
			t.Fatalf("snapshot still holds the first catalog's notes")
		}
		if at, ok := snap.at(first.Skills[1].Files[0].Resource.Digest); !ok || at.Unix() != 100 {
			t.Fatalf("b/SKILL.md at %v %v, want the first catalog's time 100", at, ok)
		}
	}
}

// TestFirstTimesGet: the book finds every digest it holds and none it
// does not, whether the digests are spread evenly (honest content) or
// bunched up by a server that chose them, differing only late.
func TestFirstTimesGet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(prefix []byte) [sha256.Size]byte {
		var d [sha256.Size]byte
		for i := range d {
			d[i] = byte(rng.Uint32())
		}
		copy(d[:], prefix)
		return d
	}
	for name, prefix := range map[string][]byte{
		"even":         nil,
		"bunched":      {0x42, 0x42, 0x42, 0x42},
		"half bunched": {0x80},
		"all low":      {0, 0, 0},
	} {
		for _, n := range []int{0, 1, 63, 64, 65, 1000, 20000} {
			want := map[[sha256.Size]byte]int64{}
			var book firstTimes
			for i := range n {
				p := prefix
				if name == "half bunched" && i%2 == 0 {
					p = nil
				}
				d := random(p)
				want[d] = int64(i + 1)
				book = append(book, timeRecord{d, int64(i + 1)})
			}
			book = book.sorted()
			for d, at := range want {
				if got, ok := book.get(d); !ok || got != at {
					t.Fatalf("%s, %d: get(%x) = %d %v, want %d", name, n, d[:4], got, ok, at)
				}
				// Absent neighbours: one bit off either end.
				for _, bit := range []int{0, 31*8 + 7} {
					e := d
					e[bit/8] ^= 1 << (7 - bit%8)
					if _, held := want[e]; held {
						continue
					}
					if got, ok := book.get(e); ok {
						t.Fatalf("%s, %d: get(%x) found %d for a digest not held", name, n, e[:4], got)
					}
				}
			}
		}
	}
}

// BenchmarkFirstTimesGet looks up every digest of a 40,000-file book (a
// 10,000-skill catalog), as stamp does.
func BenchmarkFirstTimesGet(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	book := make(firstTimes, 40000)
	for i := range book {
		for j := range book[i].sum {
			book[i].sum[j] = byte(rng.Uint32())
		}
		book[i].t = int64(i + 1)
	}
	sums := make([][sha256.Size]byte, len(book))
	for i := range book {
		sums[i] = book[i].sum
	}
	book = book.sorted()
	for b.Loop() {
		for _, s := range sums {
			if _, ok := book.get(s); !ok {
				b.Fatal("not found")
			}
		}
	}
}
