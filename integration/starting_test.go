//go:build linux

package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStatusWhileStarting: while a server never answers its handshake and
// the mount waits for it, `skillfs status` finds the mount and says it is
// starting, with each server's progress; requests that read or change a
// skill are refused with "starting, try again", and SIGTERM ends it.
func TestStatusWhileStarting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"early/SKILL.md": skillMD("early", "Listed at once", "early\n")})
	// "slow" reads its stdin and never answers, until stdin closes.
	slow := map[string]any{"command": "sh", "args": []string{"-c", "while read -r line; do :; done"}}
	cfg := writeConfig(t, map[string]any{"good": stdioServe(dir, os.DevNull), "slow": slow},
		map[string]any{"defaults": map[string]any{"limits": map[string]any{"connect_timeout": "30m"}}})
	env := runtimeEnv(t)
	mnt := filepath.Join(t.TempDir(), "mnt")
	cmd := exec.Command(skillfsBin, "mount", "--config", cfg, "--cache-dir", filepath.Join(t.TempDir(), "cache"), "--startup-timeout", "30m", mnt)
	cmd.Env = env
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			cmd.Process.Kill()
			<-done
		}
	})

	var st struct {
		State   string
		Servers []struct {
			Label, State string
			Skills       int
		}
	}
	waitFor(t, 2*time.Minute, "status to show the good server listed while starting", func() bool {
		out, _, code := ctl(t, env, "status", "--json", "--mount", mnt)
		if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
			return false
		}
		return len(st.Servers) == 2 && st.Servers[0].Label == "good" && st.Servers[0].Skills == 1
	})
	if st.State != "starting" || st.Servers[1].Label != "slow" || st.Servers[1].State != "connecting" {
		t.Errorf("status --json while starting: %+v, want state starting and slow connecting", st)
	}
	out, errOut, code := ctl(t, env, "status", "--mount", mnt)
	if code != 0 || !strings.Contains(out, "state    starting: 1 of 2 servers listed (1 skills so far)") || !strings.Contains(out, "slow ") {
		t.Errorf("skillfs status while starting: exit %d:\n%s%s", code, out, errOut)
	}
	if stdout.String() != "" {
		t.Errorf("the ready line before the servers listed: %q", stdout.String())
	}
	for _, args := range [][]string{{"approve", "--yes", "good/early"}, {"inspect", "good/early"}, {"reload"}} {
		out, errOut, code := ctl(t, env, append(args, "--mount", mnt)...)
		if code != 1 || !strings.Contains(errOut, "the mount is starting") {
			t.Errorf("skillfs %v while starting: exit %d, want 1 and \"the mount is starting\":\n%s%s", args, code, out, errOut)
		}
	}

	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		stopped = true
		if err != nil {
			t.Errorf("skillfs mount after SIGTERM while starting: %v\n%s", err, stderr.String())
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("skillfs mount did not exit within 2 minutes of SIGTERM while starting\n%s", stderr.String())
	}
	if _, _, code := ctl(t, env, "status", "--mount", mnt); code == 0 {
		t.Errorf("status answers after the mount stopped")
	}
}

// TestStartupProgressOnATerminal: a foreground mount whose ready line goes
// to a terminal shows the startup wait's progress on one line, redrawn in
// place, and the ready line replaces it. The slow server holds the wait
// until --startup-timeout: 8 s, ample for the good server to answer (it
// takes well under a second) — and on a machine so loaded that it did not,
// the ready line says so and the test mounts again with a minute.
func TestStartupProgressOnATerminal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"early/SKILL.md": skillMD("early", "Listed at once", "early\n")})
	slow := map[string]any{"command": "sh", "args": []string{"-c", "while read -r line; do :; done"}}
	cfg := writeConfig(t, map[string]any{"good": stdioServe(dir, os.DevNull), "slow": slow},
		map[string]any{"defaults": map[string]any{"limits": map[string]any{"connect_timeout": "30m"}}})
	for _, timeout := range []string{"8s", "60s"} {
		m, got := startOnTerminal(t, cfg, timeout)
		if !strings.Contains(got, "mounted "+m.Dir+": 2 servers, 1 connected") {
			t.Logf("the good server did not answer within --startup-timeout %s: the machine is busy; again with more", timeout)
			m.Stop(t)
			continue
		}
		const progress = "\r\x1b[Kskillfs: starting: 1 of 2 servers answered, 1 skill listed"
		if !strings.Contains(got, progress) || !strings.Contains(got, "\r\x1b[Kskillfs: mounted "+m.Dir+": 2 servers, 1 connected (1 skill), 1 still connecting") {
			t.Errorf("the terminal: %q\nwant the progress %q, then the ready line replacing it", got, progress)
		}
		return
	}
	t.Fatal("the good server did not answer within a minute of the mount's start")
}

// startOnTerminal starts a mount of cfg whose stdout is a terminal, waits
// for its ready line and returns what the terminal showed until then.
func startOnTerminal(t *testing.T, cfg, startupTimeout string) (*mount, string) {
	t.Helper()
	master, slave := openPTY(t)
	m := &mount{Dir: filepath.Join(t.TempDir(), "mnt"), Cache: filepath.Join(t.TempDir(), "cache"), log: &syncBuffer{}}
	m.warnings = true // slow is not ready: a warning
	m.cmd = exec.Command(skillfsBin, "mount", "--config", cfg, "--cache-dir", m.Cache, "--startup-timeout", startupTimeout, m.Dir)
	m.cmd.Env = runtimeEnv(t)
	m.cmd.Stdout, m.cmd.Stderr = slave, m.log
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	m.done = make(chan struct{})
	go func() { m.code = exitCode(m.cmd.Wait()); close(m.done) }()
	t.Cleanup(func() { m.Stop(t) })
	var out syncBuffer
	go func() {
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			out.Write(b[:n])
			if err != nil {
				return
			}
		}
	}()
	waitFor(t, 5*time.Minute, "the ready line on the terminal", func() bool { return strings.Contains(out.String(), "skillfs: mounted ") })
	m.fds = openFDs(m.cmd.Process.Pid)
	return m, out.String()
}
