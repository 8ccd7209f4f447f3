//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A cleaner holds what must be undone, newest first, whether the run ends
// normally, fails, or is interrupted.
type cleaner struct {
	mu   sync.Mutex
	fns  []*func()
	done bool
	// running is held by run for its whole length: an interrupt runs the
	// cleanups from a goroutine of its own while run's deferred call
	// runs them too, and that call must not return (and the process
	// exit) while the other is still inside one, say removing the work
	// directory.
	running sync.Mutex
}

// add registers f and returns a function that runs it now (once) and
// forgets it. After run, add runs f at once: whatever an interrupted run
// starts late is undone too.
func (c *cleaner) add(f func()) (runNow func()) {
	var once sync.Once
	g := func() { once.Do(f) }
	p := &g
	c.mu.Lock()
	if c.done {
		c.mu.Unlock()
		g()
		return g
	}
	c.fns = append(c.fns, p)
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		for i, q := range c.fns {
			if q == p {
				c.fns = append(c.fns[:i], c.fns[i+1:]...)
				break
			}
		}
		c.mu.Unlock()
		g()
	}
}

// run undoes everything registered, newest first, and returns when all of
// it is done, also what another run is doing at the time.
func (c *cleaner) run() {
	c.running.Lock()
	defer c.running.Unlock()
	for {
		c.mu.Lock()
		if len(c.fns) == 0 {
			c.done = true
			c.mu.Unlock()
			return
		}
		f := c.fns[len(c.fns)-1]
		c.fns = c.fns[:len(c.fns)-1]
		c.mu.Unlock()
		(*f)()
	}
}

// childAttrs keeps a child out of the terminal's process group, so that
// Ctrl-C reaches only the bench, which then stops its children in order
// (mounts before servers), and has the kernel signal the child if the bench
// dies without cleaning up.
func childAttrs(deathSig syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: deathSig}
}

// waitLine copies r's lines to sink and returns the first line containing
// want, or an error when r ends first, ctx ends or timeout passes.
func waitLine(ctx context.Context, r io.Reader, sink io.Writer, want string, timeout time.Duration) (string, error) {
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(sink, line)
			if !sent && strings.Contains(line, want) {
				found <- line
				sent = true
			}
		}
		if !sent {
			close(found)
		}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case line, ok := <-found:
		if !ok {
			return "", fmt.Errorf("output ended before %q", want)
		}
		return line, nil
	case <-t.C:
		return "", fmt.Errorf("no %q within %v", want, timeout)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// A server is `skillfs serve --http` running as a subprocess.
type server struct {
	URL       string
	AccessLog string
	cmd       *exec.Cmd
	done      chan struct{}
	stop      func()
}

// startServer serves dir over loopback HTTP. Watching is off (--poll=-1s):
// a rescan of a 10,000-skill tree every two seconds would be load the
// measurements pick up.
func startServer(ctx context.Context, cl *cleaner, bin, dir, accessLog string, log io.Writer) (*server, error) {
	return startServerArgs(ctx, cl, bin, dir, log, "--access-log", accessLog, "--poll=-1s")
}

// startServerArgs serves dir over loopback HTTP with the given flags.
func startServerArgs(ctx context.Context, cl *cleaner, bin, dir string, log io.Writer, flags ...string) (*server, error) {
	s := &server{done: make(chan struct{})}
	for i, f := range flags {
		if f == "--access-log" && i+1 < len(flags) {
			s.AccessLog = flags[i+1]
		}
	}
	args := append([]string{"serve", "--http", "127.0.0.1:0"}, flags...)
	s.cmd = exec.Command(bin, append(args, dir)...)
	s.cmd.SysProcAttr = childAttrs(syscall.SIGKILL)
	s.cmd.Stdout = log
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start skillfs serve %s: %w", dir, err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	s.stop = cl.add(func() { stopProcess(s.cmd, s.done, syscall.SIGTERM, 10*time.Second) })
	line, err := waitLine(ctx, stderr, log, "serving ", 5*time.Minute)
	if err != nil {
		s.stop()
		return nil, fmt.Errorf("skillfs serve %s: %w", dir, err)
	}
	i := strings.Index(line, "http://")
	if i < 0 {
		s.stop()
		return nil, fmt.Errorf("skillfs serve %s: no URL in %q", dir, line)
	}
	s.URL = strings.TrimSpace(line[i:])
	return s, nil
}

// stopProcess signals a child and waits for it, killing it after grace.
func stopProcess(cmd *exec.Cmd, done <-chan struct{}, sig syscall.Signal, grace time.Duration) {
	select {
	case <-done:
		return
	default:
	}
	cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(grace):
		cmd.Process.Kill()
		<-done
	}
}

// A mountProc is `skillfs mount` running as a subprocess.
type mountProc struct {
	Dir  string
	cmd  *exec.Cmd
	done chan struct{}
	code int
	stop func()
	// stopErr is why the last stop was not clean.
	stopErr error
}

// startMount runs `skillfs mount` and returns once its ready line is out,
// with the time from exec to that line.
func startMount(ctx context.Context, cl *cleaner, bin, cfg, cache, mnt string, log io.Writer, flags ...string) (*mountProc, time.Duration, error) {
	m := &mountProc{Dir: mnt, done: make(chan struct{})}
	args := append([]string{"mount", "--config", cfg, "--cache-dir", cache, "--log-level", "info"}, flags...)
	m.cmd = exec.Command(bin, append(args, mnt)...)
	// SIGTERM, not SIGKILL: a daemon that outlives the bench unmounts.
	m.cmd.SysProcAttr = childAttrs(syscall.SIGTERM)
	m.cmd.Stderr = log
	stdout, err := m.cmd.StdoutPipe()
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	if err := m.cmd.Start(); err != nil {
		return nil, 0, fmt.Errorf("start skillfs mount %s: %w", mnt, err)
	}
	go func() {
		m.code = exitCode(m.cmd.Wait())
		close(m.done)
	}()
	m.stop = cl.add(func() { m.stopErr = m.terminate() })
	_, err = waitLine(ctx, stdout, log, "skillfs: mounted", 5*time.Minute)
	live := time.Since(start)
	if err != nil {
		m.stop()
		select {
		case <-m.done:
			return nil, 0, fmt.Errorf("skillfs mount %s: %w (exit %d; see the daemon log)", mnt, err, m.code)
		default:
		}
		return nil, 0, fmt.Errorf("skillfs mount %s: %w", mnt, err)
	}
	return m, live, nil
}

// Stop unmounts (SIGTERM) and reports a daemon that did not exit 0 or left
// its mount behind.
func (m *mountProc) Stop() error {
	m.stop()
	return m.stopErr
}

func (m *mountProc) terminate() error {
	stopProcess(m.cmd, m.done, syscall.SIGTERM, 30*time.Second)
	var err error
	if m.code != 0 {
		err = fmt.Errorf("skillfs mount %s exited %d after SIGTERM", m.Dir, m.code)
	}
	if isMounted(m.Dir) {
		syscall.Unmount(m.Dir, syscall.MNT_DETACH)
		err = errors.Join(err, fmt.Errorf("%s was still mounted after the daemon exited; detached it", m.Dir))
	}
	return err
}

// Memory reads the daemon's resident set now and its peak.
func (m *mountProc) Memory() (rss, hwm int64, err error) {
	return procMemory(m.cmd.Process.Pid)
}

// procMemory reads VmRSS and VmHWM of a process, in bytes.
func procMemory(pid int) (rss, hwm int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("memory of pid %d: %w", pid, err)
	}
	return parseStatus(string(b))
}

// userHZ is the unit of the CPU times in /proc/PID/stat (USER_HZ, 100
// on every Linux architecture the bench runs on).
const userHZ = 100

// procCPU reads the user and system CPU time a process has used so far.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("CPU time of pid %d: %w", pid, err)
	}
	return parseStat(string(b))
}

// parseStat takes utime+stime (fields 14 and 15) from a /proc/PID/stat
// line. The command name, field 2, is in parentheses and may hold spaces,
// so fields are counted after its closing parenthesis.
func parseStat(s string) (time.Duration, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("no command name in /proc stat line %q", s)
	}
	f := strings.Fields(s[i+1:]) // f[0] is field 3, the state
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc stat line %q", s)
	}
	var ticks int64
	for _, x := range f[11:13] {
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc stat CPU time %q: %w", x, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

func parseStatus(s string) (rss, hwm int64, err error) {
	var gotRSS, gotHWM bool
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		f := strings.Fields(v)
		if len(f) != 2 || f[1] != "kB" {
			return 0, 0, fmt.Errorf("parse /proc status: odd %s line %q", k, line)
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("parse /proc status: %s: %w", k, err)
		}
		if k == "VmRSS" {
			rss, gotRSS = n<<10, true
		} else {
			hwm, gotHWM = n<<10, true
		}
	}
	if !gotRSS || !gotHWM {
		return 0, 0, errors.New("parse /proc status: no VmRSS or VmHWM")
	}
	return rss, hwm, nil
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// isMounted reports whether dir is a mount point (per /proc/self/mounts).
func isMounted(dir string) bool {
	for _, m := range mountsUnder(dir) {
		if m == dir {
			return true
		}
	}
	return false
}

// mountsUnder lists the mount points at or below dir, deepest first.
func mountsUnder(dir string) []string {
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		p := unescapeMount(f[1])
		if p == dir || strings.HasPrefix(p, dir+"/") {
			out = append(out, p)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// unescapeMount undoes /proc/mounts' octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// removeAll removes dir after detaching anything still mounted below it;
// it refuses rather than walk into a live mount.
func removeAll(dir string) error {
	for _, m := range mountsUnder(dir) {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil {
			return fmt.Errorf("remove %s: %s is still mounted and could not be detached: %w", dir, m, err)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove %s: %w", dir, err)
	}
	return nil
}

// moduleRoot finds the skillfs module above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/skillfs/skillfs\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside the skillfs module (no go.mod for github.com/skillfs/skillfs above the working directory); run from the repository or pass -skillfs")
		}
		dir = parent
	}
}

// buildSkillfs builds cmd/skillfs from the module at root into dir.
func buildSkillfs(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "skillfs")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/skillfs")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./cmd/skillfs in %s: %w\n%s", root, err, out)
	}
	return bin, nil
}
