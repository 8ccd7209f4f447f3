package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/coreos/go-systemd/v22/daemon"
)

// Background mode (mount --daemon): the command starts itself again as a
// child in a session of its own, with stdin from /dev/null and stdout and
// stderr appended to the log file, and waits. The child mounts as in the
// foreground and, once the mount is live, writes its ready line to a pipe
// (descriptor 3, named by readyFDEnv) and closes it; the parent prints that
// line and exits 0. When the child exits first, the parent prints the end
// of the log and exits with the child's code.

// readyFDEnv names, in a daemon child, the descriptor its ready line goes to.
const readyFDEnv = "SKILLFS_READY_FD"

// stateDir is where a background mount keeps its log and pid files:
// $XDG_STATE_HOME/skillfs, else ~/.local/state/skillfs.
func stateDir() (string, error) {
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

// mountName turns an absolute mountpoint into a file name a person can
// paste into a shell unquoted: "/" becomes "-", every byte but letters,
// digits, ".", "_" and "-" becomes "_" (a leading "." too, so the file is
// not hidden), and a short hash of the whole path follows, so two
// mountpoints that read alike (/a-b and /a/b) never share a log or pid
// file (a long path is cut to 200 bytes before the hash):
// /root/.cache/mcp-skills → root-.cache-mcp-skills-3f2a9c1e
func mountName(mnt string) string {
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

// defaultFiles fills in --log-file and --pid-file for a background mount.
// The state directory they go in is created 0700 when absent and must be
// the user's alone: a directory another user can write to could hold
// their links at the default paths.
func (o *mountOptions) defaultFiles(mnt string) error {
	if o.logFile != "" && o.pidFile != "" {
		return nil
	}
	dir, err := stateDir()
	if err != nil {
		return usageError(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return usageError(fmt.Errorf("state directory: %w (pass --log-file and --pid-file to put them elsewhere)", err))
	}
	if err := checkStateDir(dir); err != nil {
		return usageError(err)
	}
	name := mountName(mnt)
	if o.logFile == "" {
		o.logFile = filepath.Join(dir, name+".log")
	}
	if o.pidFile == "" {
		o.pidFile = filepath.Join(dir, name+".pid")
	}
	return nil
}

// checkStateDir refuses a state directory that is a link, or that is not
// the user's alone.
func checkStateDir(dir string) error {
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

// openOwnFile opens path (a log or pid file) without following a link at
// its last component, without blocking on a FIFO, and keeps it only if it
// is a regular file of the user's with no other hard link: whatever
// another user put at the path is refused, never written through.
func openOwnFile(path string, flag int, perm os.FileMode) (*os.File, error) {
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

// runDaemon starts the background child and waits until its mount is live
// or it exits. args are the mount command's arguments as given.
func runDaemon(opts mountOptions, mnt string, stdout io.Writer) error {
	if err := opts.defaultFiles(mnt); err != nil {
		return err
	}
	logf, err := openOwnFile(opts.logFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return usageError(fmt.Errorf("--log-file: %w", err))
	}
	if err := checkPidPath(opts.pidFile); err != nil {
		return usageError(err)
	}
	defer logf.Close()
	start, _ := logf.Seek(0, io.SeekEnd)
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the skillfs binary to start in the background: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	args := append(childArgs(os.Args[1:]), "--log-file", opts.logFile, "--pid-file", opts.pidFile)
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), readyFDEnv+"=3")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return fmt.Errorf("start skillfs in the background: %w", err)
	}
	w.Close()
	// One line: the servers the child starts do not inherit the pipe, but
	// nothing need wait for them to close it.
	line, _ := bufio.NewReader(io.LimitReader(r, 64<<10)).ReadString('\n')
	if strings.HasSuffix(line, "\n") {
		// The child is on its own from here; it is not waited for.
		pid := cmd.Process.Pid
		cmd.Process.Release()
		fmt.Fprint(stdout, string(line))
		fmt.Fprintf(stdout, "skillfs: running in the background, pid %d; log %s; stop it with: skillfs unmount %s\n", pid, opts.logFile, mnt)
		return nil
	}
	werr := cmd.Wait()
	code := exitFailure
	var ee *exec.ExitError
	if errors.As(werr, &ee) && ee.ExitCode() > 0 {
		code = ee.ExitCode()
	}
	return &exitError{code: code, err: fmt.Errorf("the background mount exited (code %d) before it was live; the end of %s:\n%s",
		code, opts.logFile, logTail(opts.logFile, start, 20))}
}

// childArgs are the arguments given, without --daemon.
func childArgs(args []string) []string {
	var out []string
	for _, a := range args {
		if a == "--daemon" || strings.HasPrefix(a, "--daemon=") {
			continue
		}
		out = append(out, a)
	}
	return out
}

// logTail returns the last n lines a file gained after offset from.
func logTail(path string, from int64, n int) string {
	f, err := openOwnFile(path, os.O_RDONLY, 0)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return "(" + err.Error() + ")"
	}
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + strings.Join(lines, "\n  ")
}

// readyPipe is where a daemon child writes its ready line, or nil.
func readyPipe() *os.File {
	s := os.Getenv(readyFDEnv)
	if s == "" {
		return nil
	}
	os.Unsetenv(readyFDEnv) // not passed on to the servers it starts
	fd, err := strconv.Atoi(s)
	if err != nil || fd < 3 {
		return nil
	}
	// Inherited descriptors are not close-on-exec: without this the
	// servers the mount starts would hold the parent's pipe open.
	syscall.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), "ready")
}

// writePidFile writes this process's pid to a file it creates (O_EXCL,
// never through a link); the returned func removes the file if it still
// holds that pid. A pid file already there is replaced only when it is the
// user's own regular file and the process it names is gone (a daemon that
// was killed); otherwise the mount is refused, naming the file.
func writePidFile(path string) (func(), error) {
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
		if b, err := readOwnFile(path, 64); err == nil && bytes.Equal(b, pid) {
			os.Remove(path)
		}
	}, nil
}

// checkPidPath refuses, before a background mount starts, a pid file path
// that holds something other than a file of the user's.
func checkPidPath(path string) error {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if _, err := readOwnFile(path, 64); err != nil {
		return fmt.Errorf("--pid-file: %w", err)
	}
	return nil
}

// removeStalePid removes a pid file of the user's whose process is gone.
func removeStalePid(path string) error {
	b, err := readOwnFile(path, 64)
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

// readOwnFile reads up to max bytes of a file of the user's (openOwnFile).
func readOwnFile(path string, max int64) ([]byte, error) {
	f, err := openOwnFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max))
}

// logFile is --log-file: appended to, and opened again on SIGHUP so that
// logrotate's rename-and-signal works.
type logFile struct {
	path string
	mu   sync.Mutex
	f    *os.File
}

func openLogFile(path string) (*logFile, error) {
	l := &logFile{path: path}
	if err := l.Reopen(); err != nil {
		return nil, usageError(fmt.Errorf("--log-file: %w", err))
	}
	return l, nil
}

func (l *logFile) Reopen() error {
	f, err := openOwnFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
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

func (l *logFile) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Write(p)
}

func (l *logFile) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}

// notifier tells systemd (Type=notify) how the mount stands, when
// NOTIFY_SOCKET is set; otherwise it does nothing.
type notifier struct {
	mu   sync.Mutex
	last string
}

// send passes state lines (READY=1, STATUS=…, STOPPING=1) to systemd.
func (n *notifier) send(lines ...string) {
	state := strings.Join(lines, "\n")
	n.mu.Lock()
	defer n.mu.Unlock()
	if state == n.last {
		return
	}
	n.last = state
	daemon.SdNotify(false, state)
}

// status sends STATUS= when it changed.
func (n *notifier) status(s string) { n.send("STATUS=" + firstLine(s)) }

func firstLine(s string) string {
	sc := bufio.NewScanner(strings.NewReader(s))
	if sc.Scan() {
		return sc.Text()
	}
	return ""
}
