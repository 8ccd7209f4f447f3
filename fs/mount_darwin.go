package fs

// directMountFlags: macFUSE always mounts through its own helper; the
// options (ro, nosuid, nodev, noexec) carry the same intent.
const directMountFlags = 0
