package fs

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
)

// fuseDevice is the kernel's FUSE device.
const fuseDevice = "/dev/fuse"

const (
	fixPackage   = "Install FUSE: the fuse3 package (apt-get install fuse3, dnf install fuse3, apk add fuse3), and load its module (modprobe fuse)."
	fixContainer = "In a container, pass the device in: docker run --device /dev/fuse --cap-add SYS_ADMIN (podman takes the same flags)."
)

// available: the device must exist and be a character device (root mounts
// with mount(2) on it); anyone else mounts through the setuid helper,
// fusermount3 or fusermount, found on PATH or in /bin as go-fuse looks.
func available(dev string, root bool, lookPath func(string) (string, error)) error {
	fi, err := os.Stat(dev)
	switch {
	case errors.Is(err, iofs.ErrNotExist):
		return &UnavailableError{Problem: dev + " does not exist", Fix: fixPackage + " " + fixContainer}
	case err != nil:
		return &UnavailableError{Problem: fmt.Sprintf("%s cannot be used: %v", dev, err), Fix: fixPackage + " " + fixContainer}
	case fi.Mode()&os.ModeCharDevice == 0:
		return &UnavailableError{Problem: dev + " is not the FUSE device (not a character device)", Fix: fixContainer + " " + fixPackage}
	}
	if root {
		return nil
	}
	if _, ok := lookHelper(lookPath, "/bin", "fusermount3", "fusermount"); !ok {
		return &UnavailableError{
			Problem: "the mount helper fusermount3 (or fusermount) is not on PATH or in /bin; a user other than root mounts through it",
			Fix:     "Install the fuse3 package (apt-get install fuse3, dnf install fuse3, apk add fuse3), which provides it.",
		}
	}
	return nil
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
