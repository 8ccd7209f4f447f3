//go:build linux

package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillfs/skillfs/integration/hostile"
)

// Shell completion through the real binary's hidden __complete command
// (what the scripts of `skillfs completion bash|zsh|fish` run), against a
// real running mount.

// maxCompletions is the documented bound on candidates (README: "Shell
// completion").
const maxCompletions = 200

// envSilentDaemon: the test binary, run again with this set to a socket
// path, is a fake mount that registers that socket in its directory and
// accepts connections on it without ever answering (a hung daemon). It
// prints "listening" once registered.
const envSilentDaemon = "SKILLFS_TEST_SILENT_DAEMON"

func init() {
	sock := os.Getenv(envSilentDaemon)
	if sock == "" {
		return
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		fmt.Fprintln(os.Stderr, "silent daemon:", err)
		os.Exit(1)
	}
	reg, _ := json.Marshal(map[string]any{"mountpoint": "/silent/mnt", "pid": os.Getpid(), "socket": sock, "started": time.Now()})
	if err := os.WriteFile(strings.TrimSuffix(sock, ".sock")+".json", reg, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "silent daemon:", err)
		os.Exit(1)
	}
	fmt.Println("listening")
	var held []net.Conn
	for {
		c, err := ln.Accept()
		if err != nil {
			os.Exit(1)
		}
		held = append(held, c) // read nothing, answer nothing, close nothing
	}
}

// completion is what `skillfs __complete ARGS` offered.
type completion struct {
	words      []string
	activeHelp []string
	directive  int
}

func complete(t *testing.T, env []string, args ...string) completion {
	t.Helper()
	out, errOut, code := ctl(t, env, append([]string{"__complete"}, args...)...)
	if code != 0 {
		t.Fatalf("skillfs __complete %q: exit %d\n%s", args, code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	last := lines[len(lines)-1]
	var c completion
	d, err := strconv.Atoi(strings.TrimPrefix(last, ":"))
	if !strings.HasPrefix(last, ":") || err != nil {
		t.Fatalf("skillfs __complete %q: no directive line:\n%s", args, out)
	}
	c.directive = d
	for _, l := range lines[:len(lines)-1] {
		if h, ok := strings.CutPrefix(l, "_activeHelp_ "); ok {
			c.activeHelp = append(c.activeHelp, h)
			continue
		}
		w, _, _ := strings.Cut(l, "\t")
		c.words = append(c.words, w)
	}
	return c
}

// Cobra's completion directives.
const (
	compNoSpace    = 2
	compNoFileComp = 4
	compFilterDirs = 16
)

func TestCompletionFromTheRunningMount(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	genTree(t, dir, "local")
	// More skills than a completion offers: a server of many skills must
	// not flood the shell.
	crowd := maxCompletions + 20
	env := runtimeEnv(t)
	cfg := writeConfig(t, map[string]any{
		"local": stdioServe(dir, os.DevNull),
		"crowd": hostileStdio(t, hostile.Options{Fixtures: []string{}, Mode: hostile.ModeSameNameCrowd, Crowd: crowd, PageSize: 500}),
	}, map[string]any{"servers": map[string]any{"local": map[string]any{"approval": "required"}}})
	m := startMountEnv(t, env, cfg)
	if out, errOut, code := ctl(t, env, "approve", "--yes", "local/alpha"); code != 0 {
		t.Fatalf("skillfs approve local/alpha: exit %d\n%s%s", code, out, errOut)
	}

	check := func(got completion, want []string, directive int, args ...string) {
		t.Helper()
		if !slices.Equal(got.words, want) || got.directive != directive {
			t.Errorf("skillfs __complete %q: %q (directive %d), want %q (directive %d)", args, got.words, got.directive, want, directive)
		}
	}
	try := func(want []string, directive int, args ...string) {
		t.Helper()
		check(complete(t, env, args...), want, directive, args...)
	}
	// Labels, from the mount.
	try([]string{"crowd", "local"}, compNoFileComp, "list", "")
	try([]string{"local"}, compNoFileComp, "list", "l")
	try([]string{"local"}, compNoFileComp, "approve", "--all", "lo")
	try([]string{"crowd", "local"}, compNoFileComp, "get", "--origin", "")
	// Skill paths, a segment at a time.
	try([]string{"crowd/", "local/"}, compNoFileComp|compNoSpace, "inspect", "")
	try([]string{"local/alpha", "local/only-local", "local/shared/", "local/team/"}, compNoFileComp|compNoSpace, "inspect", "local/")
	try([]string{"local/team/beta", "local/team/beta/"}, compNoFileComp|compNoSpace, "inspect", "local/team/b")
	try([]string{"local/team/beta/gamma"}, compNoFileComp, "inspect", "local/team/beta/")
	try(nil, compNoFileComp, "inspect", "local/nothing")
	// approve offers what waits for approval, revoke what is approved,
	// neither what is already on the line.
	try([]string{"local/only-local", "local/shared/", "local/team/"}, compNoFileComp|compNoSpace, "approve", "local/")
	try([]string{"local/team/"}, compNoFileComp|compNoSpace, "approve", "local/only-local", "local/t")
	try([]string{"local/alpha"}, compNoFileComp, "revoke", "local/")
	// Mountpoints, from the running mounts' registrations.
	try([]string{m.Dir}, compNoFileComp, "status", "--mount", "")
	try([]string{m.Dir}, compNoFileComp, "unmount", "")
	try([]string{m.Dir}, compNoFileComp, "inspect", "--mount", m.Dir[:len(m.Dir)-2])
	try([]string{"local/alpha"}, compNoFileComp, "inspect", "--mount", m.Dir, "local/a")
	try(nil, compNoFileComp, "status", "--mount", "/elsewhere")

	// The bound: at most maxCompletions candidates, the rest counted.
	got := complete(t, env, "inspect", "crowd/")
	if len(got.words) != maxCompletions || got.directive != compNoFileComp|compNoSpace {
		t.Errorf("skillfs __complete inspect crowd/: %d candidates (directive %d), want %d", len(got.words), got.directive, maxCompletions)
	}
	if len(got.activeHelp) != 1 || !strings.Contains(got.activeHelp[0], "more; type more of the path") {
		t.Errorf("skillfs __complete inspect crowd/: no hint that there are more: %q", got.activeHelp)
	}
	for i, w := range got.words {
		if !strings.HasPrefix(w, "crowd/") || (i > 0 && w <= got.words[i-1]) {
			t.Errorf("candidate %d: %q (after %q)", i, w, got.words[max(i-1, 0)])
			break
		}
	}
	// Typing more of the path narrows it to what fits.
	want := []string{"crowd/crowd-7/"}
	for i := range 10 {
		want = append(want, fmt.Sprintf("crowd/crowd-7%d/", i))
	}
	try(want, compNoFileComp|compNoSpace, "inspect", "crowd/crowd-7")
	try([]string{"crowd/crowd-7/x"}, compNoFileComp, "inspect", "crowd/crowd-7/")
}

// TestCompletionOfFixedValues: flags and arguments with a fixed few
// values complete them, no mount needed.
func TestCompletionOfFixedValues(t *testing.T) {
	t.Parallel()
	env := runtimeEnv(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"catalog", "--format", ""}, []string{"xml", "markdown", "json"}},
		{[]string{"catalog", "--hook", ""}, []string{"claude-code"}},
		{[]string{"mount", "--log-level", "w"}, []string{"warn"}},
		{[]string{"integrate", "c"}, []string{"claude-code", "codex", "cursor"}},
		{[]string{"integrate", "codex", ""}, nil},
		{[]string{"list", ""}, nil}, // no mount running: nothing, at once
	} {
		got := complete(t, env, tc.args...)
		if !slices.Equal(got.words, tc.want) || got.directive != compNoFileComp {
			t.Errorf("skillfs __complete %q: %q (directive %d), want %q", tc.args, got.words, got.directive, tc.want)
		}
	}
	for _, args := range [][]string{{"mount", ""}, {"serve", ""}, {"status", "--cache-dir", ""}} {
		if got := complete(t, env, args...); got.words != nil || got.directive != compFilterDirs {
			t.Errorf("skillfs __complete %q: %q (directive %d), want directories", args, got.words, got.directive)
		}
	}
}

// TestCompletionDoesNotWaitForAHungMount: a mount that accepts the
// connection and never answers (a hung daemon, a stopped process)
// completes nothing, and the completion returns; it does not hold the
// shell. The deadline here only fails a hang.
func TestCompletionDoesNotWaitForAHungMount(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := runtimeEnv(t)
	rt := strings.TrimPrefix(env[len(env)-1], "XDG_RUNTIME_DIR=")
	if err := os.Mkdir(filepath.Join(rt, "skillfs"), 0o700); err != nil {
		t.Fatal(err)
	}
	// The silent daemon's socket path must fit in sun_path (108 bytes).
	sock := filepath.Join(rt, "skillfs", "0123456789abcdef.sock")
	if len(sock) >= 108 {
		t.Skipf("the runtime directory's path is too long for a socket: %s", sock)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envSilentDaemon+"="+sock)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut syncBuffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if _, err := waitLine(t, stdout, io.Discard, "listening", 2*time.Minute); err != nil {
		t.Fatalf("silent daemon: %v\n%s", err, errOut.String())
	}
	// It is found, as a running mount is.
	try := func(want []string, args ...string) {
		t.Helper()
		got := complete(t, env, args...)
		if !slices.Equal(got.words, want) || got.directive != compNoFileComp {
			t.Errorf("skillfs __complete %q: %q (directive %d), want %q", args, got.words, got.directive, want)
		}
	}
	try([]string{"/silent/mnt"}, "status", "--mount", "")
	// Asked, it never answers: nothing to offer, in bounded time.
	try(nil, "inspect", "")
	try(nil, "list", "")
	try(nil, "approve", "--all", "")
}
