package fs

import (
	"context"
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// TestEveryMutationIsEROFS calls every mutating node method on a directory
// of each kind and on files, server's and generated, and wants EROFS.
func TestEveryMutationIsEROFS(t *testing.T) {
	f := newFixture(t, testFiles)
	ctx := context.Background()
	file := f.walk(t, "local/alpha/SKILL.md")
	for _, p := range []string{"", "local", "local/alpha", ".skillfs", "local/alpha/SKILL.md", ".skillfs/index.json"} {
		n := f.walk(t, p)
		var eo fuse.EntryOut
		for op, errno := range map[string]syscall.Errno{
			"setattr":     n.Setattr(ctx, nil, &fuse.SetAttrIn{}, &fuse.AttrOut{}),
			"write":       second(n.Write(ctx, nil, []byte("x"), 0)),
			"create":      fourth(n.Create(ctx, "new.md", syscall.O_WRONLY|syscall.O_CREAT, 0o644, &eo)),
			"mkdir":       second(n.Mkdir(ctx, "new", 0o755, &eo)),
			"mknod":       second(n.Mknod(ctx, "fifo", syscall.S_IFIFO|0o644, 0, &eo)),
			"link":        second(n.Link(ctx, file, "hard", &eo)),
			"symlink":     second(n.Symlink(ctx, "/etc/passwd", "sym", &eo)),
			"unlink":      n.Unlink(ctx, "SKILL.md"),
			"rmdir":       n.Rmdir(ctx, "alpha"),
			"rename":      n.Rename(ctx, "SKILL.md", f.root, "moved", 0),
			"setxattr":    n.Setxattr(ctx, "user.skillfs.verified", []byte("yes"), 0),
			"removexattr": n.Removexattr(ctx, "user.skillfs.origin"),
			"allocate":    n.Allocate(ctx, nil, 0, 4096, 0),
			"copy_range":  second(n.CopyFileRange(ctx, nil, 0, &file.Inode, nil, 0, 16, 0)),
		} {
			if errno != syscall.EROFS {
				t.Errorf("%s on %q: %v, want EROFS", op, p, errno)
			}
		}
		if n.dir {
			continue
		}
		for _, fl := range []int{syscall.O_WRONLY, syscall.O_RDWR, syscall.O_RDONLY | syscall.O_TRUNC, syscall.O_RDONLY | syscall.O_APPEND, syscall.O_RDONLY | syscall.O_CREAT} {
			if _, _, errno := n.Open(ctx, uint32(fl)); errno != syscall.EROFS {
				t.Errorf("open %q with flags %#o: %v, want EROFS", p, fl, errno)
			}
		}
		// Nothing to flush: fsync succeeds so that careful readers work.
		if errno := n.Fsync(ctx, nil, 0); errno != 0 {
			t.Errorf("fsync %q: %v", p, errno)
		}
	}
	// Nothing changed.
	if got, err := read(t, f.walk(t, "local/alpha/SKILL.md"), 4096); err != nil || string(got) != testFiles["alpha/SKILL.md"] {
		t.Errorf("SKILL.md after the attempts: %q, %v", got, err)
	}
}

// TestRawMutationsAreEROFS sends the kernel's mutating requests through
// go-fuse's node layer, which answers some requests itself when a node does
// not implement them (unlink and rmdir would succeed): what the kernel
// hears must be EROFS for every one.
func TestRawMutationsAreEROFS(t *testing.T) {
	f := newFixture(t, testFiles)
	raw := f.raw
	cancel := make(chan struct{})
	lookup := func(parent uint64, name string) uint64 {
		t.Helper()
		var out fuse.EntryOut
		if st := raw.Lookup(cancel, &fuse.InHeader{NodeId: parent}, name, &out); st != fuse.OK {
			t.Fatalf("lookup %s: %v", name, st)
		}
		return out.NodeId
	}
	dir := lookup(lookup(lookup(1, "local"), "team"), "beta")
	file := lookup(dir, "data.txt")
	hdr := func(id uint64) fuse.InHeader { return fuse.InHeader{NodeId: id} }
	var eo fuse.EntryOut
	for op, st := range map[string]fuse.Status{
		"unlink":      raw.Unlink(cancel, &fuse.InHeader{NodeId: dir}, "data.txt"),
		"rmdir":       raw.Rmdir(cancel, &fuse.InHeader{NodeId: 1}, "local"),
		"mkdir":       raw.Mkdir(cancel, &fuse.MkdirIn{InHeader: hdr(dir), Mode: 0o755}, "new", &eo),
		"mknod":       raw.Mknod(cancel, &fuse.MknodIn{InHeader: hdr(dir), Mode: syscall.S_IFIFO | 0o644}, "fifo", &eo),
		"create":      raw.Create(cancel, &fuse.CreateIn{InHeader: hdr(dir), Flags: syscall.O_WRONLY | syscall.O_CREAT, Mode: 0o644}, "new.md", &fuse.CreateOut{}),
		"symlink":     raw.Symlink(cancel, &fuse.InHeader{NodeId: dir}, "/etc/passwd", "sym", &eo),
		"link":        raw.Link(cancel, &fuse.LinkIn{InHeader: hdr(dir), Oldnodeid: file}, "hard", &eo),
		"rename":      raw.Rename(cancel, &fuse.RenameIn{InHeader: hdr(dir), Newdir: 1}, "data.txt", "moved"),
		"setattr":     raw.SetAttr(cancel, &fuse.SetAttrIn{SetAttrInCommon: fuse.SetAttrInCommon{InHeader: hdr(file), Valid: fuse.FATTR_SIZE}}, &fuse.AttrOut{}),
		"setxattr":    raw.SetXAttr(cancel, &fuse.SetXAttrIn{InHeader: hdr(file), Size: 3}, "user.skillfs.verified", []byte("yes")),
		"removexattr": raw.RemoveXAttr(cancel, &fuse.InHeader{NodeId: file}, "user.skillfs.origin"),
		"open rw":     raw.Open(cancel, &fuse.OpenIn{InHeader: hdr(file), Flags: syscall.O_RDWR}, &fuse.OpenOut{}),
		"open trunc":  raw.Open(cancel, &fuse.OpenIn{InHeader: hdr(file), Flags: syscall.O_WRONLY | syscall.O_TRUNC}, &fuse.OpenOut{}),
		"fallocate":   raw.Fallocate(cancel, &fuse.FallocateIn{InHeader: hdr(file), Length: 4096}),
		"write":       second(raw.Write(cancel, &fuse.WriteIn{InHeader: hdr(file)}, []byte("x"))),
		"copy_range":  second(raw.CopyFileRange(cancel, &fuse.CopyFileRangeIn{InHeader: hdr(file), NodeIdOut: file, Len: 16})),
	} {
		if st != fuse.EROFS {
			t.Errorf("%s: %v, want EROFS", op, st)
		}
	}
	// Nothing to flush: fsync succeeds, where go-fuse would answer ENOTSUP
	// for a node without Fsync.
	if st := raw.Fsync(cancel, &fuse.FsyncIn{InHeader: hdr(file)}); st != fuse.OK {
		t.Errorf("fsync: %v, want OK", st)
	}
	if st := raw.FsyncDir(cancel, &fuse.FsyncIn{InHeader: hdr(dir)}); st != fuse.OK {
		t.Errorf("fsyncdir: %v, want OK", st)
	}
	// The tree is as it was.
	lookup(dir, "data.txt")
	lookup(1, "local")
	// Absent: node ID 0, which the kernel reports as ENOENT (and keeps).
	eo = fuse.EntryOut{}
	if st := raw.Lookup(cancel, &fuse.InHeader{NodeId: dir}, "new.md", &eo); st != fuse.OK || eo.NodeId != 0 {
		t.Errorf("lookup of the file create tried to make: %v, node %d; want absent (OK, node 0)", st, eo.NodeId)
	}
}

func second[A, B any](_ A, b B) B                 { return b }
func fourth[A, B, C, D any](_ A, _ B, _ C, d D) D { return d }
