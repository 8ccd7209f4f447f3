package fs

// directMountFlags: macFUSE always mounts through its own helper; the
// options (ro, nosuid, nodev, noexec) carry the same intent.
const directMountFlags = 0

// kernelNotifies: macFUSE does not support the notifications skillfs uses
// to invalidate the kernel's caches, so every mount runs as with
// Options.NoNotify.
const kernelNotifies = false
