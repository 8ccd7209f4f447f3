package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestTimesSavedAndReloaded: times.bin is 0600, replaced whole, survives
// reopening the store and goes with the origin's directory.
func TestTimesSavedAndReloaded(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	s, _ := openStoreAt(t, root, Options{})
	o := mustOrigin(t, s, "acme-1")
	if _, err := o.Load(TimesSidecar); !errors.Is(err, ErrNotFound) {
		t.Fatalf("before any save: %v, want ErrNotFound", err)
	}
	for _, data := range [][]byte{[]byte("one"), []byte("two")} {
		if err := save(o, TimesSidecar, data); err != nil {
			t.Fatal(err)
		}
	}
	if got := perm(t, filepath.Join(root, "acme-1", "times.bin")); got != 0o600 {
		t.Errorf("times.bin mode %v, want 0600", got)
	}
	s.Close()
	s2, _ := openStoreAt(t, root, Options{})
	o2 := mustOrigin(t, s2, "acme-1")
	if b, err := o2.Load(TimesSidecar); err != nil || !bytes.Equal(b, []byte("two")) {
		t.Fatalf("after reopening: %q, %v", b, err)
	}
	if err := s2.Remove("acme-1"); err != nil {
		t.Fatal(err)
	}
	if err := save(o2, TimesSidecar, []byte("three")); !errors.Is(err, ErrRemoved) {
		t.Errorf("saving into a removed origin: %v, want ErrRemoved", err)
	}
}

// TestOversizedTimesAreDiscarded: a times.bin over its cap is not read;
// it is removed and the removal logged.
func TestOversizedTimesAreDiscarded(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	s, rec := openStoreAt(t, root, Options{})
	o := mustOrigin(t, s, "acme-1")
	if err := save(o, TimesSidecar, make([]byte, maxTimesSize+1)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("saving past the cap: %v, want ErrTooLarge", err)
	}
	p := filepath.Join(root, "acme-1", "times.bin")
	if err := os.WriteFile(p, make([]byte, maxTimesSize+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Load(TimesSidecar); !errors.Is(err, ErrNotFound) {
		t.Errorf("loading an oversized times.bin: %v, want ErrNotFound", err)
	}
	if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the oversized file is still there: %v", err)
	}
	if w := rec.TakeWarnings(); len(w) != 1 {
		t.Errorf("got %d warnings, want one for the discard: %v", len(w), w)
	}
}
