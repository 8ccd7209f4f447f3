package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestApprovalsSavedHostOnlyAndRemovedWithTheOrigin: approvals.json is
// 0600, replaced whole, survives reopening the store, and goes with the
// origin's directory (skillfs cache rm).
func TestApprovalsSavedHostOnlyAndRemovedWithTheOrigin(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	s, _ := openStoreAt(t, root, Options{})
	o := mustOrigin(t, s, "acme-1")
	if _, err := o.Load(ApprovalsSidecar); !errors.Is(err, ErrNotFound) {
		t.Fatalf("before any save: %v, want ErrNotFound", err)
	}
	for _, data := range [][]byte{[]byte(`{"v":1}`), []byte(`{"v":2}`)} {
		if err := save(o, ApprovalsSidecar, data); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Lstat(filepath.Join(root, "acme-1", "approvals.json"))
	if err != nil || fi.Mode().Perm() != 0o600 || !fi.Mode().IsRegular() {
		t.Fatalf("approvals.json: %v, %v; want a regular 0600 file", fi, err)
	}
	s.Close()
	s2, _ := openStoreAt(t, root, Options{})
	o2 := mustOrigin(t, s2, "acme-1")
	if b, err := o2.Load(ApprovalsSidecar); err != nil || !bytes.Equal(b, []byte(`{"v":2}`)) {
		t.Fatalf("after reopening: %q, %v", b, err)
	}
	if err := s2.Remove("acme-1"); err != nil {
		t.Fatal(err)
	}
	o3 := mustOrigin(t, s2, "acme-1")
	if _, err := o3.Load(ApprovalsSidecar); !errors.Is(err, ErrNotFound) {
		t.Errorf("after removing the origin: %v, want ErrNotFound", err)
	}
}

// TestPlantedApprovalsAreDiscarded: a symlink in place of approvals.json
// is removed, never followed.
func TestPlantedApprovalsAreDiscarded(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	s, rec := openStoreAt(t, root, Options{})
	o := mustOrigin(t, s, "acme-1")
	target := filepath.Join(t.TempDir(), "elsewhere.json")
	os.WriteFile(target, []byte(`{"v":9}`), 0o600)
	if err := os.Symlink(target, filepath.Join(root, "acme-1", "approvals.json")); err != nil {
		t.Fatal(err)
	}
	if b, err := o.Load(ApprovalsSidecar); err == nil {
		t.Fatalf("a symlinked approvals.json was read: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(root, "acme-1", "approvals.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the symlink is still there: %v", err)
	}
	if w := rec.TakeWarnings(); len(w) == 0 {
		t.Errorf("the discard was not logged")
	}
}
