package fs

import (
	"context"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// readOnly refuses every operation that would change the tree: each
// answers EROFS, but Fsync, which succeeds (there is nothing to flush).
// The refusals are made here, in the node type, and not only through the
// ro mount option: go-fuse answers some operations itself when a node does
// not implement them (unlink, for one, would "succeed"). node embeds
// readOnly by value, so that go-fuse's interface checks find these methods
// on every node, promoted, as the assertions below check at compile time.
// It holds nothing: the answer is the same for every node, directory or
// file.
type readOnly struct{}

var (
	_ = (gofs.NodeSetattrer)((*node)(nil))
	_ = (gofs.NodeWriter)((*node)(nil))
	_ = (gofs.NodeCreater)((*node)(nil))
	_ = (gofs.NodeMkdirer)((*node)(nil))
	_ = (gofs.NodeMknoder)((*node)(nil))
	_ = (gofs.NodeLinker)((*node)(nil))
	_ = (gofs.NodeSymlinker)((*node)(nil))
	_ = (gofs.NodeUnlinker)((*node)(nil))
	_ = (gofs.NodeRmdirer)((*node)(nil))
	_ = (gofs.NodeRenamer)((*node)(nil))
	_ = (gofs.NodeSetxattrer)((*node)(nil))
	_ = (gofs.NodeRemovexattrer)((*node)(nil))
	_ = (gofs.NodeAllocater)((*node)(nil))
	_ = (gofs.NodeCopyFileRanger)((*node)(nil))
	_ = (gofs.NodeFsyncer)((*node)(nil))
)

func (readOnly) Setattr(ctx context.Context, f gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return syscall.EROFS
}

func (readOnly) Write(ctx context.Context, f gofs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	return 0, syscall.EROFS
}

func (readOnly) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EROFS
}

func (readOnly) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

func (readOnly) Mknod(ctx context.Context, name string, mode uint32, dev uint32, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

func (readOnly) Link(ctx context.Context, target gofs.InodeEmbedder, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

func (readOnly) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

func (readOnly) Unlink(ctx context.Context, name string) syscall.Errno { return syscall.EROFS }

func (readOnly) Rmdir(ctx context.Context, name string) syscall.Errno { return syscall.EROFS }

func (readOnly) Rename(ctx context.Context, name string, newParent gofs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	return syscall.EROFS
}

func (readOnly) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	return syscall.EROFS
}

func (readOnly) Removexattr(ctx context.Context, attr string) syscall.Errno { return syscall.EROFS }

func (readOnly) Allocate(ctx context.Context, f gofs.FileHandle, off uint64, size uint64, mode uint32) syscall.Errno {
	return syscall.EROFS
}

func (readOnly) CopyFileRange(ctx context.Context, fhIn gofs.FileHandle, offIn uint64, out *gofs.Inode, fhOut gofs.FileHandle, offOut uint64, len uint64, flags uint64) (uint32, syscall.Errno) {
	return 0, syscall.EROFS
}

// Fsync has nothing to flush; it succeeds so that readers that fsync do not fail.
func (readOnly) Fsync(ctx context.Context, f gofs.FileHandle, flags uint32) syscall.Errno { return 0 }
