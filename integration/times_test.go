//go:build linux

package integration

import (
	"encoding/binary"
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stamp is what make and rsync compare: the mtime, to the nanosecond.
type stamp struct {
	mtime time.Time
	ino   uint64
}

// stampTree stats every file and directory under root (root included, as
// "."), by slash path relative to root.
func stampTree(t *testing.T, root string) map[string]stamp {
	t.Helper()
	out := map[string]stamp{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		// Whole seconds, the resolution of the times skillfs keeps: a
		// directory a server's directory reads list reports its time
		// plus a nanosecond per change of its listing (SEMANTICS.md).
		out[filepath.ToSlash(rel)] = stamp{mtime: time.Unix(st.Mtim.Sec, 0), ino: st.Ino}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// newest is the latest mtime among stamps.
func newest(stamps map[string]stamp) time.Time {
	var n time.Time
	for _, s := range stamps {
		if s.mtime.After(n) {
			n = s.mtime
		}
	}
	return n
}

// waitPast waits until the clock has passed t by a whole second, so that
// anything stamped from now on (times are whole seconds) differs from t.
func waitPast(t time.Time) {
	for time.Now().Unix() <= t.Unix() {
		time.Sleep(100 * time.Millisecond)
	}
}

func mtimesDiffer(a, b map[string]stamp) []string {
	var out []string
	for p := range a {
		if !a[p].mtime.Equal(b[p].mtime) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

func listedAt(t *testing.T, m *mount, label string) string {
	t.Helper()
	b, err := readGenerated(m.Path(".skillfs", "status.json"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Origins []struct {
			Label    string `json:"label"`
			ListedAt string `json:"listed_at"`
		} `json:"origins"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("status.json: %v\n%s", err, b)
	}
	for _, o := range st.Origins {
		if o.Label == label {
			return o.ListedAt
		}
	}
	return ""
}

// TestTimesSurviveRemountsAndFollowEdits: every file's and directory's
// mtime is the same after a re-list (SIGHUP), after a remount on the same
// cache (which also restarts the stdio server), and, after one file is
// edited in the served folder, only that file and its ancestors change.
func TestTimesSurviveRemountsAndFollowEdits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	genTree(t, dir, "local")
	cfg := writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull)}, nil)
	m := startMount(t, cfg)
	origin := m.Path("local")
	first := stampTree(t, origin)
	if len(first) < 10 {
		t.Fatalf("only %d paths under the origin: %v", len(first), slices.Sorted(maps.Keys(first)))
	}
	// Whatever is stamped from here on would differ: a test that passes
	// does so because the times were kept, not because the clock stood.
	waitPast(newest(first))

	// Reading a file does not change its time.
	if _, err := os.ReadFile(filepath.Join(origin, "alpha", "refs", "a.md")); err != nil {
		t.Fatal(err)
	}
	was := listedAt(t, m, "local")
	m.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, 5*time.Minute, "the SIGHUP re-list", func() bool { return listedAt(t, m, "local") != was })
	if d := mtimesDiffer(first, stampTree(t, origin)); len(d) > 0 {
		t.Errorf("a read and a re-list changed the mtimes of %q", d)
	}

	m.Stop(t)
	m2 := &mount{Dir: m.Dir, Cache: m.Cache, log: &syncBuffer{}}
	m2.start(t, cfg)
	origin = m2.Path("local")
	again := stampTree(t, origin)
	if !slices.Equal(slices.Sorted(maps.Keys(again)), slices.Sorted(maps.Keys(first))) {
		t.Fatalf("the remounted tree has other paths:\n got %v\nwant %v", slices.Sorted(maps.Keys(again)), slices.Sorted(maps.Keys(first)))
	}
	if d := mtimesDiffer(first, again); len(d) > 0 {
		t.Errorf("a remount changed the mtimes of %q", d)
	}
	checkDots(t, m2, "", "local", "local/team", "local/team/beta")

	edited := "team/beta/docs/deep/x.md"
	replaceFile(t, filepath.Join(dir, filepath.FromSlash(edited)), []byte("deep file, edited\n"), 0o644)
	changed := []string{".", "team", "team/beta", "team/beta/docs", "team/beta/docs/deep", edited}
	var now map[string]stamp
	waitFor(t, 5*time.Minute, "the edit to show on the file and its ancestors", func() bool {
		now = stampTree(t, origin)
		d := mtimesDiffer(again, now)
		for _, p := range changed {
			if !slices.Contains(d, p) {
				return false
			}
		}
		return true
	})
	if d := mtimesDiffer(again, now); !slices.Equal(d, changed) {
		t.Errorf("editing %s changed the mtimes of %q; want it and its ancestors, %q", edited, d, changed)
	}
	if now[edited].ino == again[edited].ino {
		t.Errorf("the edited file kept its inode number")
	}
	if !now[edited].mtime.After(again[edited].mtime) {
		t.Errorf("the edited file's mtime went from %v to %v", again[edited].mtime, now[edited].mtime)
	}
	for _, p := range changed {
		if !now[p].mtime.Equal(now[edited].mtime) {
			t.Errorf("%s: mtime %v; an ancestor of the newest file should have its %v", p, now[p].mtime, now[edited].mtime)
		}
	}
}

// checkDots lists each directory (mount-relative; "" is the root) with
// getdents64, as ls -a does, and checks that "." and ".." are there with
// the inode numbers stat gives the directory and its parent. The root's
// ".." is the root.
func checkDots(t *testing.T, m *mount, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		p := m.Path(d)
		parent := m.Path(filepath.Dir(d))
		if d == "" {
			parent = p
		}
		inos := dirents(t, p)
		if got, want := inos["."], statIno(t, p); got != want {
			t.Errorf("%s: . has inode %d, stat says %d", p, got, want)
		}
		if got, want := inos[".."], statIno(t, parent); got != want {
			t.Errorf("%s: .. has inode %d, stat of %s says %d", p, got, parent, want)
		}
		out, err := run(t, "ls", "-a", p)
		if err != nil {
			t.Errorf("ls -a %s: %v\n%s", p, err, out)
		}
		if names := strings.Fields(out); !slices.Contains(names, ".") || !slices.Contains(names, "..") {
			t.Errorf("ls -a %s shows %q, without . and ..", p, names)
		}
	}
}

func statIno(t *testing.T, p string) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// dirents reads a directory with getdents64 and maps each name to the
// inode number the listing gives it (os.ReadDir drops "." and "..").
func dirents(t *testing.T, dir string) map[string]uint64 {
	t.Helper()
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	out := map[string]uint64{}
	buf := make([]byte, 64<<10)
	for {
		n, err := syscall.Getdents(fd, buf)
		if err != nil {
			t.Fatalf("getdents %s: %v", dir, err)
		}
		if n <= 0 {
			return out
		}
		// struct linux_dirent64 { u64 d_ino; s64 d_off; u16 d_reclen; u8 d_type; char d_name[]; }
		for b := buf[:n]; len(b) > 0; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			name := b[19:reclen]
			if i := slices.Index(name, 0); i >= 0 {
				name = name[:i]
			}
			out[string(name)] = binary.NativeEndian.Uint64(b[0:8])
			b = b[reclen:]
		}
	}
}
