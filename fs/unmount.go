package fs

import (
	"os"
	"path/filepath"
	"syscall"
)

// IsMounted reports whether path is the root of a mounted filesystem: its
// device differs from its parent's. A dead FUSE mount (ENOTCONN) counts.
func IsMounted(path string) bool {
	var st, parent syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return err == syscall.ENOTCONN
	}
	if err := syscall.Stat(filepath.Dir(path), &parent); err != nil {
		return false
	}
	return st.Dev != parent.Dev
}

// isRoot reports whether the daemon can unmount without a setuid helper.
func isRoot() bool { return os.Geteuid() == 0 }
