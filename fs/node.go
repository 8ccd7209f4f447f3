package fs

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/skillfs/skillfs/internal/vfs"
)

// CacheTimeout is how long the kernel may cache entries and attributes,
// and failed lookups in a directory the catalog alone decides: as long as
// the snapshot they come from, since every catalog swap tells the kernel
// what it changed (Mount.Invalidate), names gained included. A lookup that
// races a swap cannot outlive it either: the kernel's invalidation of a
// name waits for a lookup in flight in that directory. It is not forever
// only so that a notification lost to a kernel bug does not last: an hour,
// where a minute made every walk an agent repeated after a pause look up
// every name again (BENCHMARKS.md, issue 21).
const CacheTimeout = time.Hour

// negativeTimeout is how long a failed lookup is cached in a directory
// whose listing can change without a catalog swap (a server's directory
// reads, .skillfs's generated folders), where nothing tells the kernel of
// a name that appears.
const negativeTimeout = 10 * time.Second

// NoNotifyTimeout is how long the kernel may cache entries, attributes and
// failed lookups on a mount without kernel notifications (Options.NoNotify,
// always on macOS): nothing tells the kernel of a change there, so this
// bounds how long a name or size it cached can outlive one. Opens are
// checked against the current tree whatever the kernel cached (node.Open).
const NoNotifyTimeout = time.Second

// shared is what every node of one mount refers to.
type shared struct {
	v   *vfs.Core
	log *slog.Logger
	uid uint32
	gid uint32
	// noNotify: the kernel is never told of changes (see Options.NoNotify);
	// entryTimeout and negTimeout are what the kernel may cache for.
	noNotify     bool
	noXattrs     bool // see Options.NoXattrs
	entryTimeout time.Duration
	negTimeout   time.Duration
	// volatile maps the inode numbers of files whose size is not known yet
	// to their nodes (see rawFS.GetAttr), until the kernel forgets them.
	volatile sync.Map
	// dirs are the versions of the directories whose listing can change
	// without a catalog swap (see relist).
	dirs dirVersions
}

// node is the one node type: a directory or a file of the tree, by path.
// Behaviour comes from vfs; node only translates.
type node struct {
	gofs.Inode
	readOnly // the refusals (readonly.go)
	sh       *shared
	path     string // mount-relative; "" for the root and for files (see where)
	dir      bool
	// file is the version of a server's file this inode serves; nil for
	// directories and generated files, which are served by path.
	file *vfs.File
	ino  uint64
}

var (
	_ = (gofs.NodeLookuper)((*node)(nil))
	_ = (gofs.NodeReaddirer)((*node)(nil))
	_ = (gofs.NodeGetattrer)((*node)(nil))
	_ = (gofs.NodeOpener)((*node)(nil))
	_ = (gofs.NodeReader)((*node)(nil))
	_ = (gofs.NodeGetxattrer)((*node)(nil))
	_ = (gofs.NodeListxattrer)((*node)(nil))
	_ = (gofs.NodeStatfser)((*node)(nil))
	_ = (gofs.NodeOpendirHandler)((*node)(nil))
	_ = (gofs.NodeFlusher)((*node)(nil))
	_ = (gofs.NodeOnForgetter)((*node)(nil))
)

// where is the node's mount-relative path. A file node keeps none of its
// own: its File has it, and the kernel may hold tens of thousands.
func (n *node) where() string {
	if n.file != nil {
		return n.file.Path()
	}
	return n.path
}

// childPath is the mount-relative path of name in the directory at dir.
func childPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// parentPath is the mount-relative path of p's directory; the root is its
// own.
func parentPath(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

func (sh *shared) fill(a vfs.Attr, out *fuse.Attr) {
	out.Ino = a.Ino
	out.Uid = sh.uid
	out.Gid = sh.gid
	if a.Kind == vfs.KindDir {
		out.Mode = syscall.S_IFDIR | 0o555
		out.Nlink = 2
	} else {
		out.Mode = syscall.S_IFREG | 0o444
		out.Nlink = 1
		out.Size = uint64(a.Size)
		out.Blocks = (out.Size + 511) / 512
	}
	out.Blksize = 4096
	out.SetTimes(&a.Mtime, &a.Mtime, &a.Mtime)
}

func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	p := childPath(n.path, name)
	a, fl, err := n.sh.v.Lookup(ctx, p)
	if err != nil {
		out.SetEntryTimeout(n.sh.negativeTimeout(n.where()))
		return nil, toErrno(n.sh.log, "lookup", p, err)
	}
	n.sh.fill(a, &out.Attr)
	n.sh.relist(ctx, p, a, &out.Attr)
	if a.Dynamic {
		// Every open of a dynamic file looks it up again and gets a fetch
		// of its own.
		out.SetEntryTimeout(0)
	} else {
		out.SetEntryTimeout(n.sh.entryTimeout)
	}
	out.SetAttrTimeout(n.sh.attrTimeout(p, a))
	mode := uint32(syscall.S_IFREG)
	if a.Kind == vfs.KindDir {
		mode = syscall.S_IFDIR
	}
	child := &node{sh: n.sh, dir: a.Kind == vfs.KindDir, file: fl, ino: a.Ino}
	if fl == nil {
		child.path = p // a file's is its File's (where)
	}
	in := n.NewInode(ctx, child, gofs.StableAttr{Mode: mode, Ino: a.Ino})
	if got, ok := in.Operations().(*node); ok && got != child && fl != nil {
		// go-fuse kept the inode it had for this number; its node holds
		// its own reference to the same File.
		fl.Forget()
	} else if fl != nil && a.Volatile {
		n.sh.volatile.Store(a.Ino, child)
	}
	return in, 0
}

// OnForget lets go of what a file's version holds once the kernel has
// forgotten the inode.
func (n *node) OnForget() {
	if n.file != nil {
		n.sh.volatile.CompareAndDelete(n.ino, n)
		n.file.Forget()
	}
}

// attrTimeout: a size that is not known yet must not be cached; a
// directory whose listing can change without a swap is asked for again
// after relistTimeout (see relist).
func (sh *shared) attrTimeout(p string, a vfs.Attr) time.Duration {
	if a.Volatile {
		return 0
	}
	if sh.relisted(p, a) {
		return relistTimeout
	}
	return sh.entryTimeout
}

func (n *node) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	ls, errno := n.list(ctx)
	if errno != 0 {
		return nil, errno
	}
	return ls, 0
}

// list reads the directory's listing.
func (n *node) list(ctx context.Context) (*listStream, syscall.Errno) {
	ents, err := n.sh.v.ReadDir(ctx, n.where())
	if err != nil {
		return nil, toErrno(n.sh.log, "readdir", n.where(), err)
	}
	// Neither the kernel nor go-fuse adds "." and ".." to a FUSE
	// listing; go-fuse passes them through READDIRPLUS without a lookup.
	// A directory's inode number depends on its path alone, so the
	// parent's needs no lookup either.
	list := make([]fuse.DirEntry, 0, len(ents)+2)
	list = append(list,
		fuse.DirEntry{Name: ".", Ino: vfs.DirIno(n.where()), Mode: syscall.S_IFDIR},
		fuse.DirEntry{Name: "..", Ino: vfs.DirIno(parentPath(n.where())), Mode: syscall.S_IFDIR})
	for _, e := range ents {
		mode := uint32(syscall.S_IFREG)
		if e.Kind == vfs.KindDir {
			mode = syscall.S_IFDIR
		}
		list = append(list, fuse.DirEntry{Name: e.Name, Ino: e.Ino, Mode: mode})
	}
	return &listStream{entries: list, sum: listingSum(ents)}, 0
}

func (n *node) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	var a vfs.Attr
	if n.file != nil {
		a = n.file.Attr()
	} else {
		var err error
		if a, err = n.sh.v.Stat(ctx, n.where()); err != nil {
			return toErrno(n.sh.log, "getattr", n.where(), err)
		}
	}
	n.sh.fill(a, &out.Attr)
	n.sh.relist(ctx, n.where(), a, &out.Attr)
	out.SetTimeout(n.sh.attrTimeout(n.where(), a))
	return 0
}

func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	out.Bsize = 4096
	out.Frsize = 4096
	out.NameLen = 255
	return 0
}

// Open answers ENOSYS for reads: reads need no handle, and that answer
// tells the kernel to stop sending OPEN and RELEASE for this mount and to
// keep file pages cached across opens. A warm open+read+close then never
// reaches the daemon. What one open reads stays one version all the same:
// an inode is one version of a file (vfs.File), a changed entry is a new
// inode, and the old one's reads fail after the change. Opens for writing
// answer EROFS.
//
// Without kernel notifications (Options.NoNotify) nothing would ever drop
// those pages, so every open reaches the daemon instead: it is checked
// against the current tree (openCurrent) and answered with
// FOPEN_DIRECT_IO, so that the kernel keeps no page of the file and every
// read reaches the daemon too; a read of a file opened before a change then
// fails as "one open, one version" says, not served from pages the kernel
// kept.
func (n *node) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if n.dir {
		return nil, 0, syscall.EISDIR
	}
	if flags&(syscall.O_WRONLY|syscall.O_RDWR|syscall.O_TRUNC|syscall.O_APPEND|syscall.O_CREAT) != 0 {
		return nil, 0, syscall.EROFS
	}
	if !n.sh.noNotify {
		return nil, 0, syscall.ENOSYS
	}
	if errno := n.openCurrent(ctx); errno != 0 {
		return nil, 0, errno
	}
	return nil, fuse.FOPEN_DIRECT_IO, 0
}

func (n *node) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if n.file != nil {
		b, err := n.file.Read(ctx, off, len(dest))
		if err != nil {
			return nil, toErrno(n.sh.log, "read", n.where(), err)
		}
		return fuse.ReadResultData(b), 0
	}
	b, err := n.sh.v.ReadFile(ctx, n.where())
	if err != nil {
		return nil, toErrno(n.sh.log, "read", n.where(), err)
	}
	if off >= int64(len(b)) {
		return fuse.ReadResultData(nil), 0
	}
	end := min(off+int64(len(dest)), int64(len(b)))
	return fuse.ReadResultData(b[off:end]), 0
}

// Flush answers ENOSYS, which tells the kernel not to send FLUSH on every
// close: there is never anything to flush.
func (n *node) Flush(ctx context.Context, fh gofs.FileHandle) syscall.Errno {
	return syscall.ENOSYS
}

// OpendirHandle lists the directory once per open. Directories the
// catalog alone decides are returned with FOPEN_CACHE_DIR, so that the
// kernel keeps the listing until a catalog swap invalidates it; without
// kernel notifications nothing would, so none is kept. The others are
// listed anew on every open, without entry attributes (relistStream).
func (n *node) OpendirHandle(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	ds, errno := n.list(ctx)
	if errno != 0 {
		return nil, 0, errno
	}
	switch {
	case n.sh.noNotify:
		return ds, 0, 0
	case n.sh.v.DirCacheable(n.where()):
		return ds, fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE, 0
	}
	// The listing the kernel keeps now: its version is the one the next
	// attributes carry.
	n.sh.dirs.observe(vfs.DirIno(n.where()), ds.sum)
	return &relistStream{*ds}, 0, 0
}

func (n *node) xattrs(ctx context.Context) ([]vfs.Xattr, syscall.Errno) {
	xs, err := n.sh.v.Xattrs(ctx, n.where())
	if err != nil {
		return nil, toErrno(n.sh.log, "getxattr", n.where(), err)
	}
	return xs, 0
}

func (n *node) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	if n.sh.noXattrs {
		return 0, syscall.ENOSYS
	}
	if !strings.HasPrefix(attr, vfs.XattrPrefix) {
		// security.selinux, system.posix_acl_access…, asked by ls -l for
		// every file: no skillfs file has one, and nothing needs looking up.
		return 0, syscall.Errno(fuse.ENOATTR)
	}
	xs, errno := n.xattrs(ctx)
	if errno != 0 {
		return 0, errno
	}
	for _, x := range xs {
		if x.Name == attr {
			if len(dest) < len(x.Value) {
				return uint32(len(x.Value)), syscall.ERANGE
			}
			return uint32(copy(dest, x.Value)), 0
		}
	}
	return 0, syscall.Errno(fuse.ENOATTR)
}

func (n *node) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	if n.sh.noXattrs {
		return 0, syscall.ENOSYS
	}
	xs, errno := n.xattrs(ctx)
	if errno != 0 {
		return 0, errno
	}
	var b []byte
	for _, x := range xs {
		b = append(b, x.Name...)
		b = append(b, 0)
	}
	if len(dest) < len(b) {
		return uint32(len(b)), syscall.ERANGE
	}
	return uint32(copy(dest, b)), 0
}
