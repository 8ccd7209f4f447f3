//go:build unix

package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/skillfs/skillfs/internal/testkit"
)

// runChild is the test binary re-executed as a stdio server or a helper
// process.
func runChild(mode string) {
	switch mode {
	case "stderr-exit":
		fmt.Fprintln(os.Stderr, "hello from child")
		fmt.Fprintln(os.Stderr, strings.Repeat("x", 10000))
		fmt.Fprintln(os.Stderr, "bye")
	case "mcp":
		if err := newServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "server:", err)
			os.Exit(1)
		}
	case "ignore-stdin", "ignore-term", "exit-leave-grandchild":
		sleeper := "sleep"
		if mode == "ignore-term" {
			signal.Ignore(syscall.SIGTERM)
			sleeper = "sleep-ignore-term"
		}
		gc := exec.Command(os.Args[0])
		gc.Env = append(os.Environ(), childEnv+"="+sleeper)
		gc.Stdout, gc.Stderr = os.Stdout, os.Stderr // holds the pipes open
		if err := gc.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "grandchild:", err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "pids %d %d\n", os.Getpid(), gc.Process.Pid)
		if mode == "exit-leave-grandchild" {
			return
		}
		// Stdin closing is not a reason to stop.
		io.Copy(io.Discard, os.Stdin)
		sleepForever()
	case "sleep":
		sleepForever()
	case "sleep-ignore-term":
		signal.Ignore(syscall.SIGTERM)
		sleepForever()
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", mode)
		os.Exit(2)
	}
}

func sleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}

func childCmd(mode string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	return cmd
}

// childPids waits for the child's "pids" stderr line.
func childPids(t *testing.T, rec *testLog) []int {
	t.Helper()
	var pids []int
	found := testkit.Poll(time.Minute, func() bool {
		for _, r := range rec.Matching(slog.LevelInfo, "stderr") {
			if f := strings.Fields(r.Attrs["stderr"]); len(f) == 3 && f[0] == "pids" {
				for _, s := range f[1:] {
					pid, err := strconv.Atoi(s)
					if err != nil {
						t.Fatal(err)
					}
					pids = append(pids, pid)
				}
				return true
			}
		}
		return false
	})
	if !found {
		t.Fatalf("child never reported its pids: %v", rec.Records())
	}
	return pids
}

// alive says whether pid is a live process; a zombie counts as dead (its
// parent, init in a container, may take its time to reap it).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !os.IsNotExist(err)
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// assertGone waits for every pid to die.
func assertGone(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		if !testkit.Poll(time.Minute, func() bool { return !alive(pid) }) {
			t.Errorf("process %d left behind", pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

func TestCommandChildExits(t *testing.T) {
	log, rec := newTestLog(t)
	conn, err := Command(childCmd("stderr-exit"), Options{Logger: log}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Read(context.Background()); !errors.Is(err, io.EOF) {
		t.Errorf("Read after the child exited: %v, want io.EOF", err)
	}
	if err := conn.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	var lines []string
	for _, r := range rec.Matching(slog.LevelInfo, "stderr") {
		lines = append(lines, r.Attrs["stderr"])
	}
	want := []string{"hello from child", strings.Repeat("x", maxStderrLine) + "…", "bye"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("stderr logged as %q", lines)
	}
}

func TestCommandCloseKillsGroup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode  string
		warn  []string
		grace time.Duration // Options.termGrace: one that ignores SIGTERM is killed in any case
	}{
		{"ignore-stdin", nil, 0},
		{"ignore-term", []string{"ignored SIGTERM"}, 200 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel() // each waits out Close's graces
			log, rec := newTestLog(t, tt.warn...)
			conn, err := Command(childCmd(tt.mode), Options{Logger: log, termGrace: tt.grace}).Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			pids := childPids(t, rec)
			readErr := make(chan error)
			go func() {
				_, err := conn.Read(context.Background())
				readErr <- err
			}()
			closed := make(chan error)
			go func() { closed <- conn.Close() }()
			conn.Close() // concurrently, and again
			if err := <-closed; err != nil {
				t.Errorf("Close: %v", err)
			}
			if err := <-readErr; !errors.Is(err, io.EOF) {
				t.Errorf("Read: %v, want io.EOF", err)
			}
			assertGone(t, pids)
			if n := len(rec.Matching(slog.LevelWarn, "ignored SIGTERM")); n != len(tt.warn) {
				t.Errorf("%d SIGKILL warnings, want %d", n, len(tt.warn))
			}
		})
	}
}

// On a machine so loaded that no server is gone by the time SIGKILL follows
// SIGTERM (a grace of a nanosecond), Close still reports only the server that was
// running when SIGKILL reached it: one that ignores SIGTERM, not one that
// SIGTERM killed and that was merely not yet reaped.
func TestCommandCloseReportsOnlyIgnoredTerm(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cmd  func() *exec.Cmd
		warn int
	}{
		// sleep keeps SIGTERM's default action: the signal decides its
		// exit status when it is sent.
		{"killed-by-term", func() *exec.Cmd { return exec.Command("sleep", "1000") }, 0},
		{"ignore-term", func() *exec.Cmd { return childCmd("ignore-term") }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := exec.LookPath("sleep"); err != nil {
				t.Skip("no sleep command")
			}
			var expect []string
			if tt.warn > 0 {
				expect = []string{"ignored SIGTERM"}
			}
			log, rec := newTestLog(t, expect...)
			cmd := tt.cmd()
			conn, err := Command(cmd, Options{Logger: log, termGrace: time.Nanosecond}).Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			pids := []int{cmd.Process.Pid}
			if tt.warn > 0 {
				// The child ignores SIGTERM before it reports its pids:
				// closing sooner would test a child that has not yet
				// chosen to (a loaded machine starts it slowly).
				pids = childPids(t, rec)
			}
			if err := conn.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
			assertGone(t, pids)
			if n := len(rec.Matching(slog.LevelWarn, "ignored SIGTERM")); n != tt.warn {
				t.Errorf("%d SIGKILL warnings, want %d: %v", n, tt.warn, rec.Records())
			}
		})
	}
}

func TestCommandLeaderExitEndsStream(t *testing.T) {
	log, rec := newTestLog(t)
	conn, err := Command(childCmd("exit-leave-grandchild"), Options{Logger: log}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	pids := childPids(t, rec)
	// The grandchild holds stdout open; the group goes with its leader.
	if _, err := conn.Read(context.Background()); !errors.Is(err, io.EOF) {
		t.Errorf("Read: %v, want io.EOF", err)
	}
	assertGone(t, pids)
}

func TestCommandSession(t *testing.T) {
	log, rec := newTestLog(t)
	cmd := childCmd("mcp")
	cs, err := newClient(t).Connect(context.Background(), Command(cmd, Options{Logger: log}), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := readResource(WithResponseLimit(ctx, mib), cs, overURI); !IsResponseTooLarge(err) {
		t.Errorf("4 MiB read with a 1 MiB limit: %v", err)
	}
	if got, err := readResource(ctx, cs, smallURI); err != nil || got != "hello" {
		t.Errorf("small read on the same session: %q, %v", got, err)
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close session: %v", err)
	}
	assertGone(t, []int{cmd.Process.Pid})
	for _, r := range rec.Records() {
		if r.Level >= slog.LevelInfo {
			t.Logf("%v", r)
		}
	}
}

func TestCommandRefusesPresetStdio(t *testing.T) {
	cmd := childCmd("sleep")
	cmd.Stdout = io.Discard
	if _, err := Command(cmd, Options{}).Connect(context.Background()); err == nil {
		t.Error("Connect with cmd.Stdout set succeeded")
	}
	if cmd.Process != nil {
		t.Error("process started")
		cmd.Process.Kill()
	}
}

func TestMissingCommandSaysNotFound(t *testing.T) {
	for _, name := range []string{"skillfs-test-no-such-server", "/nonexistent/skillfs-server"} {
		_, err := Command(exec.Command(name), Options{}).Connect(context.Background())
		var nf *CommandNotFoundError
		if !errors.As(err, &nf) {
			t.Fatalf("Connect(%s) = %v, want a CommandNotFoundError", name, err)
		}
		if want := fmt.Sprintf("command %q not found", name); err.Error() != want {
			t.Errorf("Connect(%s): %q, want %q", name, err, want)
		}
	}
	// A command that exists but cannot run is not "not found".
	_, err := Command(exec.Command(os.DevNull), Options{}).Connect(context.Background())
	var nf *CommandNotFoundError
	if err == nil || errors.As(err, &nf) {
		t.Errorf("Connect(%s) = %v, want an error other than not found", os.DevNull, err)
	}
}
