package store

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/internal/testkit"
)

// recorder keeps every log record (testkit.Log). Tests take the warnings
// they expect; any Warn or Error left untaken fails the test, so silent
// trouble in the store does not pass unnoticed.
type recorder = testkit.Log

func newRecorder(t *testing.T) *recorder { return testkit.NewLog(t) }

// openStore opens a store at a fresh root with a recording logger.
func openStore(t *testing.T, opts Options) (*Store, *recorder) {
	t.Helper()
	return openStoreAt(t, filepath.Join(t.TempDir(), "store"), opts)
}

func openStoreAt(t *testing.T, root string, opts Options) (*Store, *recorder) {
	t.Helper()
	rec := newRecorder(t)
	opts.Logger = rec.Logger()
	s, err := Open(root, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", root, err)
	}
	t.Cleanup(func() { s.Close() })
	return s, rec
}

func mustOrigin(t *testing.T, s *Store, id string) *Bucket {
	t.Helper()
	o, err := s.Bucket(id)
	if err != nil {
		t.Fatalf("Origin(%q): %v", id, err)
	}
	return o
}

func digestOf(b []byte) skill.Digest {
	return skill.Digest(fmt.Sprintf("sha256:%x", sha256.Sum256(b)))
}

// content returns n distinct-per-i bytes.
func content(i, n int) []byte {
	s := strings.Repeat(fmt.Sprintf("file %d;", i), n/6+1)
	return []byte(s[:n])
}

func mustPut(t *testing.T, o *Bucket, b []byte) skill.Digest {
	t.Helper()
	d := digestOf(b)
	if err := o.Put(d, b); err != nil {
		t.Fatalf("Put(%s): %v", d, err)
	}
	return d
}

// objectPath is the on-disk path of d in o, computed independently of the
// package's own helper so that a wrong layout fails the tests.
func objectPath(o *Bucket, d skill.Digest) string {
	h := strings.TrimPrefix(string(d), "sha256:")
	return filepath.Join(o.Dir(), "objects", h[:2], h)
}

func perm(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("lstat: %v", err)
	}
	return fi.Mode()
}

// tempFiles lists the ".tmp-" files in an origin directory.
func tempFiles(t *testing.T, o *Bucket) []string {
	t.Helper()
	ents, err := os.ReadDir(o.Dir())
	if err != nil {
		t.Fatalf("read %s: %v", o.Dir(), err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// wantOneDiscard checks that exactly one Warn was logged, naming the origin,
// digest and path.
func wantOneDiscard(t *testing.T, rec *recorder, o *Bucket, d skill.Digest, path string) {
	t.Helper()
	ws := rec.TakeWarnings()
	if len(ws) != 1 {
		t.Fatalf("got %d warnings, want 1: %v", len(ws), ws)
	}
	w := ws[0]
	if w.Attrs["origin"] != o.ID() || w.Attrs["path"] != path || w.Attrs["err"] == "" {
		t.Errorf("warning attrs = %v, want origin %q, path %q and a reason", w.Attrs, o.ID(), path)
	}
	if d != "" && w.Attrs["digest"] != string(d) {
		t.Errorf("warning digest = %q, want %q", w.Attrs["digest"], d)
	}
}

// save writes data to o's sidecar f as its users do, through a Saver.
func save(o *Bucket, f Sidecar, data []byte) error {
	return o.NewSaver(f, SaverOptions{}).Write(data)
}
