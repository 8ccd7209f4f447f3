package fs

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// fuseDevice is the kernel's FUSE device.
const fuseDevice = "/dev/fuse"

// The FUSE device's number (Linux's devices.txt: misc 229).
const fuseMajor, fuseMinor = 10, 229

// capSysAdmin is CAP_SYS_ADMIN's bit in /proc/self/status's CapEff.
const capSysAdmin = 21

const (
	fixPackage   = "Install FUSE: the fuse3 package (apt-get install fuse3, dnf install fuse3, apk add fuse3), and load its module (modprobe fuse)."
	fixContainer = "In a container, pass the device in: docker run --device /dev/fuse --cap-add SYS_ADMIN (podman takes the same flags)."
	fixModule    = "Load the FUSE module (modprobe fuse)."
	fixReplace   = "On a host, put the device back: rm /dev/fuse && mknod -m 0666 /dev/fuse c 10 229 (or reboot)."
	fixHelper    = "Install the fuse3 package (apt-get install fuse3, dnf install fuse3, apk add fuse3), which provides it."
)

// available checks what the mount will need, before any server starts:
// that dev is the FUSE device and this user can open it, then the
// privilege of the mount path skillfs takes: as root mount(2) itself
// (CAP_SYS_ADMIN, over this mount namespace), as anyone else the setuid
// helper fusermount3 or fusermount, found on PATH or in /bin as go-fuse
// looks, able to gain root.
func available(dev string, root bool, lookPath func(string) (string, error)) error {
	status, _ := os.ReadFile("/proc/self/status")
	var privilege error
	if root {
		if privilege = checkCapability(string(status)); privilege == nil {
			privilege = checkMountNamespace()
		}
	} else {
		privilege = checkHelper(lookPath, string(status))
	}
	return joinUnavailable(checkDevice(dev, root), privilege)
}

// joinUnavailable is one error for every problem found (nil for none), so
// that one round of fixes is enough.
func joinUnavailable(errs ...error) error {
	var found []*UnavailableError
	for _, err := range errs {
		if u, ok := err.(*UnavailableError); ok {
			found = append(found, u)
		}
	}
	switch len(found) {
	case 0:
		return nil
	case 1:
		return found[0]
	}
	j := &UnavailableError{Problem: found[0].Problem, Fix: found[0].Fix}
	for _, u := range found[1:] {
		j.Problem += "; and " + u.Problem
		for _, sentence := range strings.SplitAfter(u.Fix, ". ") {
			if sentence = strings.TrimSpace(sentence); !strings.Contains(j.Fix, sentence) {
				j.Fix += " " + sentence
			}
		}
	}
	return j
}

// checkDevice: dev is the FUSE device (character device 10:229) and opens
// read-write, as go-fuse (root) or fusermount3 (dropping to the user's
// identity first) opens it.
func checkDevice(dev string, root bool) error {
	var st syscall.Stat_t
	err := syscall.Stat(dev, &st)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return &UnavailableError{Problem: dev + " does not exist", Fix: fixPackage + " " + fixContainer}
	case err != nil:
		return &UnavailableError{Problem: fmt.Sprintf("%s cannot be used: %v", dev, err), Fix: fixPackage + " " + fixContainer}
	case st.Mode&syscall.S_IFMT != syscall.S_IFCHR:
		return &UnavailableError{Problem: fmt.Sprintf("%s is not the FUSE device (%s, not a character device)", dev, fileKind(st.Mode)),
			Fix: fixContainer + " " + fixReplace}
	}
	if maj, min := devMajor(st.Rdev), devMinor(st.Rdev); maj != fuseMajor || min != fuseMinor {
		return &UnavailableError{Problem: fmt.Sprintf("%s is not the FUSE device (it is character device %d:%d, the FUSE device is %d:%d; something was mounted or made over it)", dev, maj, min, fuseMajor, fuseMinor),
			Fix: fixContainer + " " + fixReplace}
	}
	fd, err := syscall.Open(dev, syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err == nil {
		syscall.Close(fd)
		return nil
	}
	return deviceOpenError(dev, &st, err, root)
}

// deviceOpenError says why the FUSE device would not open, and the fix.
func deviceOpenError(dev string, st *syscall.Stat_t, err error, root bool) error {
	mode := fmt.Sprintf("mode %04o, owner uid %d gid %d", st.Mode&0o7777, st.Uid, st.Gid)
	who := fmt.Sprintf("uid %d", os.Geteuid())
	switch {
	case errors.Is(err, syscall.EACCES) && !root:
		return &UnavailableError{Problem: fmt.Sprintf("%s (%s) cannot be opened by %s: %v", dev, mode, who, err),
			Fix: "Let every user open it, as the fuse3 package and udev set it up: chmod 0666 " + dev + " (opening it is harmless; mounting still needs fusermount3). " + fixContainer}
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		// Root is refused by the device cgroup (a container not given
		// the device) or a security module.
		return &UnavailableError{Problem: fmt.Sprintf("%s (%s) cannot be opened by %s: %v (the device is not allowed here: a container's device list, or a security policy)", dev, mode, who, err),
			Fix: fixContainer}
	case errors.Is(err, syscall.ENXIO), errors.Is(err, syscall.ENODEV):
		return &UnavailableError{Problem: fmt.Sprintf("%s cannot be opened: %v (the kernel has no FUSE driver loaded)", dev, err), Fix: fixModule + " " + fixContainer}
	}
	return &UnavailableError{Problem: fmt.Sprintf("%s (%s) cannot be opened by %s: %v", dev, mode, who, err), Fix: fixContainer}
}

// checkCapability: root mounts with mount(2), which needs CAP_SYS_ADMIN in
// the effective set; containers drop it unless given it. (The setuid
// helper would not help: what a container's bounding set lacks, no exec
// gains.) An unreadable status is left for the mount to report.
func checkCapability(status string) error {
	capEff, ok := statusField(status, "CapEff")
	if !ok {
		return nil
	}
	bits, err := strconv.ParseUint(capEff, 16, 64)
	if err != nil || bits&(1<<capSysAdmin) != 0 {
		return nil
	}
	return &UnavailableError{
		Problem: fmt.Sprintf("skillfs runs as root without CAP_SYS_ADMIN (CapEff %s), which mount(2) of a FUSE file system needs; containers drop it unless given it", capEff),
		Fix:     fixContainer + " Under systemd, keep CAP_SYS_ADMIN in CapabilityBoundingSet=.",
	}
}

// checkHelper: a user other than root mounts through fusermount3 (or
// fusermount), which must be there and able to become root: setuid root,
// on a file system that honours setuid, run by a process allowed new
// privileges.
func checkHelper(lookPath func(string) (string, error), status string) error {
	p, ok := lookHelper(lookPath, "/bin", "fusermount3", "fusermount")
	if !ok {
		return &UnavailableError{
			Problem: "the mount helper fusermount3 (or fusermount) is not on PATH or in /bin; a user other than root mounts through it",
			Fix:     fixHelper,
		}
	}
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		return nil // found by the test's lookPath only; the mount reports
	}
	if st.Mode&syscall.S_ISUID == 0 || st.Uid != 0 {
		return &UnavailableError{
			Problem: fmt.Sprintf("the mount helper %s is not setuid root (mode %04o, owner uid %d), so it cannot mount for a user", p, st.Mode&0o7777, st.Uid),
			Fix:     fmt.Sprintf("Restore it: chown root %s && chmod 4755 %s (reinstalling fuse3 does the same), or run skillfs as root.", p, p),
		}
	}
	var sfs syscall.Statfs_t
	if err := syscall.Statfs(p, &sfs); err == nil && sfs.Flags&stNoSUID != 0 {
		return &UnavailableError{
			Problem: fmt.Sprintf("the mount helper %s is on a file system mounted nosuid, which ignores its setuid bit", p),
			Fix:     "Put fusermount3 where setuid works (install fuse3 in the system's /usr/bin), or run skillfs as root.",
		}
	}
	if v, ok := statusField(status, "NoNewPrivs"); ok && v == "1" {
		return &UnavailableError{
			Problem: fmt.Sprintf("skillfs runs with no_new_privs (NoNewPrivs: 1), so the setuid mount helper %s cannot become root to mount", p),
			Fix:     "Start skillfs without it: under systemd drop NoNewPrivileges=yes (and the settings that imply it); in a container drop --security-opt no-new-privileges.",
		}
	}
	return nil
}

// stNoSUID is statfs(2)'s ST_NOSUID flag.
const stNoSUID = 0x2

// statusField is one field of /proc/self/status, trimmed.
func statusField(status, name string) (string, bool) {
	for line := range strings.Lines(status) {
		if k, v, ok := strings.Cut(line, ":"); ok && k == name {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// lookHelper finds a mount helper as go-fuse does: on PATH, else in dir.
func lookHelper(lookPath func(string) (string, error), dir string, names ...string) (string, bool) {
	for _, name := range names {
		if p, err := lookPath(name); err == nil {
			return p, true
		}
		if p, err := lookPath(filepath.Join(dir, name)); err == nil {
			return p, true
		}
	}
	return "", false
}

func fileKind(mode uint32) string {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return "a regular file"
	case syscall.S_IFDIR:
		return "a directory"
	case syscall.S_IFBLK:
		return "a block device"
	case syscall.S_IFIFO:
		return "a named pipe"
	case syscall.S_IFSOCK:
		return "a socket"
	}
	return "not a device"
}

// devMajor and devMinor split a Linux dev_t (glibc's gnu_dev_major/minor).
func devMajor(d uint64) uint32 { return uint32((d>>32)&0xfffff000 | (d>>8)&0xfff) }
func devMinor(d uint64) uint32 { return uint32((d>>12)&0xffffff00 | d&0xff) }

// The nsfs ioctls (linux/nsfs.h): _IO(0xb7, 1) and _IO(0xb7, 2).
const nsGetUserns, nsGetParent = 0xb701, 0xb702

// checkMountNamespace: root's CAP_SYS_ADMIN counts for mount(2) only over a
// mount namespace its user namespace owns (or an ancestor of the owner
// does). Root in a user namespace of its own that shares the host's mount
// namespace (unshare --user without --mount, some sandboxes) is refused
// with EPERM. When the kernel cannot tell (no nsfs), the mount reports.
func checkMountNamespace() error {
	owned, ok := mountNamespaceOwned()
	if !ok || owned {
		return nil
	}
	return &UnavailableError{
		Problem: "skillfs runs as root of a user namespace that does not own its mount namespace, so the kernel refuses mount(2) (EPERM) whatever its capabilities",
		Fix:     "Give it a mount namespace of its own with the user namespace (unshare --user --map-root-user --mount), or run it as the host's root. " + fixContainer,
	}
}

// mountNamespaceOwned reports whether this process's user namespace owns
// its mount namespace or is an ancestor of the one that does; ok is false
// when it cannot be told.
func mountNamespaceOwned() (owned, ok bool) {
	var self syscall.Stat_t
	if err := syscall.Stat("/proc/self/ns/user", &self); err != nil {
		return false, false
	}
	mnt, err := syscall.Open("/proc/self/ns/mnt", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false, false
	}
	ns, errno := nsIoctl(mnt, nsGetUserns)
	syscall.Close(mnt)
	for depth := 0; depth < 64; depth++ {
		switch {
		case errno == syscall.EPERM:
			// The owner is outside this namespace's scope: an ancestor
			// or a stranger.
			return false, true
		case errno != 0:
			return false, false
		}
		var st syscall.Stat_t
		err := syscall.Fstat(ns, &st)
		if err == nil && st.Dev == self.Dev && st.Ino == self.Ino {
			syscall.Close(ns)
			return true, true
		}
		parent, e := nsIoctl(ns, nsGetParent)
		syscall.Close(ns)
		if err != nil {
			return false, false
		}
		ns, errno = parent, e
	}
	return false, false
}

func nsIoctl(fd int, req uintptr) (int, syscall.Errno) {
	r, _, errno := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), req, 0)
	return int(r), errno
}
