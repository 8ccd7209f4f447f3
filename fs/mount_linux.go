package fs

import "syscall"

// directMountFlags are the mount(2) flags of a direct mount (as root):
// the same read-only, inert mount the options ask fusermount3 for.
const directMountFlags = syscall.MS_RDONLY | syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_NOEXEC

// kernelNotifies: Linux drops cached entries, attributes and pages when
// told to (FUSE_NOTIFY_INVAL_*).
const kernelNotifies = true
