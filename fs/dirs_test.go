package fs

import (
	"context"
	"encoding/binary"
	"testing"
	"time"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// With kernel notifications the kernel is left to open directories and to
// keep their listings: OPENDIR answers ENOSYS, which it remembers for the
// mount. Without them, OPENDIR is served and nothing is kept.
func TestOpendirIsLeftToTheKernel(t *testing.T) {
	f := newFixture(t, testFiles)
	var out fuse.OpenOut
	if st := f.raw.OpenDir(nil, &fuse.OpenIn{InHeader: fuse.InHeader{NodeId: 1}}, &out); st != fuse.ENOSYS {
		t.Errorf("opendir of the root: %v, want ENOSYS", st)
	}
	f.withoutNotify()
	if st := f.raw.OpenDir(nil, &fuse.OpenIn{InHeader: fuse.InHeader{NodeId: 1}}, &out); st != fuse.OK || out.OpenFlags&fuse.FOPEN_CACHE_DIR != 0 {
		t.Errorf("opendir of the root without notifications: %v, flags %#x; want a handle, the listing not kept", st, out.OpenFlags)
	}
	f.raw.ReleaseDir(&fuse.ReleaseIn{InHeader: fuse.InHeader{NodeId: 1}, Fh: out.Fh})
}

// A directory whose listing can change without a catalog swap keeps its
// times while its listing stays the same (issue 38: a nanosecond later on
// every getattr), and its attributes are cached for relistTimeout, so that
// the kernel asks again and sees a change then. One the catalog decides
// keeps its mtime and is cached for CacheTimeout.
func TestRelistedDirectoriesKeepTheirTimes(t *testing.T) {
	f := newFixture(t, testFiles)
	mtimes := func(p string) (uint64, uint64, uint64) {
		n := f.walk(t, p)
		var a, b fuse.AttrOut
		if errno := n.Getattr(context.Background(), nil, &a); errno != 0 {
			t.Fatalf("getattr %s: %v", p, errno)
		}
		if errno := n.Getattr(context.Background(), nil, &b); errno != 0 {
			t.Fatalf("getattr %s: %v", p, errno)
		}
		ns := func(x fuse.AttrOut) uint64 { return x.Mtime*1e9 + uint64(x.Mtimensec) }
		if a.Ctime != a.Mtime || a.Ctimensec != a.Mtimensec {
			t.Errorf("%s: ctime %d.%09d, mtime %d.%09d; want one time", p, a.Ctime, a.Ctimensec, a.Mtime, a.Mtimensec)
		}
		return ns(a), ns(b), b.AttrValid
	}
	var relisted string
	for _, p := range []string{".skillfs/skills", "local/team", ".skillfs/pending"} {
		if !f.v.DirCacheable(p) {
			if _, _, err := f.v.Lookup(context.Background(), p); err == nil {
				relisted = p
				break
			}
		}
	}
	if relisted == "" {
		t.Fatal("the fixture has no directory listed anew on every open")
	}
	if a, b, valid := mtimes(relisted); b != a || valid != uint64(relistTimeout/time.Second) {
		t.Errorf("%s: mtime %d then %d, attributes cached %d s; want the same, cached %v", relisted, a, b, valid, relistTimeout)
	}
	if a, b, valid := mtimes("local/alpha"); a != b || valid != uint64(CacheTimeout/time.Second) {
		t.Errorf("local/alpha: mtime %d then %d, cached %d s; want the same, cached %v", a, b, valid, CacheTimeout)
	}
}

// A directory's version changes when, and only when, its listing does; a
// directory forgotten (past maxDirVersions) comes back under a version no
// listing had before.
func TestDirVersionsFollowListings(t *testing.T) {
	var d dirVersions
	if v := d.observe(7, 1); v != 0 {
		t.Errorf("first listing: version %d, want 0", v)
	}
	if v := d.observe(7, 1); v != 0 {
		t.Errorf("same listing: version %d, want 0", v)
	}
	v1 := d.observe(7, 2)
	if v1 == 0 {
		t.Error("changed listing kept version 0")
	}
	v2 := d.observe(7, 1)
	if v2 <= v1 {
		t.Errorf("listing back as before: version %d after %d, want a later one", v2, v1)
	}
	for i := range uint64(maxDirVersions) {
		d.observe(100+i, 1)
	}
	if v := d.observe(7, 1); v <= v2 {
		t.Errorf("after forgetting: version %d, want later than %d", v, v2)
	}
}

// A failed lookup reaches the kernel as the answer it keeps: success with
// node ID 0 and the negative timeout (an ENOENT answer it would forget at
// once, and ask again for the name on the next walk).
func TestFailedLookupsAreKeptByTheKernel(t *testing.T) {
	f := newFixture(t, testFiles)
	var out fuse.EntryOut
	if st := f.raw.Lookup(nil, &fuse.InHeader{NodeId: 1}, "elsewhere", &out); st != fuse.OK || out.NodeId != 0 || out.EntryTimeout() != CacheTimeout {
		t.Errorf("lookup of an absent name: %v, node %d, kept %v; want OK, node 0, kept %v", st, out.NodeId, out.EntryTimeout(), CacheTimeout)
	}
	var found fuse.EntryOut
	if st := f.raw.Lookup(nil, &fuse.InHeader{NodeId: 1}, "local", &found); st != fuse.OK || found.NodeId == 0 {
		t.Errorf("lookup of local: %v, node %d", st, found.NodeId)
	}
	f.withoutNotify()
	var bounded fuse.EntryOut
	if st := f.raw.Lookup(nil, &fuse.InHeader{NodeId: 1}, "elsewhere", &bounded); st != fuse.OK || bounded.NodeId != 0 || bounded.EntryTimeout() != NoNotifyTimeout {
		t.Errorf("without notifications: %v, node %d, kept %v; want OK, node 0, kept %v", st, bounded.NodeId, bounded.EntryTimeout(), NoNotifyTimeout)
	}
}

// Each READDIR lists the directory anew, so the request for a listing's
// end may come after the listing shrank (a server's directory read whose
// unlisted skill was refused in between): an offset past the end is the
// end, not EINVAL (which `ls` showed as "Invalid argument").
func TestReaddirPastTheEndOfAListingIsItsEnd(t *testing.T) {
	f := newFixture(t, testFiles)
	read := func(off uint64) (fuse.Status, int) {
		buf := make([]byte, 4096)
		out := fuse.NewDirEntryList(buf, off)
		in := &fuse.ReadIn{InHeader: fuse.InHeader{NodeId: 1}, Offset: off, Size: uint32(len(buf))}
		st := f.raw.ReadDir(nil, in, out)
		return st, len(out.Bytes())
	}
	st, n := read(0)
	if st != fuse.OK || n == 0 {
		t.Fatalf("readdir of the root from 0: %v, %d bytes; want entries", st, n)
	}
	if st, n := read(1000); st != fuse.OK || n != 0 {
		t.Errorf("readdir of the root from 1000: %v, %d bytes; want OK and no entries", st, n)
	}
}

// A directory listed anew on every open answers READDIRPLUS with its names
// and no entry attributes (node ID 0): attributes would make the kernel
// forget the POSIX ACLs it kept of each entry, which every warm `ls -lR`
// then asked for again. A directory the catalog decides, listed once per
// change, gives every entry's attributes with its name.
func TestRelistedListingsCarryNoEntryAttributes(t *testing.T) {
	f := newFixture(t, testFiles)
	lookup := func(parent uint64, name string) uint64 {
		var out fuse.EntryOut
		if st := f.raw.Lookup(nil, &fuse.InHeader{NodeId: parent}, name, &out); st != fuse.OK || out.NodeId == 0 {
			t.Fatalf("lookup %q: %v, node %d", name, st, out.NodeId)
		}
		return out.NodeId
	}
	plus := func(dir uint64) map[string]uint64 {
		buf := make([]byte, 1<<16)
		out := fuse.NewDirEntryList(buf, 0)
		in := &fuse.ReadIn{InHeader: fuse.InHeader{NodeId: dir}, Size: uint32(len(buf))}
		if st := f.raw.ReadDirPlus(nil, in, out); st != fuse.OK {
			t.Fatalf("readdirplus of node %d: %v", dir, st)
		}
		return parseDirPlus(t, out.Bytes())
	}
	root := uint64(1)
	if !f.v.DirCacheable("local") {
		t.Fatal("local should be a directory the catalog decides")
	}
	local := lookup(root, "local")
	for name, node := range plus(local) {
		if name != "." && name != ".." && node == 0 {
			t.Errorf("local/%s: listed without attributes; want them with the name", name)
		}
	}
	if f.v.DirCacheable("local/team") {
		t.Fatal("local/team should be listed anew on every open (a directory read)")
	}
	team := lookup(local, "team")
	got := plus(team)
	if _, ok := got["beta"]; !ok {
		t.Fatalf("local/team lists %v; want beta", got)
	}
	for name, node := range got {
		if node != 0 {
			t.Errorf("local/team/%s: listed with node %d; want no attributes (node 0)", name, node)
		}
	}
}

// parseDirPlus reads a READDIRPLUS answer: each entry is a fuse_entry_out
// (node ID first), then a fuse_dirent (ino, off, namelen, type, name),
// padded to 8 bytes.
func parseDirPlus(t *testing.T, b []byte) map[string]uint64 {
	t.Helper()
	const entryOut = int(unsafe.Sizeof(fuse.EntryOut{}))
	out := map[string]uint64{}
	for len(b) > 0 {
		if len(b) < entryOut+24 {
			t.Fatalf("truncated READDIRPLUS entry: %d bytes", len(b))
		}
		node := binary.LittleEndian.Uint64(b)
		n := int(binary.LittleEndian.Uint32(b[entryOut+16:]))
		out[string(b[entryOut+24:entryOut+24+n])] = node
		b = b[min(len(b), entryOut+24+(n+7)&^7):]
	}
	return out
}
