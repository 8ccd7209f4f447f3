package fs

import (
	"log/slog"
	"strings"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// directMountFlags: macFUSE always mounts through its own helper; the
// options (ro, nosuid, nodev, noexec) carry the same intent.
const directMountFlags = 0

// kernelNotifies: macFUSE does not support the notifications skillfs uses
// to invalidate the kernel's caches, so every mount runs as with
// Options.NoNotify.
const kernelNotifies = false

// directMount: macFUSE always mounts through its helper.
const directMount = false

// newServer mounts raw at mnt through macFUSE's helper.
func newServer(raw *rawFS, mnt string, mo *fuse.MountOptions, _ *slog.Logger) (*fuse.Server, error) {
	server, err := fuse.NewServer(raw, mnt, mo)
	if err != nil {
		return nil, &MountError{Mountpoint: mnt, Err: err, Problem: "macFUSE could not mount: " + strings.TrimSpace(err.Error()), Fix: "Check that its system extension is allowed in System Settings > Privacy & Security."}
	}
	return server, nil
}
