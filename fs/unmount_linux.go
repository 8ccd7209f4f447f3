package fs

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
)

// UnmountPath unmounts the FUSE mount at path; lazy detaches it even while
// it is busy (it disappears when the last user lets go). As root it calls
// umount2(2); otherwise fusermount3 (or fusermount) -u.
func UnmountPath(path string, lazy bool) error {
	if isRoot() {
		flags := 0
		if lazy {
			flags = syscall.MNT_DETACH
		}
		if err := syscall.Unmount(path, flags); err != nil {
			return fmt.Errorf("unmount %s: %w", path, err)
		}
		return nil
	}
	args := []string{"-u"}
	if lazy {
		args = append(args, "-z")
	}
	args = append(args, path)
	var lastErr error
	for _, bin := range []string{"fusermount3", "fusermount"} {
		if _, err := exec.LookPath(bin); err != nil {
			continue
		}
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err == nil {
			return nil
		}
		lastErr = fmt.Errorf("%s %s: %v: %s", bin, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	if lastErr == nil {
		lastErr = fmt.Errorf("unmount %s: neither fusermount3 nor fusermount is installed (apt-get install fuse3)", path)
	}
	return lastErr
}
