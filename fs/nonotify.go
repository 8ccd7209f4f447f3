package fs

import (
	"context"
	"syscall"

	"github.com/skillfs/skillfs/internal/vfs"
)

// openCurrent checks an open of a server's file, on a mount without kernel
// notifications, against the current tree: the kernel may have kept the
// name for up to NoNotifyTimeout after the file changed or left the tree,
// and nothing told it. An inode is one version of a file, so the open is
// current when a lookup of its path now gives the same inode number.
//
// A file no longer in the tree (removed, revoked, no longer approved)
// answers what a lookup would, ENOENT. A file whose entry changed answers
// ESTALE: Linux then walks the path again with LOOKUP_REVAL, which asks
// the daemon, gets the new version's inode and opens that, so the reader
// gets the new bytes at once; a kernel that does not retry reports ESTALE
// until the name expires. Generated files need no check: they are served
// by path and never cached.
func (n *node) openCurrent(ctx context.Context) syscall.Errno {
	if n.file == nil {
		return 0
	}
	p := n.where()
	a, err := n.sh.v.Stat(ctx, p)
	if err != nil {
		return toErrno(n.sh.log, "open", p, err)
	}
	if a.Kind == vfs.KindDir {
		return syscall.ESTALE
	}
	// A dynamic file's inode is one fetch, not the entry's version; its
	// name is never cached, so each open has looked it up already.
	if a.Ino != n.ino && !n.file.Attr().Dynamic {
		return syscall.ESTALE
	}
	return 0
}
