//go:build linux

package integration

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHookNeverFailsSilently: Claude Code's SessionStart hook exits 0 with
// context that says why the skills are unavailable, and a warning for the
// user, when the mount is not running or does not answer (a stopped
// daemon: the hook gives up after its 2 s, not the host's 10 s timeout);
// and `skillfs status` on that stopped daemon ends with "does not answer"
// rather than waiting for ever. Before, the hook exited 1 with nothing on
// stdout (Claude Code then goes on silently) and status hung.
func TestHookNeverFailsSilently(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"), "XDG_RUNTIME_DIR=" + filepath.Join(home, "run"),
		"PATH=" + os.Getenv("PATH")}
	if err := os.MkdirAll(filepath.Join(home, "run"), 0o700); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(skillfsBin, args...)
		cmd.Env, cmd.Dir = env, home
		cmd.Stdin = strings.NewReader(`{"hook_event_name":"SessionStart","source":"startup"}`)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		cmd.WaitDelay = time.Second
		done := make(chan error, 1)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			return out.String(), errOut.String(), exitCode(err)
		case <-time.After(3 * time.Minute): // bounds a hang only
			cmd.Process.Kill()
			t.Fatalf("skillfs %v: no answer in 3 minutes", args)
		}
		return "", "", -1
	}
	type hookOut struct {
		SystemMessage      string `json:"systemMessage"`
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	hook := func(mnt, want string) {
		t.Helper()
		out, errOut, code := run("catalog", "--hook", "claude-code", "--mount", mnt)
		var h hookOut
		if code != 0 || json.Unmarshal([]byte(out), &h) != nil || h.HookSpecificOutput.HookEventName != "SessionStart" {
			t.Fatalf("the hook: exit %d, want 0 with SessionStart JSON\n%s%s", code, out, errOut)
		}
		ctx := h.HookSpecificOutput.AdditionalContext
		if want == "" {
			if h.SystemMessage != "" || !strings.Contains(ctx, "<available_skills>") || !strings.Contains(ctx, mnt+"/team/alpha/SKILL.md") {
				t.Errorf("the hook of a live mount: %s", out)
			}
			return
		}
		if !strings.Contains(ctx, "unavailable in this session") || !strings.Contains(ctx, want) ||
			!strings.HasPrefix(h.SystemMessage, "skillfs: skills unavailable: ") || !strings.Contains(h.SystemMessage, want) {
			t.Errorf("the hook, want context and a warning saying %q:\n%s", want, out)
		}
	}

	team := t.TempDir()
	genTree(t, team, "team")
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"team": stdioServe(team, os.DevNull)}})
	writeTree(t, filepath.Join(home, ".config", "skillfs"), map[string]string{"config.json": string(cfg)})
	mnt := filepath.Join(home, "mnt")
	hook(mnt, "no skillfs mount is running at "+mnt)

	out, errOut, code := run("mount", "--daemon", "--startup-timeout", "10m", mnt)
	pid := 0
	if m := regexpPid.FindStringSubmatch(out); m != nil {
		pid, _ = strconv.Atoi(m[1])
	}
	cleanupDaemon(t, mnt, &pid, func() { run("unmount", mnt) })
	if code == 3 {
		t.Skipf("FUSE cannot be mounted here: %s%s", out, errOut)
	}
	if code != 0 || pid == 0 {
		t.Fatalf("skillfs mount --daemon: exit %d\n%s%s", code, out, errOut)
	}
	hook(mnt, "")

	// A wedged daemon: stopped. Cleanups run last first: it is continued
	// before it is unmounted.
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	hook(mnt, "did not answer within 2s")
	out, errOut, code = run("status", "--mount", mnt)
	if code != 1 || !strings.Contains(errOut, "the mount at "+mnt+" does not answer") || !strings.Contains(errOut, "skillfs unmount --lazy "+mnt) {
		t.Errorf("skillfs status of a stopped daemon: exit %d, want 1 saying it does not answer\n%s%s", code, out, errOut)
	}
	syscall.Kill(pid, syscall.SIGCONT)
	hook(mnt, "")
}
