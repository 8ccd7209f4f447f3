// Package fs adapts package vfs to go-fuse; it holds no behaviour of its
// own beyond what the kernel needs.
//
// Layout (see vfs for the model):
//
//	MOUNT/
//	  .skillfs/index.json, index.md, status.json   generated, never from a server
//	  .skillfs/control.json                        the control socket's path and pid
//	  LABEL/                                        one directory per configured server
//	    a/b/SKILL.md                                skill://a/b/SKILL.md served by LABEL
//	    @github/owner/repo/x/SKILL.md               github://owner/repo/x/SKILL.md
//
// Files are 0444 and directories 0555, owned by the user who mounted; there
// are no symlinks or special files and no exec bits. The mount is ro,
// nosuid, nodev, noexec, with default_permissions so that the kernel itself
// enforces the modes. Every mutating operation answers EROFS, guarded in the
// node types as well as by the ro option.
//
// Caching. Bytes are immutable per digest, so the kernel may keep them:
// Open answers ENOSYS, which tells the kernel to stop sending OPEN, FLUSH
// and RELEASE for this mount and to keep file pages across opens, so a warm
// open+read+close never reaches the daemon. OPENDIR answers ENOSYS too
// (dirs.go): the kernel then keeps every listing, and the directories
// whose listing can change without a catalog swap keep their attributes
// for relistTimeout and get a later mtime when their listing has changed,
// which makes the kernel list them anew. Entries, attributes and failed
// lookups in directories the catalog decides are cached for CacheTimeout
// (an hour); when a catalog swap changes a file or a directory, the
// kernel's entries, attributes, listings and pages for it, and its
// negative entries for the names it added, are invalidated (Notify*) at
// once. POSIX ACLs are enabled so that the kernel keeps the answer "none"
// that `ls -l` asks for on every file. A file whose size the server did not
// declare (older SEP revision) shows the per-file cap until it has been
// read and verified, with attributes that are never cached; it is fetched
// when the kernel asks for its attributes on behalf of a read (rawFS), so
// the reader sees its true size. Inode numbers are
// derived from the origin and path and are stable across remounts.
//
// Without kernel notifications (macOS, whose macFUSE does not support them;
// Options.NoNotify, the hidden --no-notify flag, on Linux) none of the above
// can be invalidated, so none of it is kept for long: entries, attributes
// and failed lookups are cached for NoNotifyTimeout (1 s), OPENDIR is
// answered and directories get no FOPEN_CACHE_DIR, and Open answers every open itself, with
// FOPEN_DIRECT_IO (the kernel keeps no page: every read reaches the
// daemon, and a read after a change fails as for any open file), after
// checking it against the current tree: ENOENT for a file that left it,
// ESTALE for an inode of an older version (Linux then looks the path up
// again and opens the new one). No notification is ever sent. Direct I/O
// costs shared mmap: MAP_SHARED fails with ENODEV on Linux (go-fuse does
// not ask for FUSE_DIRECT_IO_ALLOW_MMAP); MAP_PRIVATE works.
//
// Before a mount. Available checks, before any server starts, what the
// mount will need (available_linux.go): /dev/fuse is character device
// 10:229 and opens read-write for this user; as root, CAP_SYS_ADMIN is in
// the effective set and the user namespace owns the mount namespace; as
// anyone else, fusermount3 (or fusermount) is on PATH or in /bin, setuid
// root, on a file system that honours setuid, with no_new_privs off. Every
// problem found is one UnavailableError, each with its fix. As root, Start
// mounts with mount(2) alone (DirectMountStrict), so that a refusal the
// checks cannot foresee (AppArmor, seccomp) is a MountError naming its
// errno; an installed helper is tried after it, as go-fuse would.
//
// Errors a user sees:
//
//	ENOENT  the path is not in the tree (not listed, rejected, or outside a manifest)
//	ESTALE  without kernel notifications (macOS): an open of a name the kernel
//	        still holds for an older version of the file; open it again
//	EIO     the file exists but its bytes could not be served verified: digest,
//	        size or frontmatter mismatch, server offline, over budget or limits,
//	        timeout; the reason is logged and shown in .skillfs/index.json
//	EINTR   the read was interrupted before the bytes arrived
//	EROFS   any attempt to write, create, remove, rename, chmod or set xattrs
//	ENODATA an extended attribute skillfs does not set
//	ENOTTY  any ioctl (isatty asks one on every open by Python and others):
//	        a skill file is not a terminal; the kernel forwards each one to
//	        the daemon, which answers it before anything else
package fs
