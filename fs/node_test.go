package fs

import (
	"bytes"
	"context"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
)

func TestLookupAndGetattrShowModesOwnersAndSizes(t *testing.T) {
	f := newFixture(t, testFiles)
	for _, tc := range []struct {
		path string
		mode uint32
		size uint64
	}{
		{"local", syscall.S_IFDIR | 0o555, 0},
		{"local/team/beta", syscall.S_IFDIR | 0o555, 0},
		{"local/alpha/refs/a.md", syscall.S_IFREG | 0o444, 4},
		{"local/team/beta/data.txt", syscall.S_IFREG | 0o444, uint64(len(testFiles["team/beta/data.txt"]))},
		{".skillfs", syscall.S_IFDIR | 0o555, 0},
	} {
		n := f.walk(t, tc.path)
		var out fuse.AttrOut
		if errno := n.Getattr(context.Background(), nil, &out); errno != 0 {
			t.Fatalf("getattr %s: %v", tc.path, errno)
		}
		a := out.Attr
		if a.Mode != tc.mode || a.Size != tc.size || a.Uid != uint32(os.Geteuid()) || a.Gid != uint32(os.Getegid()) {
			t.Errorf("%s: mode %o size %d uid %d gid %d; want mode %o size %d, the mounting user", tc.path, a.Mode, a.Size, a.Uid, a.Gid, tc.mode, tc.size)
		}
		if a.Ino != n.StableAttr().Ino || a.Ino < 2 {
			t.Errorf("%s: attr ino %d, inode ino %d", tc.path, a.Ino, n.StableAttr().Ino)
		}
		if out.AttrValid == 0 {
			t.Errorf("%s: attributes of a listed, sized path are not cached", tc.path)
		}
	}
	// Inode numbers are a function of the path.
	var out fuse.EntryOut
	in, errno := f.walk(t, "local/alpha/refs").Lookup(context.Background(), "a.md", &out)
	if errno != 0 || in.StableAttr().Ino != f.walk(t, "local/alpha/refs/a.md").StableAttr().Ino || out.Ino != in.StableAttr().Ino {
		t.Errorf("a second lookup of a.md: ino %d, %v", out.Ino, errno)
	}
	if out.EntryValid == 0 || out.AttrValid == 0 {
		t.Errorf("entry of a.md is not cached: entry %d s, attr %d s", out.EntryValid, out.AttrValid)
	}
}

func TestLookupOfWhatIsNotThereIsENOENTAndCachedNegatively(t *testing.T) {
	f := newFixture(t, testFiles)
	for _, tc := range []struct {
		dir, name string
		want      syscall.Errno
	}{
		{"", "elsewhere", syscall.ENOENT},
		{"local", "nothing", syscall.ENOENT},
		// Outside the manifest: the server has no such file either way.
		{"local/alpha", "unlisted.md", syscall.ENOENT},
		{".skillfs", "secrets.json", syscall.ENOENT},
	} {
		var out fuse.EntryOut
		in, errno := f.walk(t, tc.dir).Lookup(context.Background(), tc.name, &out)
		if in != nil || errno != tc.want {
			t.Errorf("lookup %s/%s: %v, %v; want %v", tc.dir, tc.name, in, errno, tc.want)
		}
		// The catalog alone decides these directories, and a catalog
		// swap tells the kernel of every name it adds: a failed lookup is
		// kept as long as a name.
		if out.EntryValid != uint64(CacheTimeout.Seconds()) {
			t.Errorf("lookup %s/%s: negative entry cached %d s, want %v", tc.dir, tc.name, out.EntryValid, CacheTimeout)
		}
	}
}

func TestReaddirListsTheTree(t *testing.T) {
	f := newFixture(t, testFiles)
	ino := func(p string) uint64 {
		var out fuse.AttrOut
		if errno := f.walk(t, p).Getattr(context.Background(), nil, &out); errno != 0 {
			t.Fatalf("getattr %q: %v", p, errno)
		}
		return out.Ino
	}
	for p, want := range map[string][]string{
		"":                 {".", "..", ".skillfs", "local"},
		"local":            {".", "..", "alpha", "team"},
		"local/alpha":      {".", "..", "SKILL.md", "refs"},
		"local/team/beta":  {".", "..", "SKILL.md", "data.txt", "lost.txt", "other.txt"},
		".skillfs":         {".", "..", "index.json", "index.md", "status.json", "control.json", "catalog.md", "servers"},
		".skillfs/servers": {".", "..", "local.md"},
	} {
		n := f.walk(t, p)
		ds, errno := n.Readdir(context.Background())
		if errno != 0 {
			t.Fatalf("readdir %q: %v", p, errno)
		}
		parent := path.Dir(p)
		if parent == "." {
			parent = "" // the root's ".." is itself
		}
		var got []string
		for ds.HasNext() {
			e, errno := ds.Next()
			if errno != 0 {
				t.Fatalf("readdir %q: %v", p, errno)
			}
			got = append(got, e.Name)
			wantMode := uint32(syscall.S_IFREG)
			if e.Name == "." || e.Name == ".." || !strings.Contains(e.Name[1:], ".") { // .skillfs is a directory
				wantMode = syscall.S_IFDIR
			}
			if e.Mode != wantMode || e.Ino == 0 {
				t.Errorf("readdir %q: %s mode %o ino %d", p, e.Name, e.Mode, e.Ino)
			}
			switch e.Name {
			case ".":
				if want := ino(p); e.Ino != want {
					t.Errorf("readdir %q: . has inode %d, stat says %d", p, e.Ino, want)
				}
			case "..":
				if want := ino(parent); e.Ino != want {
					t.Errorf("readdir %q: .. has inode %d, stat of %q says %d", p, e.Ino, parent, want)
				}
			}
		}
		ds.Close()
		if !slices.Equal(got, want) {
			t.Errorf("readdir %q = %v, want %v", p, got, want)
		}
		// Opening the directory lists it too, and the catalog alone
		// decides these, so the kernel may keep the listing.
		_, fl, errno := n.OpendirHandle(context.Background(), 0)
		if errno != 0 {
			t.Errorf("opendir %q: %v", p, errno)
		}
		if !strings.HasPrefix(p, ".skillfs") && fl&fuse.FOPEN_CACHE_DIR == 0 {
			t.Errorf("opendir %q: flags %#x lack FOPEN_CACHE_DIR", p, fl)
		}
	}
	if _, errno := f.walk(t, "local/alpha/SKILL.md").Readdir(context.Background()); errno != syscall.ENOTDIR {
		t.Errorf("readdir of a file: %v, want ENOTDIR", errno)
	}
}

func TestReadServesTheVerifiedBytes(t *testing.T) {
	f := newFixture(t, testFiles)
	for _, p := range []string{"alpha/SKILL.md", "team/beta/data.txt"} {
		n := f.walk(t, "local/"+p)
		for _, chunk := range []int{1, 3, 4096} {
			got, err := read(t, n, chunk)
			if err != nil || string(got) != testFiles[p] {
				t.Errorf("read %s in chunks of %d: %q, %v", p, chunk, got, err)
			}
		}
		// Past the end: no bytes, no error.
		rr, errno := n.Read(context.Background(), nil, make([]byte, 8), 1<<20)
		if b, _ := rr.Bytes(nil); errno != 0 || len(b) != 0 {
			t.Errorf("read %s past the end: %q, %v", p, b, errno)
		}
	}
	// Generated files are served by path.
	got, err := read(t, f.walk(t, ".skillfs/index.json"), 512)
	if err != nil || !bytes.Contains(got, []byte(`"skill://alpha/SKILL.md"`)) {
		t.Errorf("index.json: %v\n%s", err, got)
	}
	// A directory has no bytes.
	if _, errno := f.walk(t, "local/alpha").Read(context.Background(), nil, make([]byte, 8), 0); errno != syscall.EISDIR {
		t.Errorf("read of a directory: %v, want EISDIR", errno)
	}
}

func TestFailedReadIsEIOAndInterruptedReadIsEINTR(t *testing.T) {
	f := newFixture(t, testFiles)
	f.expect = []string{"read failed"}
	// Looked up before its server loses it: the kernel holds the inode.
	lost := f.walk(t, "local/team/beta/lost.txt")
	other := f.walk(t, "local/team/beta/other.txt")
	if err := os.Remove(filepath.Join(f.dir, "team/beta/lost.txt")); err != nil {
		t.Fatal(err)
	}
	if b, errno := read(t, lost, 4096); errno != syscall.EIO || len(b) != 0 {
		t.Errorf("read of a file the server lost: %q, %v; want EIO and no bytes", b, errno)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, errno := other.Read(ctx, nil, make([]byte, 64), 0); errno != syscall.EINTR {
		t.Errorf("read with the request interrupted: %v, want EINTR", errno)
	}
	// Not interrupted, the same file reads.
	if got, err := read(t, other, 64); err != nil || string(got) != testFiles["team/beta/other.txt"] {
		t.Errorf("other.txt after the interrupted read: %q, %v", got, err)
	}
}

// TestOpenForReadingAsksForNoHandle pins the answer that lets the kernel
// keep pages across opens (see Open).
func TestOpenForReadingAsksForNoHandle(t *testing.T) {
	f := newFixture(t, testFiles)
	fh, _, errno := f.walk(t, "local/alpha/SKILL.md").Open(context.Background(), syscall.O_RDONLY)
	if fh != nil || errno != syscall.ENOSYS {
		t.Errorf("open O_RDONLY: %v, %v; want no handle and ENOSYS", fh, errno)
	}
	if _, _, errno := f.walk(t, "local/alpha").Open(context.Background(), syscall.O_RDONLY); errno != syscall.EISDIR {
		t.Errorf("open of a directory as a file: %v, want EISDIR", errno)
	}
	if errno := f.walk(t, "local/alpha/SKILL.md").Flush(context.Background(), nil); errno != syscall.ENOSYS {
		t.Errorf("flush: %v, want ENOSYS", errno)
	}
	var st fuse.StatfsOut
	if errno := f.root.Statfs(context.Background(), &st); errno != 0 || st.NameLen != 255 || st.Bsize == 0 {
		t.Errorf("statfs: %+v, %v", st, errno)
	}
}

func TestXattrsAnswerSizeProbesAndShortBuffers(t *testing.T) {
	f := newFixture(t, testFiles)
	n := f.walk(t, "local/alpha/refs/a.md")
	ctx := context.Background()
	for name, want := range map[string]string{
		"user.skillfs.origin": "local",
		"user.skillfs.uri":    "skill://alpha/refs/a.md",
		"user.skillfs.skill":  "skill://alpha/SKILL.md",
	} {
		// The size probe (getxattr with size 0) learns the length.
		if sz, errno := n.Getxattr(ctx, name, nil); sz != uint32(len(want)) || errno != syscall.ERANGE {
			t.Errorf("getxattr %s size probe: %d, %v; want %d, ERANGE", name, sz, errno, len(want))
		}
		// One byte short: ERANGE and the size needed, nothing copied.
		short := bytes.Repeat([]byte{'#'}, len(want)-1)
		if sz, errno := n.Getxattr(ctx, name, short); sz != uint32(len(want)) || errno != syscall.ERANGE || strings.Trim(string(short), "#") != "" {
			t.Errorf("getxattr %s into %d bytes: %d, %v, %q", name, len(short), sz, errno, short)
		}
		for _, size := range []int{len(want), len(want) + 10} {
			buf := make([]byte, size)
			sz, errno := n.Getxattr(ctx, name, buf)
			if errno != 0 || string(buf[:sz]) != want {
				t.Errorf("getxattr %s into %d bytes: %q, %v; want %q", name, size, buf[:sz], errno, want)
			}
		}
	}
	// The digest is the entry's, known before any read.
	buf := make([]byte, 256)
	if sz, errno := n.Getxattr(ctx, "user.skillfs.digest", buf); errno != 0 || !strings.HasPrefix(string(buf[:sz]), "sha256:") {
		t.Errorf("digest: %q, %v", buf[:sz], errno)
	}
	if _, errno := n.Getxattr(ctx, "user.other", buf); errno != syscall.Errno(fuse.ENOATTR) {
		t.Errorf("an attribute skillfs does not set: %v, want ENODATA", errno)
	}

	// listxattr: the same contract over the NUL-separated names.
	sz, errno := n.Listxattr(ctx, nil)
	if errno != syscall.ERANGE || sz == 0 {
		t.Fatalf("listxattr size probe: %d, %v; want the size and ERANGE", sz, errno)
	}
	if got, errno := n.Listxattr(ctx, make([]byte, sz-1)); got != sz || errno != syscall.ERANGE {
		t.Errorf("listxattr one byte short: %d, %v; want %d, ERANGE", got, errno, sz)
	}
	list := make([]byte, sz+16)
	got, errno := n.Listxattr(ctx, list)
	if errno != 0 || got != sz || list[got-1] != 0 {
		t.Fatalf("listxattr: %d, %v; want %d NUL-terminated bytes", got, errno, sz)
	}
	names := strings.Split(strings.TrimSuffix(string(list[:got]), "\x00"), "\x00")
	for _, want := range []string{"user.skillfs.origin", "user.skillfs.uri", "user.skillfs.skill", "user.skillfs.digest", "user.skillfs.verified"} {
		if !slices.Contains(names, want) {
			t.Errorf("listxattr %v lacks %s", names, want)
		}
	}
	// Verified flips once the bytes have been read and checked.
	verified := func() string {
		b := make([]byte, 16)
		sz, errno := n.Getxattr(ctx, "user.skillfs.verified", b)
		if errno != 0 {
			t.Fatalf("verified: %v", errno)
		}
		return string(b[:sz])
	}
	if v := verified(); v != "no" {
		t.Errorf("verified before the read: %q", v)
	}
	if _, err := read(t, n, 64); err != nil {
		t.Fatal(err)
	}
	if v := verified(); v != "yes" {
		t.Errorf("verified after the read: %q", v)
	}

	// Generated files and the root carry no attributes: an empty list.
	for _, p := range []string{"", ".skillfs/index.json"} {
		if sz, errno := f.walk(t, p).Listxattr(ctx, nil); sz != 0 || errno != 0 {
			t.Errorf("listxattr %q: %d, %v; want an empty list", p, sz, errno)
		}
		if _, errno := f.walk(t, p).Getxattr(ctx, "user.skillfs.origin", buf); errno != syscall.Errno(fuse.ENOATTR) {
			t.Errorf("getxattr %q: %v, want ENODATA", p, errno)
		}
	}
	// A directory: origin and uri.
	if sz, errno := f.walk(t, "local/team").Getxattr(ctx, "user.skillfs.uri", buf); errno != 0 || string(buf[:sz]) != "skill://team" {
		t.Errorf("uri of local/team: %q, %v", buf[:sz], errno)
	}
}
