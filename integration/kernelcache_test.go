//go:build linux

package integration

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestWarmKernelCachesStillShowChanges: the kernel answers a warm walk by
// itself (no OPENDIR, listings, entries, attributes and failed lookups kept
// for the snapshot's life; issue 21), and still every change on the server
// reaches it: a skill and a file that appear under names the kernel had
// just been told were absent, in a directory the catalog decides and in
// one a server's directory read lists, and a skill and a file that go.
func TestWarmKernelCachesStillShowChanges(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	genTree(t, dir, "local")
	m := startMount(t, writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull, "--poll", "200ms")}, nil))

	// Warm: every listing, entry and page, twice, and the names that are
	// about to appear looked up while they are absent.
	absent := [][]string{
		{"local", "gamma-new"},
		{"local", "gamma-new", "SKILL.md"},
		{"local", "team", "delta-new"},
		{"local", "alpha", "refs", "b.md"},
	}
	for range 2 {
		walkAll(t, m.Path("local"))
		for _, p := range absent {
			if _, err := os.Stat(m.Path(p...)); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("stat %s before it exists: %v, want ENOENT", filepath.Join(p...), err)
			}
		}
	}

	writeTree(t, dir, map[string]string{
		"gamma-new/SKILL.md":      skillMD("gamma-new", "Added after the walk", "new\n"),
		"team/delta-new/SKILL.md": skillMD("delta-new", "Added beside beta", "delta\n"),
		"alpha/refs/b.md":         "# B, added\n",
	})
	for _, p := range []string{"shared/refunds", "alpha/scripts"} {
		if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			t.Fatal(err)
		}
	}

	for _, c := range []struct {
		path    []string
		content string
	}{
		{[]string{"local", "gamma-new", "SKILL.md"}, "new\n"},
		{[]string{"local", "team", "delta-new", "SKILL.md"}, "delta\n"},
		{[]string{"local", "alpha", "refs", "b.md"}, "# B, added\n"},
	} {
		p := m.Path(c.path...)
		waitFor(t, 2*time.Minute, p+" appears with its bytes", func() bool {
			b, err := os.ReadFile(p)
			return err == nil && strings.HasSuffix(string(b), c.content)
		})
		d, name := filepath.Split(p)
		waitFor(t, 2*time.Minute, name+" in ls of "+d, func() bool {
			return slices.Contains(listNames(d), name)
		})
	}
	for _, p := range [][]string{{"local", "shared", "refunds"}, {"local", "alpha", "scripts"}} {
		full := m.Path(p...)
		waitFor(t, 2*time.Minute, full+" is gone", func() bool {
			_, err := os.Stat(full)
			return errors.Is(err, fs.ErrNotExist)
		})
		d, name := filepath.Split(full)
		// The parent may have gone with it (shared/ held only refunds).
		waitFor(t, 2*time.Minute, name+" left ls of "+d, func() bool {
			return !slices.Contains(listNames(d), name)
		})
	}
	// What did not change is served as before, from the kernel.
	if b, err := os.ReadFile(m.Path("local", "team", "beta", "docs", "deep", "x.md")); err != nil || string(b) != "deep file\n" {
		t.Errorf("an unchanged file after the changes: %q, %v", b, err)
	}
}

// walkAll lists every directory under root and reads every file.
func walkAll(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			_, err = os.ReadFile(p)
		}
		return err
	})
	if err != nil {
		t.Fatalf("walk %s: %v", root, err)
	}
}

// listNames is ls of dir, or nil when it cannot be listed (it is gone).
func listNames(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	ns := make([]string, 0, len(ents))
	for _, e := range ents {
		ns = append(ns, e.Name())
	}
	return ns
}
