package mountd

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/skillfs/skillfs/internal/exitcode"
	"github.com/skillfs/skillfs/internal/statefile"
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

// defaultFiles fills in --log-file and --pid-file for a background mount.
// The state directory they go in is created 0700 when absent and must be
// the user's alone: a directory another user can write to could hold
// their links at the default paths.
func (o *Options) defaultFiles(mnt string) error {
	if o.LogFile != "" && o.PidFile != "" {
		return nil
	}
	dir, err := statefile.Dir()
	if err != nil {
		return exitcode.UsageError(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return exitcode.UsageError(fmt.Errorf("state directory: %w (pass --log-file and --pid-file to put them elsewhere)", err))
	}
	if err := statefile.CheckDir(dir); err != nil {
		return exitcode.UsageError(err)
	}
	name := statefile.MountName(mnt)
	if o.LogFile == "" {
		o.LogFile = filepath.Join(dir, name+".log")
	}
	if o.PidFile == "" {
		o.PidFile = filepath.Join(dir, name+".pid")
	}
	return nil
}

// Daemon starts the background child and waits until its mount is live
// or it exits. The child runs this binary with the arguments this process
// was given (os.Args), less --daemon, plus --log-file and --pid-file.
func Daemon(opts Options, mnt string, stdout io.Writer) error {
	if err := opts.defaultFiles(mnt); err != nil {
		return err
	}
	logf, err := statefile.OpenOwn(opts.LogFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return exitcode.UsageError(fmt.Errorf("--log-file: %w", err))
	}
	if err := statefile.CheckPidPath(opts.PidFile); err != nil {
		return exitcode.UsageError(err)
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
	args := append(childArgs(os.Args[1:]), "--log-file", opts.LogFile, "--pid-file", opts.PidFile)
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
		fmt.Fprintf(stdout, "skillfs: running in the background, pid %d; log %s; stop it with: skillfs unmount %s\n", pid, opts.LogFile, mnt)
		return nil
	}
	werr := cmd.Wait()
	code := exitcode.Failure
	var ee *exec.ExitError
	if errors.As(werr, &ee) && ee.ExitCode() > 0 {
		code = ee.ExitCode()
	}
	return exitcode.New(code, fmt.Errorf("the background mount exited (code %d) before it was live; the end of %s:\n%s",
		code, opts.LogFile, logTail(opts.LogFile, start, 20)))
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
	f, err := statefile.OpenOwn(path, os.O_RDONLY, 0)
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

// ReadyPipe is where a daemon child writes its ready line, or nil.
func ReadyPipe() *os.File {
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
