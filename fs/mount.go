package fs

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/skillfs/skillfs/internal/vfs"
)

// Options configure a mount.
type Options struct {
	// Debug turns on go-fuse's request traces (to Logger, at Debug).
	Debug bool
	// AllowOther lets other users see the mount (needs user_allow_other).
	AllowOther bool
	// NoNotify serves the mount for a kernel that cannot be told of
	// changes (macOS, where it is always on; a hidden flag on Linux, for
	// tests): no notification is ever sent, entries, attributes and failed
	// lookups are cached for NoNotifyTimeout only, no listing is kept across
	// opens, files are opened for direct I/O (no page is kept; every read
	// is checked) and every open is checked against the current tree. A changed, removed or revoked file is then never served, and its
	// old name and attributes are not seen NoNotifyTimeout after the change.
	NoNotify bool
	// NoXattrs answers every getxattr and listxattr with ENOSYS, which the
	// kernel takes as "this filesystem has none" and stops asking for the
	// whole mount: `ls -l` then costs no round trip per file for
	// security.selinux and the POSIX ACLs, and the user.skillfs.*
	// attributes are gone (EOPNOTSUPP).
	NoXattrs bool
	Logger   *slog.Logger
}

// A Mount is a live skillfs mount.
type Mount struct {
	server   *fuse.Server
	root     *node
	log      *slog.Logger
	notify   chan vfs.Change
	done     chan struct{}
	stopOnce sync.Once
}

// MountOptions returns the kernel mount options skillfs uses; exported for
// tests and the docs.
func MountOptions() []string {
	return []string{"ro", "nosuid", "nodev", "noexec", "default_permissions"}
}

// Start mounts v at mountpoint and serves it until Unmount. As root it
// mounts directly; otherwise it needs fusermount3 (or fusermount).
func Start(mountpoint string, v *vfs.Core, opts Options) (*Mount, error) {
	raw, mo := newFS(v, opts)
	server, err := newServer(raw, mountpoint, &mo, opts.Logger)
	if err != nil {
		return nil, err
	}
	raw.server = server
	go server.Serve()
	if err := server.WaitMount(); err != nil {
		return nil, fmt.Errorf("mount %s: %w", mountpoint, err)
	}
	m := &Mount{server: server, root: raw.root, log: raw.sh.log, notify: make(chan vfs.Change, 64), done: make(chan struct{})}
	if raw.sh.noNotify {
		// The kernel cannot be told: short timeouts and checked opens
		// bound what it keeps (see Options.NoNotify).
		return m, nil
	}
	go m.invalidator()
	// Catalog swaps before this point needed no invalidation: the kernel
	// knew nothing yet.
	unsubscribe := v.Subscribe(m.Invalidate)
	go func() { <-m.done; unsubscribe() }()
	return m, nil
}

// newFS builds the node tree over v and the go-fuse file system that serves
// it, without mounting it: Start mounts what it returns, and fs's tests call
// its nodes and its raw operations directly, without a kernel.
func newFS(v *vfs.Core, opts Options) (*rawFS, fuse.MountOptions) {
	lg := opts.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	sh := &shared{v: v, log: lg, uid: uint32(os.Geteuid()), gid: uint32(os.Getegid()),
		noNotify: opts.NoNotify || !kernelNotifies, noXattrs: opts.NoXattrs, entryTimeout: CacheTimeout, negTimeout: negativeTimeout}
	if sh.noNotify {
		sh.entryTimeout, sh.negTimeout = NoNotifyTimeout, NoNotifyTimeout
	}
	root := &node{sh: sh, path: "", dir: true}
	neg := sh.negTimeout
	mo := fuse.MountOptions{
		FsName:     "skillfs",
		Name:       "skillfs",
		Options:    MountOptions(),
		AllowOther: opts.AllowOther,
		// As root, mount(2) and nothing else, so that its error is the
		// one reported (newServer); go-fuse's fallback to fusermount
		// would hide it (it logs it under Debug only).
		DirectMountStrict: directMount && os.Geteuid() == 0,
		DirectMountFlags:  directMountFlags,
		Debug:             opts.Debug,
		Logger:            log.New(slogWriter{lg}, "", 0),
		MaxReadAhead:      128 << 10,
		// The kernel queues reads (and readahead) as background requests;
		// past this many in flight it holds every further one back, for
		// every origin alike. go-fuse's default of 12 let a dozen reads
		// hung on one stalled server stall the whole mount. The kernel
		// lowers it to fs.fuse.max_user_bgreq for unprivileged mounts.
		MaxBackground: 1024,
		DisableXAttrs: false,
		EnableAcl:     true,
	}
	// No EntryTimeout or AttrTimeout here: go-fuse would put those in place
	// of every zero a node returns, and zero is how a node says "do not
	// cache" (generated files, sizes not known yet). Nodes set their own.
	nodeFS := gofs.NewNodeFS(root, &gofs.Options{
		MountOptions:    mo,
		NegativeTimeout: &neg,
		UID:             sh.uid,
		GID:             sh.gid,
		RootStableAttr:  &gofs.StableAttr{Ino: 1},
		Logger:          log.New(slogWriter{lg}, "", 0),
	})
	return &rawFS{RawFileSystem: nodeFS, sh: sh, root: root}, mo
}

// Invalidate tells the kernel to forget what a catalog swap changed. It does
// not block: notifications are delivered by a goroutine of their own, since
// a notification sent while the kernel waits on a read of the same pages
// would deadlock.
func (m *Mount) Invalidate(c vfs.Change) {
	select {
	case m.notify <- c:
	case <-m.done:
		c.Done()
	default:
		// The queue is full: deliver this one from a goroutine rather than
		// drop it.
		go func() {
			select {
			case m.notify <- c:
			case <-m.done:
				c.Done()
			}
		}()
	}
}

func (m *Mount) invalidator() {
	for {
		select {
		case <-m.done:
			return
		case c := <-m.notify:
			for _, p := range c.Files {
				if in := m.find(p); in != nil {
					in.NotifyContent(0, 0)
				}
				if parent, name := m.parent(p); parent != nil {
					parent.NotifyEntry(name)
				}
			}
			for _, p := range c.Dirs {
				m.refreshDir(p)
			}
			// The names each directory gained or lost: the kernel may
			// hold a negative entry for one, a positive one for the other.
			for _, ps := range [][]string{c.Added, c.Removed} {
				for _, p := range ps {
					if parent, name := m.parent(p); parent != nil {
						parent.NotifyEntry(name)
					}
				}
			}
			c.Done()
		}
	}
}

// find returns the inode the kernel knows at path p, or nil.
func (m *Mount) find(p string) *gofs.Inode {
	in := &m.root.Inode
	if p == "" {
		return in
	}
	for _, name := range strings.Split(p, "/") {
		in = in.GetChild(name)
		if in == nil {
			return nil
		}
	}
	return in
}

func (m *Mount) parent(p string) (*gofs.Inode, string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return &m.root.Inode, p
	}
	return m.find(p[:i]), p[i+1:]
}

// refreshDir invalidates a directory's attributes and listing; the entries
// it gained or lost come with the Change (Added, Removed).
func (m *Mount) refreshDir(p string) {
	in := m.find(p)
	if in == nil {
		// The kernel may hold a negative entry for it.
		if parent, name := m.parent(p); parent != nil && p != "" {
			parent.NotifyEntry(name)
		}
		return
	}
	in.NotifyContent(0, 0)
}

// Unmount detaches the mount. When it is busy, it fails with EBUSY; see
// UnmountLazy. The kernel lets go of a file closed a moment ago on its own
// time (a process that exits may close its files from a work queue, which a
// loaded machine runs late), so Unmount tries for about a second (go-fuse's
// own tries take 0.3 s) before it says busy.
func (m *Mount) Unmount() error {
	deadline := time.Now().Add(unmountPatience)
	for {
		err := m.server.Unmount()
		if err == nil {
			m.stop()
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// unmountPatience is how long Unmount keeps trying a busy mount.
const unmountPatience = time.Second

// stop marks the mount gone. Unmount and Wait's return can race to it
// (an unmount we asked for also ends the server's loop): once only.
func (m *Mount) stop() { m.stopOnce.Do(func() { close(m.done) }) }

// Wait blocks until the mount is gone (unmounted by us or by the user).
func (m *Mount) Wait() {
	m.server.Wait()
	m.stop()
}

// slogWriter adapts go-fuse's log.Logger output to slog at Debug.
type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	w.l.Debug(strings.TrimRight(string(p), "\n"), "op", "fuse")
	return len(p), nil
}

// rawFS sees the kernel's requests before go-fuse's node layer does, for the
// one thing the node API hides: whether a GETATTR comes from a read.
type rawFS struct {
	fuse.RawFileSystem
	sh   *shared
	root *node
	// server is set once mounted, before the first request (see readDir).
	server *fuse.Server
}

// GetAttr: before it reads a file, the kernel asks for its attributes with
// the file's handle (FUSE_GETATTR_FH); stat(2) asks without. A file whose
// size is not known yet (older SEP revision, dynamic skills) is loaded and
// verified at that moment — it is about to be read — so that the kernel
// reads it with its true size. A stat still fetches nothing.
func (r *rawFS) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	st := r.RawFileSystem.GetAttr(cancel, in, out)
	if st != fuse.OK || in.Flags()&fuse.FUSE_GETATTR_FH == 0 {
		return st
	}
	v, ok := r.sh.volatile.Load(out.Ino)
	if !ok {
		return st
	}
	ctx, stop := cancelContext(cancel)
	defer stop()
	if err := v.(*node).file.Load(ctx); err != nil {
		if ctx.Err() != nil {
			// Interrupted: the attributes held carry a placeholder size,
			// and a kernel told it would read the file against it (pages
			// of zeros past the true end). EINTR makes the reader ask
			// again (Go and Python do on their own), and the fetch, which
			// goes on without this request, answers the retry.
			return fuse.Status(syscall.EINTR)
		}
		// The read that follows reports the error.
		return st
	}
	return r.RawFileSystem.GetAttr(cancel, in, out)
}

// Ioctl answers ENOTTY to every ioctl, before go-fuse's node layer: a skill
// file is not a terminal or a device, and the question that matters is
// isatty's TCGETS, which Python's open() and many other readers ask on
// every open. The kernel forwards each ioctl on a FUSE file to the daemon
// whatever it answered before (ENOSYS is turned into ENOTTY for the caller
// and not remembered, and no mount option or INIT flag stops it), so the
// round trip cannot be avoided; this keeps skillfs's share of it to
// nothing — no inode lookup, no allocation, no lock — and fixes the answer
// whatever go-fuse's default becomes. See BENCHMARKS.md for what was
// measured.
func (r *rawFS) Ioctl(cancel <-chan struct{}, in *fuse.IoctlIn, inbuf []byte, out *fuse.IoctlOut, outbuf []byte) fuse.Status {
	return fuse.Status(syscall.ENOTTY)
}

// cancelContext turns go-fuse's interrupt channel into a context.
func cancelContext(cancel <-chan struct{}) (context.Context, func()) {
	ctx, stop := context.WithCancel(context.Background())
	go func() {
		select {
		case <-cancel:
			stop()
		case <-ctx.Done():
		}
	}()
	return ctx, stop
}
