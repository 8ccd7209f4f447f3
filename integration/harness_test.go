//go:build linux

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/skillfs/skillfs/internal/testkit"
)

// skillfsBin is the binary under test, built once by TestMain.
var skillfsBin string

func TestMain(m *testing.M) {
	if hostileMain() {
		return
	}
	// The tests, the daemons and the servers they start never see the
	// user's HOME or XDG directories: a mount of the user's own, or a
	// config with a ${VAR} unset here, must not change a result.
	cleanup, err := testkit.Isolate()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// These tests wait on subprocesses, servers and the kernel far more
	// than on a CPU: run more at once than -parallel's default.
	testkit.WaitingParallel(parallelTests)
	// Many processes of these tests would crowd out the package go test
	// runs beside this one (testkit.Yield).
	if err := testkit.Yield(10); err != nil {
		fmt.Fprintln(os.Stderr, "testkit:", err)
	}
	dir, err := os.MkdirTemp("", "skillfs-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		cleanup()
		os.Exit(1)
	}
	skillfsBin = filepath.Join(dir, "skillfs")
	if err := testkit.Build("./cmd/skillfs", skillfsBin); err != nil {
		fmt.Fprintln(os.Stderr, "building skillfs:", err)
		cleanup()
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	cleanup()
	os.Exit(code)
}

// parallelTests is how many tests marked t.Parallel run at once by default.
// Go starts the waiting parallel tests in no set order, so a long test can
// start late and run alone at the end; more at once keep both cores busy
// while many tests wait on a timer, a server or the kernel. On a 2-core
// machine the package took 92 s at 8 (two runs), 83-88 s at 16 (three) and
// 84-92 s at 32 (two).
const parallelTests = 16

func moduleRoot() string {
	dir, err := testkit.ModuleRoot()
	if err != nil {
		panic(err)
	}
	return dir
}

// syncBuffer collects a subprocess's output for the test log.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitLine waits until a line of r contains want and returns that line
// (testkit.WaitLine: the ready-line wait); everything read is copied to sink.
func waitLine(t *testing.T, r io.Reader, sink io.Writer, want string, timeout time.Duration) (string, error) {
	t.Helper()
	return testkit.WaitLine(r, sink, want, timeout)
}

// A served folder: `skillfs serve` over HTTP as a subprocess.
type httpServer struct {
	URL       string
	AccessLog string
	cmd       *exec.Cmd
	out       *syncBuffer
}

// serveHTTP starts `skillfs serve --http 127.0.0.1:0 DIR`.
func serveHTTP(t *testing.T, dir string, extra ...string) *httpServer {
	t.Helper()
	s := &httpServer{AccessLog: filepath.Join(t.TempDir(), "access.log"), out: &syncBuffer{}}
	args := append([]string{"serve", "--http", "127.0.0.1:0", "--access-log", s.AccessLog}, extra...)
	args = append(args, dir)
	s.cmd = exec.Command(skillfsBin, args...)
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop(t) })
	line, err := waitLine(t, stderr, s.out, "serving ", 2*time.Minute)
	if err != nil {
		t.Fatalf("skillfs serve: %v\n%s", err, s.out.String())
	}
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("no URL in %q", line)
	}
	s.URL = strings.TrimSpace(line[i:])
	return s
}

// Stop ends the server (idempotent).
func (s *httpServer) Stop(t *testing.T) {
	if s.cmd.ProcessState != nil {
		return
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

// Kill ends the server without letting it clean up.
func (s *httpServer) Kill() {
	if s.cmd.ProcessState == nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	}
}

// reads returns how many resources/read requests an access log records.
func reads(t *testing.T, accessLog string) []string {
	t.Helper()
	b, err := os.ReadFile(accessLog)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "resources/read ") {
			out = append(out, strings.TrimPrefix(line, "resources/read "))
		}
	}
	return out
}

// writeConfig writes a skillfs config and returns its path.
func writeConfig(t *testing.T, servers map[string]any, skillfs map[string]any) string {
	t.Helper()
	cfg := map[string]any{"mcpServers": servers}
	if skillfs != nil {
		cfg["skillfs"] = skillfs
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// stdioServe is the config entry of `skillfs serve DIR` over stdio.
func stdioServe(dir, accessLog string, extra ...string) map[string]any {
	args := append([]string{"serve", "--access-log", accessLog}, extra...)
	return map[string]any{"command": skillfsBin, "args": append(args, dir)}
}

// A live mount: `skillfs mount` as a subprocess.
type mount struct {
	Dir   string
	Cache string
	// Ready is the ready line: "skillfs: mounted DIR: …".
	Ready string
	cmd   *exec.Cmd
	log   *syncBuffer
	done  chan struct{}
	code  int
	// warnings: the test expects the daemon to log warnings or errors;
	// otherwise any is a failure (silent trouble in an honest setup).
	warnings bool
	// fds are the daemon's open descriptors when the mount went live
	// (number → what it points at); Stop checks that they did not grow.
	fds map[string]string
}

// startMount mounts with the given config and waits for the ready line. It
// skips the test when FUSE cannot be mounted here (exit code 3), and
// unmounts in t.Cleanup whatever happens.
func startMount(t *testing.T, cfgPath string, extra ...string) *mount {
	t.Helper()
	m := &mount{Dir: filepath.Join(t.TempDir(), "mnt"), Cache: filepath.Join(t.TempDir(), "cache"), log: &syncBuffer{}}
	return m.start(t, cfgPath, extra...)
}

func (m *mount) start(t *testing.T, cfgPath string, extra ...string) *mount {
	t.Helper()
	// The mount goes live once every origin has listed or is offline,
	// however slow the machine: tests read status.json and index.json
	// right after the ready line. (A later --startup-timeout in extra wins.)
	args := append([]string{"mount", "--config", cfgPath, "--cache-dir", m.Cache, "--startup-timeout", "10m"}, extra...)
	return m.run(t, nil, append(args, m.Dir)...)
}

// run starts `skillfs ARGS` (a mount command) with env (nil: this
// process's) and waits for the ready line.
func (m *mount) run(t *testing.T, env []string, args ...string) *mount {
	t.Helper()
	m.cmd = exec.Command(skillfsBin, args...)
	m.cmd.Env = env
	m.cmd.Stderr = m.log
	stdout, err := m.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	m.done = make(chan struct{})
	go func() {
		err := m.cmd.Wait()
		m.code = exitCode(err)
		close(m.done)
	}()
	t.Cleanup(func() { m.Stop(t) })
	line, err := waitLine(t, stdout, io.Discard, "skillfs: mounted", 12*time.Minute)
	if err != nil {
		select {
		case <-m.done:
			if m.code == 3 {
				t.Skipf("FUSE cannot be mounted here: %s", m.log.String())
			}
		case <-time.After(time.Second):
		}
		t.Fatalf("mount: %v (exit %d)\n%s", err, m.code, m.log.String())
	}
	m.Ready = line
	if logsToStderr(args) {
		// The daemon logs "mounted" just before it prints the ready
		// line, but its stderr reaches m.log through a goroutine of its
		// own: wait for that line, so that a test reading the log right
		// after the ready line sees all that was logged before it (a
		// "dead mount" notice once did not show).
		if !testkit.Poll(time.Minute, func() bool { return strings.Contains(m.log.String(), "msg=mounted") }) {
			t.Fatalf("the ready line came but the log never said mounted:\n%s", m.log.String())
		}
	}
	m.fds = openFDs(m.cmd.Process.Pid)
	return m
}

// logsToStderr reports whether a mount started with args logs its info
// lines to stderr.
func logsToStderr(args []string) bool {
	for i, a := range args {
		switch {
		case a == "--log-file" || a == "--daemon" || strings.HasPrefix(a, "--log-file="):
			return false
		case a == "--log-level" && i+1 < len(args):
			return args[i+1] == "info" || args[i+1] == "debug"
		case strings.HasPrefix(a, "--log-level="):
			return a == "--log-level=info" || a == "--log-level=debug"
		}
	}
	return true
}

// staleRetryFlag reports whether `skillfs mount` takes the hidden flag
// --stale-retry DURATION: how often a failed read may ask a server for a
// fresh entry of one skill (10 s by default). Tests that wait for that
// retry shorten it when they can and wait it out otherwise. Cobra parses
// flags before it looks at --help, so an unknown flag fails the probe.
var staleRetryFlag = sync.OnceValue(func() bool {
	return exec.Command(skillfsBin, "mount", "--stale-retry", "1s", "--help").Run() == nil
})

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

// Stop unmounts with SIGTERM and checks that the daemon exited 0 and left
// no mount behind. It is idempotent.
func (m *mount) Stop(t *testing.T) {
	select {
	case <-m.done:
	default:
		m.checkFDs(t)
		m.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-m.done:
		case <-time.After(2 * time.Minute):
			m.cmd.Process.Kill()
			<-m.done
			t.Errorf("skillfs mount did not exit within 2 minutes of SIGTERM\n%s", m.log.String())
		}
		if m.code != 0 && !t.Failed() {
			t.Errorf("skillfs mount exited %d after SIGTERM\n%s", m.code, m.log.String())
		}
	}
	if isMounted(m.Dir) {
		syscall.Unmount(m.Dir, syscall.MNT_DETACH)
		t.Errorf("%s was still mounted after the daemon exited", m.Dir)
	}
	if !m.warnings {
		for _, line := range strings.Split(m.log.String(), "\n") {
			if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
				t.Errorf("unexpected warning from the daemon: %s", line)
			}
		}
	}
	if t.Failed() {
		t.Logf("skillfs mount log:\n%s", m.log.String())
	}
}

// fdAllowance is how many more sockets and pipes the daemon may hold when
// a test ends than when its mount went live. net/http keeps up to two
// idle connections per HTTP server (MaxIdleConnsPerHost) beyond the
// session's own; a reconnect may have its new connection open while the
// old one is being closed; go-fuse's splice pool keeps a pipe (both ends)
// per read that was in flight at once; and at the ready line a stdio
// server may still be starting, its pipes not yet all in place. Any other
// descriptor the daemon did not hold when the mount went live — a regular
// file, an anonymous inode — fails the test at once (/dev/null aside,
// which the splice pool opens): the store reads whole files and closes
// them.
const fdAllowance = 16

// fdSettle is how long checkFDs waits for descriptors in use at the end of
// a test to be closed (a store write or a catalog save finishing).
const fdSettle = 3 * time.Second

// checkFDs fails the test when the daemon holds more descriptors than
// when its mount went live, beyond what fdAllowance explains, listing the
// new ones.
func (m *mount) checkFDs(t *testing.T) {
	t.Helper()
	// The store's directory and last-used lock of each server the daemon
	// uses are its state (a reload adds servers), not leaks.
	own := func(target string) bool {
		dir, name := filepath.Split(target)
		return filepath.Clean(dir) == m.Cache || (name == "last-used" && filepath.Dir(filepath.Clean(dir)) == m.Cache)
	}
	testkit.FDCheck{Pid: m.cmd.Process.Pid, Base: m.fds, Allowance: fdAllowance, Settle: fdSettle, Own: own}.Check(t)
}

// openFDs maps a process's open descriptors to what they point at, or nil
// when the process is gone.
var openFDs = testkit.OpenFDs

// Kill ends the daemon with SIGKILL, leaving a dead mount.
func (m *mount) Kill() {
	m.cmd.Process.Kill()
	<-m.done
}

// Path joins mount-relative elements.
func (m *mount) Path(elem ...string) string {
	return filepath.Join(append([]string{m.Dir}, elem...)...)
}

func isMounted(dir string) bool {
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && f[1] == dir {
			return true
		}
	}
	return false
}

// run runs a command the way a user's shell would (the test process is not
// the one serving the mount) and returns its combined output.
func run(t *testing.T, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(out), err
}

// writeTree creates or replaces files under dir from a map of slash paths
// to contents; paths ending in ".sh" or under scripts/ are made executable.
// Each file appears whole, as an editor saves it (replaceFile): a server
// watching dir never lists one half-written.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") || strings.Contains(p, "scripts/") {
			mode = 0o755
		}
		replaceFile(t, full, []byte(content), mode)
	}
}

// replaceFile gives path its new contents in one step: written in a temp
// file outside path's folder, then renamed over it. os.WriteFile truncates
// first, and a server that rescans its folder in between (`skillfs serve`
// watches it) publishes an empty file: a test that waits for "the file
// changed" then sees that empty version, not the one it wrote.
func replaceFile(t *testing.T, path string, data []byte, mode os.FileMode) {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "replace-*")
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func skillMD(name, description, body string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: %s\n---\n%s", name, description, body)
}

// readIndex decodes .skillfs/index.json.
func readIndex(t *testing.T, m *mount) indexJSON {
	t.Helper()
	b, err := readGenerated(m.Path(".skillfs", "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var idx indexJSON
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatalf("index.json: %v\n%s", err, b)
	}
	return idx
}

type indexJSON struct {
	Skills []struct {
		Origin     string   `json:"origin"`
		URI        string   `json:"uri"`
		Path       string   `json:"path"`
		Name       string   `json:"name"`
		State      string   `json:"state"`
		Reason     string   `json:"reason"`
		Detail     string   `json:"detail"`
		Flags      []string `json:"flags"`
		Collisions []string `json:"name_collisions"`
	} `json:"skills"`
}

// waitFor polls cond until it holds or the timeout passes
// (testkit.WaitFor).
var (
	waitFor = testkit.WaitFor
	poll    = testkit.Poll
)

// cleanupDaemon arranges, at the test's end, that a daemon started with
// --daemon (its pid in *pid once known; 0 when not) is gone and mnt is not
// mounted: unmount as the test would, wait for the daemon to exit, and
// kill it (failing the test) when it does not.
func cleanupDaemon(t *testing.T, mnt string, pid *int, unmount func()) {
	t.Cleanup(func() {
		if isMounted(mnt) {
			unmount()
		}
		if *pid > 0 {
			deadline := time.Now().Add(2 * time.Minute)
			for syscall.Kill(*pid, 0) == nil && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			if syscall.Kill(*pid, 0) == nil {
				syscall.Kill(*pid, syscall.SIGKILL)
				t.Errorf("the daemon (pid %d) did not exit after skillfs unmount", *pid)
			}
		}
		if isMounted(mnt) {
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	})
}

// logged reports whether the mount's log has a line containing want,
// waiting up to 30 s for it: the daemon's log reaches the test through a
// pipe, and a line written while a file operation is answered can arrive
// after the answer.
func (m *mount) logged(want string) bool {
	return testkit.Poll(30*time.Second, func() bool { return strings.Contains(m.log.String(), want) })
}

// placeExecutable puts the executable src at dst as a hard link. A copy
// would be written through a descriptor that a process forked meanwhile by
// another test inherits until it execs, and running the copy would fail
// with ETXTBSY ("text file busy") until then. Across file systems it
// copies.
func placeExecutable(t *testing.T, src, dst string) {
	t.Helper()
	if err := os.Link(src, dst); err == nil {
		return
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
