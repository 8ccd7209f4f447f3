package fs

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"log/slog"
	"os/exec"
	"strings"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// directMountFlags are the mount(2) flags of a direct mount (as root):
// the same read-only, inert mount the options ask fusermount3 for.
const directMountFlags = syscall.MS_RDONLY | syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_NOEXEC

// kernelNotifies: Linux drops cached entries, attributes and pages when
// told to (FUSE_NOTIFY_INVAL_*).
const kernelNotifies = true

// directMount: as root, Linux mounts with mount(2) itself.
const directMount = true

// newServer mounts raw at mnt. As root it is mount(2) alone first, whose
// errno is the cause a user needs (go-fuse's own fallback to fusermount
// would report the helper's failure instead, or that it is not installed);
// where a helper is installed it is tried next, as go-fuse would, and both
// failures are reported if it fails too.
func newServer(raw *rawFS, mnt string, mo *fuse.MountOptions, lg *slog.Logger) (*fuse.Server, error) {
	server, err := fuse.NewServer(raw, mnt, mo)
	if err == nil {
		return server, nil
	}
	if !mo.DirectMountStrict {
		return nil, helperMountError(mnt, err)
	}
	direct := directMountError(mnt, err)
	helper, ok := lookHelper(exec.LookPath, "/bin", "fusermount3", "fusermount")
	if !ok {
		return nil, direct
	}
	mo.DirectMountStrict = false
	server, err = fuse.NewServer(raw, mnt, mo)
	if err != nil {
		return nil, fmt.Errorf("%w; %s failed too: %v", direct, helper, strings.TrimSpace(err.Error()))
	}
	if lg != nil {
		lg.Warn("mount(2) failed; mounted through the helper instead", "op", "mount", "path", mnt, "helper", helper, "err", direct)
	}
	return server, nil
}

// directMountError names mount(2)'s errno, what it means for a FUSE mount,
// and the fix.
func directMountError(mnt string, err error) error {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return fmt.Errorf("mount %s: %w", mnt, err)
	}
	why, fix := "", ""
	switch errno {
	case syscall.EPERM, syscall.EACCES:
		why = "this process may not mount here: a security policy (seccomp, AppArmor, SELinux) forbids it, or its user namespace does not own the mount namespace"
		fix = "In a container: docker run --device /dev/fuse --cap-add SYS_ADMIN, plus --security-opt apparmor=unconfined where AppArmor confines containers (podman takes the same flags)."
	case syscall.EINVAL:
		why = "the kernel rejected the FUSE mount: /dev/fuse is not the FUSE device, or it refuses one of the options"
		fix = "Check that /dev/fuse is character device 10:229 (ls -l /dev/fuse) and that the kernel log (dmesg) says which option it refused."
	case syscall.ENODEV:
		why = "the kernel has no FUSE file system type"
		fix = "Load the FUSE module (modprobe fuse)."
	default:
		why, fix = "the mount failed", "Run again with --debug for go-fuse's trace."
	}
	return &MountError{Mountpoint: mnt, Err: errno, Problem: fmt.Sprintf("mount(2) failed: %v (%s); %s", errno, unix.ErrnoName(errno), why), Fix: fix}
}

// helperMountError: the mount helper's own message went to stderr (go-fuse
// gives it the daemon's); what comes back is only its exit status.
func helperMountError(mnt string, err error) error {
	msg := strings.TrimSpace(err.Error())
	if errors.Is(err, iofs.ErrNotExist) {
		return &MountError{Mountpoint: mnt, Err: err, Problem: "the mount helper fusermount3 (or fusermount) is not installed: " + msg, Fix: fixHelper}
	}
	return &MountError{Mountpoint: mnt, Err: err, Problem: "the mount helper failed: " + msg, Fix: "Its own message, just before this one (in the log with --daemon), says why."}
}
