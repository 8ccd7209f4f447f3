package control

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// RunDirName is the directory under the cache directory that holds the
// sockets when XDG_RUNTIME_DIR is not usable.
const RunDirName = "run"

// Dirs returns the directories a mount's socket may be in, the one a
// daemon uses first: $XDG_RUNTIME_DIR/skillfs when XDG_RUNTIME_DIR names
// a directory the user owns, then <cacheDir>/run (when cacheDir is set).
func Dirs(cacheDir string) []string {
	var dirs []string
	if x := os.Getenv("XDG_RUNTIME_DIR"); x != "" && filepath.IsAbs(x) {
		if fi, err := os.Stat(x); err == nil && fi.IsDir() && ownedByUs(fi) {
			dirs = append(dirs, filepath.Join(x, "skillfs"))
		}
	}
	if cacheDir != "" {
		dirs = append(dirs, filepath.Join(cacheDir, RunDirName))
	}
	return dirs
}

// prepareDir creates dir (0700) when absent and checks that it is a real
// directory, the user's, and writable by no one else.
func prepareDir(dir string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("control directory %q is not absolute", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("control directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("control directory: %w", err)
	}
	switch {
	case !fi.IsDir():
		return fmt.Errorf("control directory %s is not a directory", dir)
	case !ownedByUs(fi):
		return fmt.Errorf("control directory %s is owned by another user", dir)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("control directory %s is writable by group or others (mode %04o); chmod 700 it", dir, fi.Mode().Perm())
	}
	return nil
}

func ownedByUs(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// baseName is the file name, without extension, of a mountpoint's socket
// and registration.
func baseName(mountpoint string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(mountpoint)))
	return hex.EncodeToString(sum[:8])
}
