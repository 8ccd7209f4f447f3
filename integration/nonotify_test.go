//go:build linux

package integration

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	skfs "github.com/skillfs/skillfs/fs"
)

// A mount for a kernel without cache notifications (macOS; --no-notify
// here): nothing tells the kernel that a file changed, left the listing or
// lost its approval, yet once skillfs has the change, no open serves the
// old bytes, no read of a file opened before it does either, and after
// fs.NoNotifyTimeout stat no longer finds a removed file and ls no longer
// lists it. The kernel's caches are warmed first
// (names, attributes, pages), and the moment skillfs has the change is
// read from .skillfs/index.json, which is never cached, so what is checked
// is the kernel's view alone. The same run with notifications shows that
// the daemon's --debug trace names every notification sent, and without
// them it names none.
func TestNoNotifyChangesReachTheKernelWithinTheBound(t *testing.T) {
	t.Parallel()
	for _, mode := range []struct {
		name     string
		flags    []string
		notifies bool
	}{
		{"notify", nil, true},
		{"no-notify", []string{"--no-notify"}, false},
	} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			openDir, gatedDir := t.TempDir(), t.TempDir()
			writeTree(t, openDir, map[string]string{
				"alpha/SKILL.md":  skillMD("alpha", "Alpha skill", "alpha body\n"),
				"alpha/refs/a.md": "the old bytes of a.md\n",
				"gone/SKILL.md":   skillMD("gone", "Removed by the server", "gone body\n"),
				"gone/g.md":       "the removed file\n",
			})
			writeTree(t, gatedDir, map[string]string{
				"kept/SKILL.md": skillMD("kept", "Revoked by the user", "kept body\n"),
				"kept/k.md":     "the revoked file\n",
			})
			cfg := writeConfig(t, map[string]any{
				"open":  stdioServe(openDir, os.DevNull, "--poll", "200ms"),
				"gated": stdioServe(gatedDir, os.DevNull),
			}, map[string]any{"servers": map[string]any{"gated": map[string]any{"approval": "required"}}})
			m := startMount(t, cfg, append([]string{"--debug"}, mode.flags...)...)
			if out, err := skillfsCmd(t, m, "approve", "--yes", "gated/kept"); err != nil {
				t.Fatalf("approve: %v\n%s", err, out)
			}
			a := m.Path("open", "alpha", "refs", "a.md")
			g := m.Path("open", "gone", "g.md")
			k := m.Path("gated", "kept", "k.md")
			waitFor(t, time.Minute, "the approved skill to appear", func() bool {
				_, err := os.Stat(k)
				return err == nil
			})
			// Warm the kernel: names, attributes, listings and pages.
			for range 3 {
				for p, want := range map[string]string{a: "the old bytes of a.md\n", g: "the removed file\n", k: "the revoked file\n"} {
					if b, err := os.ReadFile(p); err != nil || string(b) != want {
						t.Fatalf("%s before the changes: %q, %v", p, b, err)
					}
				}
				for _, d := range []string{m.Path("open"), m.Path("gated")} {
					if _, err := os.ReadDir(d); err != nil {
						t.Fatal(err)
					}
				}
			}
			// Files open across the changes, read once: their pages are
			// in the kernel.
			open := map[string]*os.File{}
			for _, p := range []string{a, g, k} {
				fh, err := os.Open(p)
				if err != nil {
					t.Fatal(err)
				}
				defer fh.Close()
				if _, err := io.ReadAll(fh); err != nil {
					t.Fatal(err)
				}
				open[p] = fh
			}
			before := strings.Count(m.log.String(), "NOTIFY_INVAL")

			// The server changes a.md (new digest and size) and drops
			// gone/; the user revokes kept. marker/ is written last: a
			// listing that has it has the other two changes.
			writeTree(t, openDir, map[string]string{"alpha/refs/a.md": "the new bytes of a.md, longer\n"})
			if err := os.RemoveAll(filepath.Join(openDir, "gone")); err != nil {
				t.Fatal(err)
			}
			writeTree(t, openDir, map[string]string{"marker/SKILL.md": skillMD("marker", "Written last", "marker\n")})
			if out, err := skillfsCmd(t, m, "revoke", "gated/kept"); err != nil {
				t.Fatalf("revoke: %v\n%s", err, out)
			}
			waitFor(t, 2*time.Minute, "index.json to show the changes", func() bool {
				var paths []string
				for _, s := range readIndex(t, m).Skills {
					paths = append(paths, s.Path)
				}
				return slices.Contains(paths, "open/marker") && !slices.Contains(paths, "open/gone") && !slices.Contains(paths, "gated/kept")
			})
			if !mode.notifies {
				// Every open is checked against the current tree, so an
				// open already gets the new version or ENOENT, whatever
				// names the kernel still holds (Linux looks a name up again
				// on ESTALE). A mount that notifies does that from a
				// goroutine of its own, maybe not yet.
				if b, err := os.ReadFile(a); err != nil || string(b) != "the new bytes of a.md, longer\n" {
					t.Errorf("read of the changed a.md once skillfs has the change: %q, %v", b, err)
				}
				for _, p := range []string{g, k} {
					if b, err := os.ReadFile(p); !errors.Is(err, syscall.ENOENT) {
						t.Errorf("read of %s once skillfs has the change: %q, %v; want ENOENT", p, b, err)
					}
				}
			}
			// skillfs has every change; without notifications the kernel
			// was told of none of them. Past the bound it must show them
			// all, every time.
			time.Sleep(skfs.NoNotifyTimeout + 500*time.Millisecond)
			for i := range 5 {
				if b, err := os.ReadFile(a); err != nil || string(b) != "the new bytes of a.md, longer\n" {
					t.Errorf("read %d of the changed a.md past the bound: %q, %v", i, b, err)
				}
				if fi, err := os.Stat(a); err != nil || fi.Size() != int64(len("the new bytes of a.md, longer\n")) {
					t.Errorf("stat %d of the changed a.md past the bound: %v, %v", i, fi, err)
				}
				for _, p := range []string{g, k} {
					if b, err := os.ReadFile(p); !errors.Is(err, syscall.ENOENT) {
						t.Errorf("read %d of %s past the bound: %q, %v; want ENOENT", i, p, b, err)
					}
					if _, err := os.Stat(p); !errors.Is(err, syscall.ENOENT) {
						t.Errorf("stat %d of %s past the bound: %v; want ENOENT", i, p, err)
					}
				}
				if ls := names(t, m.Path("open")); slices.Contains(ls, "gone") {
					t.Errorf("ls open %d past the bound: %v", i, ls)
				}
				if ls := names(t, m.Path("gated")); slices.Contains(ls, "kept") {
					t.Errorf("ls gated %d past the bound: %v", i, ls)
				}
				time.Sleep(100 * time.Millisecond)
			}
			// One open, one version: a read of a file opened before the
			// change fails, even of bytes it has read before.
			m.warnings = true // the failed reads are logged
			for p, fh := range open {
				buf := make([]byte, 64)
				if n, err := fh.ReadAt(buf, 0); !errors.Is(err, syscall.EIO) {
					t.Errorf("read of %s opened before the change: %q, %v; want EIO", p, buf[:n], err)
				}
			}
			sent := strings.Count(m.log.String(), "NOTIFY_INVAL") - before
			if mode.notifies && sent == 0 {
				t.Errorf("no notification in the --debug trace of a mount that sends them: the check below cannot see any")
			}
			if !mode.notifies && sent+before != 0 {
				t.Errorf("a mount without kernel notifications sent %d", sent+before)
			}
		})
	}
}
