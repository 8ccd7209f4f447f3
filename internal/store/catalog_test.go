package store

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestCatalogAtItsCap: a catalog of exactly MaxCatalogSize bytes is saved;
// one byte more is refused, and the refusal stays visible (CatalogUnsaved)
// until a save succeeds, rather than being a skipped write nobody sees.
func TestCatalogAtItsCap(t *testing.T) {
	s, _ := openStoreAt(t, filepath.Join(t.TempDir(), "store"), Options{MaxCatalogSize: 100})
	o := mustOrigin(t, s, "acme-1")
	if got := o.CatalogUnsaved(); got != "" {
		t.Errorf("before any save: %q", got)
	}
	at := bytes.Repeat([]byte("a"), 100)
	if err := save(o, CatalogSidecar, at); err != nil || o.CatalogUnsaved() != "" {
		t.Fatalf("a catalog at the cap: %v, unsaved %q", err, o.CatalogUnsaved())
	}
	err := save(o, CatalogSidecar, append(at, 'b'))
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(o.CatalogUnsaved(), "101 bytes") {
		t.Errorf("one byte over: %v, unsaved %q", err, o.CatalogUnsaved())
	}
	if b, err := o.Load(CatalogSidecar); err != nil || !bytes.Equal(b, at) {
		t.Errorf("after the refused save the last saved catalog is %d bytes, %v", len(b), err)
	}
	if err := save(o, CatalogSidecar, at); err != nil || o.CatalogUnsaved() != "" {
		t.Errorf("a later save: %v, unsaved %q", err, o.CatalogUnsaved())
	}
}
