package fs

import (
	"fmt"
	"os/exec"
	"strings"

	"golang.org/x/sys/unix"
)

// UnmountPath unmounts the FUSE mount at path; lazy forces it even while
// it is busy (macOS has no lazy detach).
func UnmountPath(path string, lazy bool) error {
	flags := 0
	if lazy {
		flags = unix.MNT_FORCE
	}
	if err := unix.Unmount(path, flags); err == nil {
		return nil
	}
	args := []string{path}
	if lazy {
		args = append([]string{"-f"}, args...)
	}
	out, err := exec.Command("umount", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("umount %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
