package vfs

import (
	"testing"

	"github.com/skillfs/skillfs/internal/render"
)

// TestMetaDirIsRenders: the directory the mount routes and the one the
// generated files name are the same.
func TestMetaDirIsRenders(t *testing.T) {
	if MetaDir != render.MetaDir {
		t.Fatalf("vfs.MetaDir %q, render.MetaDir %q", MetaDir, render.MetaDir)
	}
}
