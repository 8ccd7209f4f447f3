//go:build linux

package integration

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillfs/skillfs/integration/hostile"
)

// TestInterruptWithHungRead: Ctrl-C (SIGINT) ends the mount promptly while
// a read hangs on a stalled server, whose call timeout (10 minutes here)
// would otherwise hold the daemon. The read is failed, the mount detached
// lazily (the reader still holds the file open: exit 4), and nothing is
// left mounted.
func TestInterruptWithHungRead(t *testing.T) {
	t.Parallel()
	access := t.TempDir() + "/access.log"
	cfg := writeConfig(t, map[string]any{
		"evil": hostileStdio(t, hostile.Options{Fixtures: []string{hostile.HangRead}, AccessLog: access}),
	}, map[string]any{"defaults": map[string]any{"limits": map[string]any{"call_timeout": "10m"}}})
	m := startMount(t, cfg)
	m.warnings = true
	cat := exec.Command("cat", m.Path("evil", "hang-read", "SKILL.md"))
	var out bytes.Buffer
	cat.Stdout, cat.Stderr = io.Discard, &out
	if err := cat.Start(); err != nil {
		t.Fatal(err)
	}
	catDone := make(chan struct{})
	var catErr error
	go func() { catErr = cat.Wait(); close(catDone) }()
	t.Cleanup(func() {
		cat.Process.Kill()
		<-catDone
	})
	waitFor(t, 2*time.Minute, "the read to reach the server", func() bool {
		for _, u := range reads(t, access) {
			if u == "skill://hang-read/SKILL.md" {
				return true
			}
		}
		return false
	})
	start := time.Now()
	m.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-m.done:
	case <-time.After(5 * time.Minute):
		t.Fatalf("skillfs mount still running 5 minutes after SIGINT with a hung read\n%s", m.log.String())
	}
	took := time.Since(start)
	t.Logf("SIGINT to exit with a hung read: %v (exit %d)", took, m.code)
	// Not a timing assertion: the bound is far below the 10-minute call
	// timeout the daemon would otherwise have waited for.
	if took > 2*time.Minute {
		t.Errorf("exit took %v: the daemon waited for the hung call", took)
	}
	if m.code != 0 && m.code != 4 {
		t.Errorf("exit code %d, want 0 or 4 (detached lazily)\n%s", m.code, m.log.String())
	}
	select {
	case <-catDone:
		t.Logf("the reader ended with %v: %s", catErr, out.String())
	case <-time.After(2 * time.Minute):
		t.Errorf("the hung reader was not released by the shutdown")
	}
	m.code = 0 // Stop checks the exit code of a SIGTERM; this was SIGINT
}

// TestDaemonReturnsWhenLive: mount --daemon returns 0 once the mount is
// live, with the ready line and the pid; the pid file names the daemon,
// the log file is under $XDG_STATE_HOME/skillfs, skillfs status finds the
// mount, and skillfs unmount ends the daemon, which removes its pid file.
func TestDaemonReturnsWhenLive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := genTree(t, dir, "local")
	cfg := writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull)}, nil)
	// A "-" in the mountpoint, as in ~/.cache/mcp-skills: the default log
	// path printed must still paste into a shell as it is.
	state, cache, mnt := t.TempDir(), filepath.Join(t.TempDir(), "cache"), filepath.Join(t.TempDir(), "mcp-skills")
	env := append(os.Environ(), "XDG_STATE_HOME="+state)
	cmd := exec.Command(skillfsBin, "mount", "--daemon", "--config", cfg, "--cache-dir", cache, "--startup-timeout", "10m", mnt)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Cleanup(func() {
		if isMounted(mnt) {
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	})
	pidFile, logFile := daemonFiles(t, state, stdout.String())
	pid := 0
	if b, rerr := os.ReadFile(pidFile); rerr == nil {
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	t.Cleanup(func() {
		if pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if code := exitCode(err); code == 3 {
		t.Skipf("FUSE cannot be mounted here: %s%s", stdout.String(), stderr.String())
	} else if code != 0 {
		t.Fatalf("mount --daemon exited %d\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "skillfs: mounted "+mnt+": 1 server, 1 connected") ||
		!strings.Contains(stdout.String(), fmt.Sprintf("running in the background, pid %d; log %s", pid, logFile)) {
		t.Errorf("mount --daemon printed:\n%s(pid file: %d)", stdout.String(), pid)
	}
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		t.Fatalf("pid file %s names %d, not a running process", pidFile, pid)
	}
	if !isMounted(mnt) {
		t.Fatalf("%s is not mounted after mount --daemon returned", mnt)
	}
	// Live at once: the files read, and status finds the daemon.
	if b, err := os.ReadFile(filepath.Join(mnt, "local", "alpha", "SKILL.md")); err != nil || !bytes.Equal(b, files["alpha/SKILL.md"]) {
		t.Errorf("read through the daemon's mount: %v", err)
	}
	st := exec.Command(skillfsBin, "status", "--json", "--mount", mnt, "--cache-dir", cache)
	st.Env = env
	out, err := st.Output()
	if err != nil {
		t.Fatalf("skillfs status: %v\n%s", err, out)
	}
	var status statusJSON
	if err := json.Unmarshal(out, &status); err != nil || status.Mount.PID != pid {
		t.Errorf("status --json: pid %d (want %d), err %v\n%s", status.Mount.PID, pid, err, out)
	}
	if b, err := os.ReadFile(logFile); err != nil || !strings.Contains(string(b), "msg=mounted") {
		t.Errorf("log file %s: %v\n%s", logFile, err, b)
	}
	if out, err := exec.Command(skillfsBin, "unmount", mnt).CombinedOutput(); err != nil {
		t.Fatalf("skillfs unmount: %v\n%s", err, out)
	}
	waitFor(t, 2*time.Minute, "the daemon to exit after unmount", func() bool { return syscall.Kill(pid, 0) != nil })
	pid = 0
	if _, err := os.Stat(pidFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pid file after the daemon exited: %v", err)
	}
}

// daemonFiles finds the log and pid files mount --daemon chose under
// $XDG_STATE_HOME/skillfs and checks that their names paste into a shell
// unquoted (no systemd-style \x2d) and that the log is the one printed.
func daemonFiles(t *testing.T, state, stdout string) (pidFile, logFile string) {
	t.Helper()
	pids, _ := filepath.Glob(filepath.Join(state, "skillfs", "*.pid"))
	if len(pids) != 1 {
		t.Errorf("pid files in the state directory: %v\n%s", pids, stdout)
		return filepath.Join(state, "skillfs", "none.pid"), filepath.Join(state, "skillfs", "none.log")
	}
	pidFile = pids[0]
	logFile = strings.TrimSuffix(pidFile, ".pid") + ".log"
	if name := filepath.Base(logFile); !regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`).MatchString(name) || !strings.Contains(name, "mcp-skills") {
		t.Errorf("default log file name %q is not pasteable as it is, or does not name the mountpoint", name)
	}
	if !strings.Contains(stdout, "; log "+logFile+";") {
		t.Errorf("mount --daemon does not print the log path %s:\n%s", logFile, stdout)
	}
	return pidFile, logFile
}

// mountFileName is the daemon's name for the log and pid files of a
// mountpoint that holds only letters, digits and "/" (README: "/" becomes
// "-", then "-" and 8 hex digits of the path's SHA-256).
func mountFileName(mnt string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(mnt)))
	return strings.ReplaceAll(strings.Trim(mnt, "/"), "/", "-") + "-" + hex.EncodeToString(sum[:4])
}

// TestDaemonFailsWithTheReason: mount --daemon returns the child's exit
// code and the end of its log when the mount cannot go live.
func TestDaemonFailsWithTheReason(t *testing.T) {
	t.Parallel()
	cfg, _ := honestAndBroken(t)
	state := t.TempDir()
	mnt := filepath.Join(t.TempDir(), "mnt")
	cmd := exec.Command(skillfsBin, "mount", "--daemon", "--require-all", "--config", cfg, "--cache-dir", t.TempDir(), "--startup-timeout", "10m", mnt)
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state)
	out, err := cmd.CombinedOutput()
	if code := exitCode(err); code != 5 {
		t.Errorf("mount --daemon --require-all with a broken server exited %d, want 5\n%s", code, out)
	}
	if want := fmt.Sprintf(`broken: command %q not found`, missingCommand); !strings.Contains(string(out), want) {
		t.Errorf("the error does not say %s:\n%s", want, out)
	}
	if isMounted(mnt) {
		syscall.Unmount(mnt, syscall.MNT_DETACH)
		t.Errorf("%s is mounted after the daemon refused", mnt)
	}
}

// TestSystemdNotify: under systemd (NOTIFY_SOCKET), the mount sends
// READY=1 with STATUS= once live and STOPPING=1 when it unmounts.
func TestSystemdNotify(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	msgs := make(chan string, 16)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, _, err := conn.ReadFromUnix(buf)
			if err != nil {
				close(msgs)
				return
			}
			msgs <- string(buf[:n])
		}
	}()
	cfg, _ := honestAndBroken(t)
	m := &mount{Dir: filepath.Join(t.TempDir(), "mnt"), Cache: filepath.Join(t.TempDir(), "cache"), log: &syncBuffer{}}
	m.warnings = true // the broken server
	m.run(t, append(os.Environ(), "NOTIFY_SOCKET="+sock), "mount", "--config", cfg, "--cache-dir", m.Cache, "--startup-timeout", "10m", m.Dir)
	next := func(what string) string {
		select {
		case s := <-msgs:
			return s
		case <-time.After(2 * time.Minute):
			t.Fatalf("no %s notification", what)
		}
		return ""
	}
	ready := next("READY")
	want := fmt.Sprintf(`broken: command %q not found`, missingCommand)
	if !strings.Contains(ready, "READY=1\n") || !strings.Contains(ready, "STATUS=2 servers, 1 connected") || !strings.Contains(ready, want) {
		t.Errorf("first notification %q, want READY=1 and the server summary", ready)
	}
	m.Stop(t)
	for s := next("STOPPING"); s != "STOPPING=1"; s = next("STOPPING") {
		if !strings.HasPrefix(s, "STATUS=") {
			t.Fatalf("notification %q before STOPPING=1", s)
		}
	}
}

// TestSIGHUPReloadsTheConfig: SIGHUP re-reads the config. A server added
// appears, one removed leaves the tree, one changed reconnects with its new
// entry, the log says what changed, and a config with errors keeps the
// servers as they were.
func TestSIGHUPReloadsTheConfig(t *testing.T) {
	t.Parallel()
	one, two, three := t.TempDir(), t.TempDir(), t.TempDir()
	writeTree(t, one, map[string]string{"first/SKILL.md": skillMD("first", "From folder one", "one\n")})
	writeTree(t, two, map[string]string{"second/SKILL.md": skillMD("second", "From folder two", "two\n")})
	writeTree(t, three, map[string]string{"third/SKILL.md": skillMD("third", "From folder three", "three\n")})
	cfg := writeConfig(t, map[string]any{
		"keep": stdioServe(one, os.DevNull),
		"gone": stdioServe(two, os.DevNull),
	}, nil)
	m := startMount(t, cfg)
	m.warnings = true // the bad config is logged as an error
	rewrite := func(servers map[string]any) {
		b, err := json.Marshal(map[string]any{"mcpServers": servers})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cfg, b, 0o600); err != nil {
			t.Fatal(err)
		}
		m.cmd.Process.Signal(syscall.SIGHUP)
	}
	names := func() []string {
		ents, _ := os.ReadDir(m.Dir)
		var out []string
		for _, e := range ents {
			out = append(out, e.Name())
		}
		return out
	}
	// keep is unchanged, gone is removed, new is added.
	rewrite(map[string]any{"keep": stdioServe(one, os.DevNull), "new": stdioServe(three, os.DevNull)})
	waitFor(t, 2*time.Minute, "new to appear and gone to leave", func() bool {
		return slices.Equal(names(), []string{".skillfs", "keep", "new"})
	})
	waitFor(t, 2*time.Minute, "the added server's skill", func() bool {
		b, err := os.ReadFile(m.Path("new", "third", "SKILL.md"))
		return err == nil && strings.Contains(string(b), "three")
	})
	if _, err := os.Stat(m.Path("gone", "second", "SKILL.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the removed server's skill: %v, want ENOENT", err)
	}
	waitFor(t, time.Minute, "the log to say what changed", func() bool {
		return strings.Contains(m.log.String(), `changes="added [new]; removed [gone]"`)
	})
	// keep changes its entry: it now serves folder two.
	rewrite(map[string]any{"keep": stdioServe(two, os.DevNull), "new": stdioServe(three, os.DevNull)})
	waitFor(t, 2*time.Minute, "keep to serve its new folder", func() bool {
		_, err := os.Stat(m.Path("keep", "second", "SKILL.md"))
		return err == nil
	})
	if _, err := os.Stat(m.Path("keep", "first", "SKILL.md")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("keep's old skill after the change: %v, want ENOENT", err)
	}
	waitFor(t, time.Minute, "the log to say keep changed", func() bool {
		return strings.Contains(m.log.String(), `changes="changed [keep]"`)
	})
	// A config with an error: nothing changes, and the log says why.
	if err := os.WriteFile(cfg, []byte(`{"mcpServers": {"keep": {"comand": "x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	m.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, time.Minute, "the bad config to be logged", func() bool {
		return strings.Contains(m.log.String(), "the config has errors; keeping the servers as they were")
	})
	if got := names(); !slices.Equal(got, []string{".skillfs", "keep", "new"}) {
		t.Errorf("after a bad config the mount shows %v", got)
	}
	if b, err := os.ReadFile(m.Path("keep", "second", "SKILL.md")); err != nil || !strings.Contains(string(b), "two") {
		t.Errorf("keep after a bad config: %v %q", err, b)
	}
	// The servers started since the mount went live hold descriptors of
	// their own (pipes, a pidfd, their cache directories).
	m.fds = openFDs(m.cmd.Process.Pid)
}

// TestGivesUpAfterStartAttempts: a server that fails to start
// limits.start_attempts times in a row is no longer retried; status.json
// and the control status say so; SIGHUP tries it again, and once its
// command exists it connects without any change to the config.
func TestGivesUpAfterStartAttempts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"late/SKILL.md": skillMD("late", "Comes up late", "late\n")})
	script := filepath.Join(t.TempDir(), "late-server")
	// The server's command is written now and linked into place later:
	// written there at that moment, a process forked meanwhile by another
	// test could hold the write descriptor while the daemon runs it
	// (ETXTBSY, see placeExecutable).
	later := filepath.Join(t.TempDir(), "late-server")
	if err := os.WriteFile(later, []byte(fmt.Sprintf("#!/bin/sh\nexec %s serve %s\n", skillfsBin, dir)), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, map[string]any{"late": map[string]any{"command": script}},
		map[string]any{"defaults": map[string]any{"limits": map[string]any{"start_attempts": 2}}})
	m := startMount(t, cfg)
	m.warnings = true
	// Polled through the control socket: status.json is read once the
	// state has settled (see the closing note of this change: a read of
	// a generated file while it changes fast can come out torn).
	waitFor(t, 2*time.Minute, "the server to be given up", func() bool {
		st := status(t, nil, "--mount", m.Dir, "--cache-dir", m.Cache)
		return len(st.Servers) == 1 && st.Servers[0].State == "gave-up"
	})
	st := readStatus(t, m)["late"]
	if st.FailedStarts != 2 || !strings.Contains(st.LastError, "not found") || !strings.Contains(st.LastError, "not retrying until SIGHUP") {
		t.Errorf("status of a server given up: %+v", st)
	}
	out, err := exec.Command(skillfsBin, "status", "--mount", m.Dir, "--cache-dir", m.Cache).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "gave-up") {
		t.Errorf("skillfs status does not show gave-up: %v\n%s", err, out)
	}
	// Given up: no attempt is made without a signal (that it stays so,
	// however long, is resolver.TestGaveUpWaitsForRefresh, on a clock that
	// never waits).
	if n := strings.Count(m.log.String(), "server session ended"); n != 1 {
		t.Errorf("%d retries logged before giving up, want 1 (the second failure gives up)", n)
	}
	placeExecutable(t, later, script)
	m.cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, 2*time.Minute, "the server to connect after SIGHUP", func() bool {
		_, err := os.Stat(m.Path("late", "late", "SKILL.md"))
		st := status(t, nil, "--mount", m.Dir, "--cache-dir", m.Cache)
		return err == nil && len(st.Servers) == 1 && st.Servers[0].State == "connected"
	})
	if st := readStatus(t, m)["late"]; st.State != "connected" || st.FailedStarts != 0 {
		t.Errorf("status after SIGHUP: %+v", st)
	}
	m.fds = openFDs(m.cmd.Process.Pid) // the server started after the mount went live
}
