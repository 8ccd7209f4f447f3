package fs

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// withoutNotify rebuilds the fixture's node tree as a mount for a kernel
// without cache notifications (macOS; --no-notify) builds it.
func (f *fixture) withoutNotify() {
	f.raw, _ = newFS(f.v, Options{Logger: slog.New(f.logs), NoNotify: true})
	f.root = f.raw.root
}

// Without kernel notifications, what the kernel may cache is bounded by
// NoNotifyTimeout: names, attributes and failed lookups; no listing is
// kept across opens and no page at all (direct I/O).
func TestNoNotifyCachesForTheBoundOnly(t *testing.T) {
	f := newFixture(t, testFiles)
	f.withoutNotify()
	bound := uint64(NoNotifyTimeout.Seconds())
	var out fuse.EntryOut
	if _, errno := f.walk(t, "local/alpha/refs").Lookup(context.Background(), "a.md", &out); errno != 0 {
		t.Fatal(errno)
	}
	if out.EntryValid != bound || out.AttrValid != bound {
		t.Errorf("entry of a.md cached %d s, attributes %d s; want %d s", out.EntryValid, out.AttrValid, bound)
	}
	var neg fuse.EntryOut
	if _, errno := f.walk(t, "local").Lookup(context.Background(), "nothing", &neg); errno != syscall.ENOENT || neg.EntryValid != bound {
		t.Errorf("failed lookup: %v, cached %d s; want ENOENT for %d s", errno, neg.EntryValid, bound)
	}
	var attr fuse.AttrOut
	if errno := f.walk(t, "local/alpha").Getattr(context.Background(), nil, &attr); errno != 0 || attr.AttrValid != bound {
		t.Errorf("getattr of a directory: %v, cached %d s; want %d s", errno, attr.AttrValid, bound)
	}
	fh, fl, errno := f.walk(t, "local/alpha/SKILL.md").Open(context.Background(), syscall.O_RDONLY)
	if fh != nil || errno != 0 || fl&fuse.FOPEN_KEEP_CACHE != 0 || fl&fuse.FOPEN_DIRECT_IO == 0 {
		t.Errorf("open O_RDONLY: %v, flags %#x, %v; want direct I/O, no page kept", fh, fl, errno)
	}
	for _, p := range []string{"local", "local/alpha", "local/team/beta"} {
		if _, fl, errno := f.walk(t, p).OpendirHandle(context.Background(), 0); errno != 0 || fl&(fuse.FOPEN_CACHE_DIR|fuse.FOPEN_KEEP_CACHE) != 0 {
			t.Errorf("opendir %s: flags %#x, %v; want the listing not kept", p, fl, errno)
		}
	}
}

// Every open is checked against the current tree: an inode the kernel
// still holds for a file that changed answers ESTALE (Linux then looks the
// path up again and opens the new version), one for a file that left the
// tree ENOENT; the new version opens and reads its own bytes.
func TestNoNotifyOpenIsCheckedAgainstTheCurrentTree(t *testing.T) {
	f := newFixture(t, testFiles)
	f.withoutNotify()
	changed := f.walk(t, "local/alpha/refs/a.md")
	removed := f.walk(t, "local/team/beta/lost.txt")
	kept := f.walk(t, "local/team/beta/data.txt")

	if err := os.WriteFile(filepath.Join(f.dir, "alpha", "refs", "a.md"), []byte("a, changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(f.dir, "team", "beta", "lost.txt")); err != nil {
		t.Fatal(err)
	}
	if err := f.srv.Rescan(); err != nil {
		t.Fatal(err)
	}
	f.v.Refresh()
	deadline := time.Now().Add(time.Minute)
	for {
		a, err := f.v.Stat(context.Background(), "local/alpha/refs/a.md")
		_, gone := f.v.Stat(context.Background(), "local/team/beta/lost.txt")
		if err == nil && a.Ino != changed.ino && gone != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the catalog did not change: a.md %+v, %v; lost.txt %v", a, err, gone)
		}
		time.Sleep(20 * time.Millisecond)
	}

	if _, _, errno := changed.Open(context.Background(), syscall.O_RDONLY); errno != syscall.ESTALE {
		t.Errorf("open of the changed file's old inode: %v, want ESTALE", errno)
	}
	if _, _, errno := removed.Open(context.Background(), syscall.O_RDONLY); errno != syscall.ENOENT {
		t.Errorf("open of the removed file's inode: %v, want ENOENT", errno)
	}
	if _, _, errno := kept.Open(context.Background(), syscall.O_RDONLY); errno != 0 {
		t.Errorf("open of an unchanged file: %v", errno)
	}
	fresh := f.walk(t, "local/alpha/refs/a.md")
	if _, _, errno := fresh.Open(context.Background(), syscall.O_RDONLY); errno != 0 {
		t.Fatalf("open of the new version: %v", errno)
	}
	if got, err := read(t, fresh, 64); err != nil || string(got) != "a, changed\n" {
		t.Errorf("read of the new version: %q, %v", got, err)
	}
}
