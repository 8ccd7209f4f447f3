package store

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"

	"github.com/skillfs/skillfs/internal/skill"
)

func tamper(t *testing.T, path string) {
	t.Helper()
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("tampered"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestLRUEviction(t *testing.T) {
	const size = 100
	s, rec := openStore(t, Options{MemoryLimit: 3 * (size + entryOverhead)})
	o := mustOrigin(t, s, "acme-1")
	files := map[string][]byte{}
	ds := map[string]skill.Digest{}
	for i, name := range []string{"A", "B", "C"} {
		files[name] = content(i, size)
		ds[name] = mustPut(t, o, files[name])
	}
	if _, err := o.Get(ds["A"]); err != nil { // A becomes most recent; B is now least
		t.Fatal(err)
	}
	files["D"] = content(3, size)
	ds["D"] = mustPut(t, o, files["D"])

	st := s.Stats()
	if st.MemoryEntries != 3 || st.Evictions != 1 || st.MemoryBytes != 3*(size+entryOverhead) {
		t.Errorf("stats = %+v, want 3 entries, 1 eviction, %d bytes", st, 3*(size+entryOverhead))
	}
	// Tamper with every disk copy: what memory holds is still served, what
	// was evicted is read from disk, fails its re-hash and is discarded.
	for _, d := range ds {
		tamper(t, objectPath(o, d))
	}
	for _, name := range []string{"A", "C", "D"} {
		if b, err := o.Get(ds[name]); err != nil || !bytes.Equal(b, files[name]) {
			t.Errorf("Get(%s) = %v; want its bytes from memory", name, err)
		}
	}
	if _, err := o.Get(ds["B"]); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(B) = %v; B should have been evicted and its tampered copy refused", err)
	}
	wantOneDiscard(t, rec, o, ds["B"], objectPath(o, ds["B"]))
}

func TestFileLargerThanMemoryLimit(t *testing.T) {
	s, _ := openStore(t, Options{MemoryLimit: 1000})
	o := mustOrigin(t, s, "acme-1")
	small := mustPut(t, o, content(1, 100))
	big := content(2, 1000) // with overhead, more than the limit on its own
	d := mustPut(t, o, big)
	if st := s.Stats(); st.MemoryEntries != 1 || st.Evictions != 0 {
		t.Errorf("stats after a too-large Put = %+v; want it not cached and nothing evicted", st)
	}
	for i := range 2 {
		if b, err := o.Get(d); err != nil || !bytes.Equal(b, big) {
			t.Fatalf("Get(big) = %v", err)
		}
		if st := s.Stats(); st.DiskLoads != uint64(i+1) {
			t.Errorf("Get #%d of a too-large file: DiskLoads = %d, want %d", i+1, st.DiskLoads, i+1)
		}
	}
	if _, err := o.Get(small); err != nil || s.Stats().MemoryHits != 1 {
		t.Errorf("small file not served from memory: %v, %+v", err, s.Stats())
	}
}

func TestMemoryDisabled(t *testing.T) {
	s, _ := openStore(t, Options{MemoryLimit: -1})
	o := mustOrigin(t, s, "acme-1")
	d := mustPut(t, o, []byte("x"))
	o.Get(d)
	if st := s.Stats(); st.MemoryEntries != 0 || st.DiskLoads != 1 {
		t.Errorf("stats = %+v; want nothing cached, one disk load", st)
	}
}

func TestMemCachePurgeAndReAdd(t *testing.T) {
	c := newMemCache(10 * (entryOverhead + 10))
	first := []byte("0123456789")
	c.add(memKey{1, "a"}, first)
	c.add(memKey{1, "a"}, []byte("different!")) // same key: keep the slice readers hold
	if b, _ := c.get(memKey{1, "a"}); &b[0] != &first[0] {
		t.Errorf("re-adding a key replaced its slice")
	}
	c.add(memKey{1, "b"}, first)
	c.add(memKey{2, "a"}, first)
	c.purge(1)
	if c.has(memKey{1, "a"}) || c.has(memKey{1, "b"}) || !c.has(memKey{2, "a"}) {
		t.Errorf("purge(1) left the wrong entries")
	}
	if used, n, _ := c.stats(); n != 1 || used != entryOverhead+10 {
		t.Errorf("after purge: %d entries, %d bytes", n, used)
	}
}

func TestConcurrentPutGet(t *testing.T) {
	// A small memory limit forces evictions and disk loads racing Puts of
	// the same digests, Origin() calls cleaning temp files and Has.
	s, _ := openStore(t, Options{MemoryLimit: 4 * (2048 + entryOverhead)})
	ids := []string{"a-1", "b-2"}
	var files [][]byte
	var ds []skill.Digest
	for i := range 24 {
		b := content(i, 512+i*64)
		files = append(files, b)
		ds = append(ds, digestOf(b))
	}
	var wg sync.WaitGroup
	errc := make(chan error, 64)
	for g := range 16 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range 300 {
				o, err := s.Bucket(ids[rng.IntN(len(ids))])
				if err != nil {
					errc <- err
					return
				}
				i := rng.IntN(len(files))
				switch rng.IntN(3) {
				case 0:
					if err := o.Put(ds[i], files[i]); err != nil {
						errc <- err
						return
					}
				case 1:
					b, err := o.Get(ds[i])
					if err != nil && !errors.Is(err, ErrNotFound) {
						errc <- err
						return
					}
					if err == nil && !bytes.Equal(b, files[i]) {
						errc <- fmt.Errorf("Get(%d) returned wrong bytes", i)
						return
					}
				case 2:
					o.Has(ds[i])
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	for _, id := range ids {
		o := mustOrigin(t, s, id)
		for i, d := range ds {
			if err := o.Put(d, files[i]); err != nil {
				t.Fatal(err)
			}
		}
		for i, d := range ds {
			if b, err := o.Get(d); err != nil || !bytes.Equal(b, files[i]) {
				t.Errorf("%s: Get(%d) after the storm = %v", id, i, err)
			}
		}
		if tmp := tempFiles(t, o); len(tmp) != 0 {
			t.Errorf("%s: temporary files left: %v", id, tmp)
		}
	}
	if s.Stats().DiskLoads == 0 {
		t.Errorf("no Get was answered from disk; the test did not exercise re-hashing")
	}
	// A restart reads every file back from disk.
	s2, _ := openStoreAt(t, s.Root(), Options{MemoryLimit: -1})
	for _, id := range ids {
		o := mustOrigin(t, s2, id)
		for i, d := range ds {
			if b, err := o.Get(d); err != nil || !bytes.Equal(b, files[i]) {
				t.Errorf("%s: Get(%d) after restart = %v", id, i, err)
			}
		}
	}
}
