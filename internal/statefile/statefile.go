// Package statefile keeps the files a background mount writes for itself
// (its log and pid files, integrate's records) in the user's state
// directory, and opens them so that nothing another user put at a path is
// ever written through: no links followed, no FIFOs, only regular files of
// the user's with one link, in a directory of the user's alone.
package statefile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Dir is where a background mount keeps its log and pid files:
// $XDG_STATE_HOME/skillfs, else ~/.local/state/skillfs.
func Dir() (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("find the state directory: %w; set HOME or XDG_STATE_HOME, or pass --log-file and --pid-file", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "skillfs"), nil
}

// MountName turns an absolute mountpoint into a file name a person can
// paste into a shell unquoted: "/" becomes "-", every byte but letters,
// digits, ".", "_" and "-" becomes "_" (a leading "." too, so the file is
// not hidden), and a short hash of the whole path follows, so two
// mountpoints that read alike (/a-b and /a/b) never share a log or pid
// file (a long path is cut to 200 bytes before the hash):
// /root/.cache/mcp-skills → root-.cache-mcp-skills-3f2a9c1e
func MountName(mnt string) string {
	clean := filepath.Clean(mnt)
	sum := sha256.Sum256([]byte(clean))
	p := strings.Trim(clean, "/")
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '/':
			b.WriteByte('-')
		case c == '.' && i == 0:
			b.WriteByte('_')
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '.', c == '-':
			b.WriteByte(c)
		default:
			b.WriteByte('_')
		}
	}
	name := b.String()
	if name == "" {
		name = "root"
	}
	// A file name holds at most 255 bytes; the hash keeps a cut one apart.
	if len(name) > 200 {
		name = name[:200]
	}
	return name + "-" + hex.EncodeToString(sum[:4])
}

// CheckDir refuses a state directory that is a link, or that is not
// the user's alone.
func CheckDir(dir string) error {
	const fix = "set XDG_STATE_HOME to a directory of your own, or pass --log-file and --pid-file"
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return fmt.Errorf("state directory %s is a symbolic link; skillfs keeps its log and pid files only in a real directory of yours: remove the link, %s", dir, fix)
	case !fi.IsDir():
		return fmt.Errorf("state directory %s is not a directory: remove it, %s", dir, fix)
	case st == nil || int(st.Uid) != os.Getuid():
		return fmt.Errorf("state directory %s is owned by uid %d, not by you (uid %d): remove it, %s", dir, st.Uid, os.Getuid(), fix)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("state directory %s is writable by group or others (mode %04o): chmod 700 it, %s", dir, fi.Mode().Perm(), fix)
	}
	return nil
}

// OpenOwn opens path (a log or pid file) without following a link at
// its last component, without blocking on a FIFO, and keeps it only if it
// is a regular file of the user's with no other hard link: whatever
// another user put at the path is refused, never written through.
func OpenOwn(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, perm)
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symbolic link; skillfs does not write through links: remove it or choose another path", path)
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		err = fmt.Errorf("%s is not a regular file (%s): remove it or choose another path", path, fi.Mode().Type())
	case st == nil || int(st.Uid) != os.Getuid():
		err = fmt.Errorf("%s is owned by uid %d, not by you (uid %d): remove it or choose another path", path, st.Uid, os.Getuid())
	case st.Nlink > 1:
		err = fmt.Errorf("%s has %d hard links; skillfs writes only to a file of its own: remove it or choose another path", path, st.Nlink)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// WritePid writes this process's pid to a file it creates (O_EXCL,
// never through a link); the returned func removes the file if it still
// holds that pid. A pid file already there is replaced only when it is the
// user's own regular file and the process it names is gone (a daemon that
// was killed); otherwise the mount is refused, naming the file.
func WritePid(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
	for attempt := 0; ; attempt++ {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o644)
		if err == nil {
			_, err = f.Write(pid)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				os.Remove(path)
				return nil, fmt.Errorf("--pid-file: %w", err)
			}
			break
		}
		if !errors.Is(err, fs.ErrExist) || attempt > 0 {
			return nil, fmt.Errorf("--pid-file: %w", err)
		}
		if err := removeStalePid(path); err != nil {
			return nil, err
		}
	}
	return func() {
		if b, err := ReadOwn(path, 64); err == nil && bytes.Equal(b, pid) {
			os.Remove(path)
		}
	}, nil
}

// CheckPidPath refuses, before a background mount starts, a pid file path
// that holds something other than a file of the user's.
func CheckPidPath(path string) error {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if _, err := ReadOwn(path, 64); err != nil {
		return fmt.Errorf("--pid-file: %w", err)
	}
	return nil
}

// removeStalePid removes a pid file of the user's whose process is gone.
func removeStalePid(path string) error {
	b, err := ReadOwn(path, 64)
	if err != nil {
		return fmt.Errorf("--pid-file: %w", err)
	}
	if old, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && old > 0 {
		if err := syscall.Kill(old, 0); !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("--pid-file %s names process %d, which is running (another skillfs?): stop it, or remove the file if that process is not skillfs", path, old)
		}
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--pid-file: remove the stale %s: %w", path, err)
	}
	return nil
}

// ReadOwn reads up to max bytes of a file of the user's (OpenOwn).
func ReadOwn(path string, max int64) ([]byte, error) {
	f, err := OpenOwn(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max))
}

// A LogFile is --log-file: appended to, and opened again on SIGHUP so that
// logrotate's rename-and-signal works.
type LogFile struct {
	path string
	mu   sync.Mutex
	f    *os.File
}

// OpenLog opens the log file at path for appending (OpenOwn: never
// through a link, only a regular file of the user's).
func OpenLog(path string) (*LogFile, error) {
	l := &LogFile{path: path}
	if err := l.Reopen(); err != nil {
		return nil, err
	}
	return l, nil
}

// Path is the file's path.
func (l *LogFile) Path() string { return l.path }

// Reopen opens the path again, for SIGHUP after a rotation.
func (l *LogFile) Reopen() error {
	f, err := OpenOwn(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	l.mu.Lock()
	old := l.f
	l.f = f
	l.mu.Unlock()
	if old != nil {
		old.Close()
	}
	return nil
}

func (l *LogFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Write(p)
}

func (l *LogFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}
