package skillserver_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// afterPoll paces changeUntilNotified's rewrites; it bounds nothing.
func afterPoll() <-chan time.Time { return time.After(300 * time.Millisecond) }

// giveUp bounds a wait for something that must happen, so that a broken
// server fails the test instead of hanging it. It asserts no speed: it is
// far beyond any wait a working server causes.
func giveUp() <-chan time.Time { return time.After(2 * time.Minute) }

func exitCode(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("running skillfs: %v", err)
	}
	return ee.ExitCode()
}

func TestServeRefusesRemoteAddress(t *testing.T) {
	dir := t.TempDir()
	for _, addr := range []string{"0.0.0.0:0", ":0", "example.com:80", "192.0.2.1:0"} {
		out, err := exec.Command(skillfsBin, "serve", dir, "--http", addr).CombinedOutput()
		if code := exitCode(t, err); code != 2 {
			t.Errorf("--http %s: exit %d, want 2 (usage); output:\n%s", addr, code, out)
		}
		if !strings.Contains(string(out), "--allow-remote") {
			t.Errorf("--http %s: message does not point to --allow-remote:\n%s", addr, out)
		}
	}
}

func TestServeUsage(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"serve"},
		{"serve", dir, dir},
		{"serve", dir, "--page-size", "0"},
		{"serve", dir, "--poll", "0s"},
		{"serve", dir, "--no-such-flag"},
	} {
		out, err := exec.Command(skillfsBin, args...).CombinedOutput()
		if code := exitCode(t, err); code != 2 {
			t.Errorf("skillfs %q: exit %d, want 2 (usage); output:\n%s", args, code, out)
		}
	}
}

func TestServeMissingDir(t *testing.T) {
	out, err := exec.Command(skillfsBin, "serve", filepath.Join(t.TempDir(), "nope")).CombinedOutput()
	if code := exitCode(t, err); code != 1 {
		t.Errorf("exit %d, want 1; output:\n%s", code, out)
	}
	if !strings.Contains(string(out), "nope") {
		t.Errorf("message does not name the folder:\n%s", out)
	}
}

func TestServeStopsOnSignal(t *testing.T) {
	t.Parallel() // the stdio case waits out serve's 2 s for a listen stream
	fx := newFixture(t, 2)
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			u, cmd, stderr := startHTTPServer(t, fx.dir)
			// Connected clients hold event streams open (a GET stream in
			// 2025-11-25, subscriptions/listen in 2026-07-28); the server
			// must stop all the same.
			for _, era := range eras {
				connectHTTP(t, u, era, stderr)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := exitCode(t, cmd.Wait()); code != 0 {
				t.Errorf("exit %d after %v, want 0; stderr:\n%s", code, sig, stderr)
			}
		})
	}
	t.Run("stdio", func(t *testing.T) {
		p := startStdio(t, fx.dir, "2026-07-28")
		if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		p.cs.Wait()
		p.cs.Close() // waits for the process
		if code := p.cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("exit %d after SIGINT, want 0; stderr:\n%s", code, p.stderr)
		}
	})
}
