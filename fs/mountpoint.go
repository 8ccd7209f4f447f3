package fs

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"syscall"
)

// PrepareMountpoint readies mnt for a mount: it creates the directory when
// it does not exist, unmounts a dead mount a killed daemon left there
// (ENOTCONN), and refuses anything that is not an empty, unmounted
// directory, so that a mount never hides files.
func PrepareMountpoint(mnt string, log *slog.Logger) error {
	fi, err := os.Stat(mnt)
	if errors.Is(err, syscall.ENOTCONN) || (err == nil && IsMounted(mnt) && isDead(mnt)) {
		// The kernel may still answer stat from its cache; a directory read
		// reaches the (gone) daemon and tells.
		log.Info("unmounting a dead mount left by a daemon that was killed", "op", "mount", "path", mnt)
		if err := UnmountPath(mnt, true); err != nil {
			return fmt.Errorf("clean up dead mount at %s: %w", mnt, err)
		}
		fi, err = os.Stat(mnt)
	}
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(mnt, 0o755); err != nil {
			return fmt.Errorf("create mountpoint: %w", err)
		}
		log.Info("created mountpoint", "path", mnt)
		fi, err = os.Stat(mnt)
	}
	if err != nil {
		return fmt.Errorf("mountpoint: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("mountpoint %s is not a directory", mnt)
	}
	if IsMounted(mnt) {
		return fmt.Errorf("%s is already a mount point; unmount it first (skillfs unmount %s)", mnt, mnt)
	}
	ents, err := os.ReadDir(mnt)
	if err != nil {
		return fmt.Errorf("mountpoint: %w", err)
	}
	if len(ents) > 0 {
		return fmt.Errorf("mountpoint %s is not empty (it holds %s); mount on an empty directory so nothing is hidden", mnt, ents[0].Name())
	}
	return nil
}

func isDead(dir string) bool {
	_, err := os.ReadDir(dir)
	return errors.Is(err, syscall.ENOTCONN)
}
