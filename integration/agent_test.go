//go:build linux

package integration

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestWalkthroughClaudeCode is the README's "Use the skills in your agent"
// walk-through, with the real binary and a home directory of its own: a
// config in the default place, `skillfs mount --daemon`, `skillfs approve`
// of one of two skills of a server under approval, `skillfs integrate
// claude-code --write`; then the hook command found in settings.json is run
// as Claude Code runs it (a shell, the hook's input on stdin), and its
// output is Claude Code's SessionStart JSON whose additionalContext names
// every approved skill with its server and absolute SKILL.md path, and
// no skill waiting for approval.
// regexpPid finds the daemon's pid in mount --daemon's output.
var regexpPid = regexp.MustCompile(`running in the background, pid (\d+);`)

func TestWalkthroughClaudeCode(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"), "XDG_RUNTIME_DIR=" + filepath.Join(home, "run"),
		// `go install ./cmd/skillfs` put skillfs on the PATH.
		"PATH=" + filepath.Dir(skillfsBin) + ":" + os.Getenv("PATH")}
	if err := os.MkdirAll(filepath.Join(home, "run"), 0o700); err != nil {
		t.Fatal(err)
	}
	sh := func(stdin string, args ...string) (string, string, int) {
		t.Helper()
		if args[0] == "skillfs" {
			args[0] = skillfsBin // the one on env's PATH
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env, cmd.Dir, cmd.Stdin = env, home, strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		return out.String(), errOut.String(), exitCode(err)
	}

	// Two servers: team (approval off) and vendor (approval required).
	team, vendor := t.TempDir(), t.TempDir()
	genTree(t, team, "team")
	writeTree(t, vendor, approvalFiles)
	cfg, _ := json.MarshalIndent(map[string]any{
		"mcpServers": map[string]any{"team": stdioServe(team, os.DevNull), "vendor": stdioServe(vendor, os.DevNull)},
		"skillfs":    map[string]any{"servers": map[string]any{"vendor": map[string]any{"approval": "required"}}},
	}, "", "  ")
	writeTree(t, filepath.Join(home, ".config", "skillfs"), map[string]string{"config.json": string(cfg)})

	mnt := filepath.Join(home, ".cache", "mcp-skills")
	out, errOut, code := sh("", "skillfs", "mount", "--daemon", "--startup-timeout", "10m", mnt)
	pid := 0
	if m := regexpPid.FindStringSubmatch(out); m != nil {
		pid, _ = strconv.Atoi(m[1])
	}
	cleanupDaemon(t, mnt, &pid, func() { sh("", "skillfs", "unmount", mnt) })
	if code == 3 {
		t.Skipf("FUSE cannot be mounted here: %s%s", out, errOut)
	}
	if code != 0 || pid == 0 {
		t.Fatalf("skillfs mount --daemon: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := sh("", "skillfs", "approve", "--yes", "vendor/alpha"); code != 0 {
		t.Fatalf("skillfs approve: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = sh("", "skillfs", "integrate", "claude-code", "--write")
	if code != 0 {
		t.Fatalf("skillfs integrate claude-code --write: exit %d\n%s%s", code, out, errOut)
	}

	// Claude Code reads the hook from settings.json and runs its command.
	var settings struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type    string `json:"type"`
				Command string `json:"command"`
				Timeout int    `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	b, err := os.ReadFile(filepath.Join(home, ".claude", "settings.json"))
	if err != nil || json.Unmarshal(b, &settings) != nil || len(settings.Hooks["SessionStart"]) != 1 || len(settings.Hooks["SessionStart"][0].Hooks) != 1 {
		t.Fatalf("settings.json: %v\n%s", err, b)
	}
	hook := settings.Hooks["SessionStart"][0].Hooks[0]
	if hook.Type != "command" || hook.Timeout <= 0 {
		t.Errorf("the hook: %+v", hook)
	}
	input := `{"session_id":"walkthrough","transcript_path":"` + home + `/t.jsonl","cwd":"` + home + `","hook_event_name":"SessionStart","source":"startup"}`
	out, errOut, code = sh(input, "sh", "-c", hook.Command)
	if code != 0 {
		t.Fatalf("the hook %q: exit %d\n%s", hook.Command, code, errOut)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("the hook's output is not JSON: %v\n%s", err, out)
	}
	var hso map[string]json.RawMessage
	if err := json.Unmarshal(got["hookSpecificOutput"], &hso); err != nil || len(got) != 1 {
		t.Fatalf("the hook's output has no hookSpecificOutput object (or other keys): %s", out)
	}
	var event, ctx string
	if json.Unmarshal(hso["hookEventName"], &event) != nil || event != "SessionStart" {
		t.Errorf("hookEventName %s, want \"SessionStart\"", hso["hookEventName"])
	}
	if err := json.Unmarshal(hso["additionalContext"], &ctx); err != nil || ctx == "" {
		t.Fatalf("additionalContext is not a string: %s", hso["additionalContext"])
	}
	approved := map[string]string{ // SKILL.md → server
		"team/alpha": "team", "team/team/beta": "team", "team/team/beta/gamma": "team",
		"team/shared/refunds": "team", "team/only-team": "team", "vendor/alpha": "vendor",
	}
	c := parseCatalog(t, []byte(ctx))
	if len(c.Skills) != len(approved) {
		t.Errorf("additionalContext lists %d skills, want %d:\n%s", len(c.Skills), len(approved), ctx)
	}
	seen := map[string]bool{}
	for _, s := range c.Skills {
		rel, ok := strings.CutPrefix(s.Location, mnt+"/")
		rel = strings.TrimSuffix(rel, "/SKILL.md")
		if !ok || approved[rel] != s.Server {
			t.Errorf("entry %+v: not an approved skill of that server", s)
		}
		seen[rel] = true
		if _, err := os.Stat(s.Location); err != nil {
			t.Errorf("entry %s: %v", s.Location, err)
		}
	}
	for p := range approved {
		if !seen[p] {
			t.Errorf("approved skill %s is missing from additionalContext", p)
		}
	}
	for _, pending := range []string{"beta", "gamma"} {
		if strings.Contains(ctx, "vendor/team/"+pending) || strings.Contains(ctx, "Nested skill") {
			t.Errorf("additionalContext names vendor's pending %s", pending)
		}
	}
	if !strings.Contains(ctx, "2 waiting for the user's approval") || !strings.HasPrefix(ctx, "The skills below are served by MCP servers") {
		t.Errorf("additionalContext does not open with the instructions or count the pending skills:\n%s", ctx)
	}

	// Undo: settings.json goes, as it did not exist before.
	if out, errOut, code := sh("", "skillfs", "integrate", "claude-code", "--remove"); code != 0 {
		t.Fatalf("skillfs integrate claude-code --remove: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, ".claude", "settings.json")); !os.IsNotExist(err) {
		t.Errorf("settings.json after --remove: %v", err)
	}
}
