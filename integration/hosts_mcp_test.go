//go:build linux

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestRealHostMCP: Claude Code, as npm ships it, set up only by `skillfs
// integrate claude-code --mcp --write`, with no FUSE mount anywhere, runs
// one prompt offline against the fake model API. The model's first request
// carries the catalog (skillfs mcp's instructions name every skill, its
// server and its path) but not the skill waiting for approval; the model
// calls mcp__skillfs__read_skill_file on a SKILL.md and a script, and the
// tool results in the next requests carry their exact bytes.
func TestRealHostMCP(t *testing.T) {
	t.Parallel()
	dir := installHosts(t)
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"), "XDG_RUNTIME_DIR=" + filepath.Join(home, "run"),
		"PATH=" + filepath.Dir(skillfsBin) + ":" + os.Getenv("PATH"), "LANG=C.UTF-8", "TERM=dumb"}
	if err := os.MkdirAll(filepath.Join(home, "run"), 0o700); err != nil {
		t.Fatal(err)
	}
	skillsDir := t.TempDir()
	files := genTree(t, skillsDir, "team")
	vettedDir := t.TempDir()
	writeTree(t, vettedDir, map[string]string{"pending-one/SKILL.md": skillMD("pending-one", "Waits for the person to approve it", "not yet\n")})
	cfg, _ := json.Marshal(map[string]any{
		"mcpServers": map[string]any{"team": stdioServe(skillsDir, os.DevNull), "vetted": stdioServe(vettedDir, os.DevNull)},
		"skillfs":    map[string]any{"servers": map[string]any{"vetted": map[string]any{"approval": "required"}}},
	})
	writeTree(t, filepath.Join(home, ".config", "skillfs"), map[string]string{"config.json": string(cfg)})
	writeTree(t, filepath.Join(home, ".claude"), map[string]string{"settings.json": `{"permissions": {"deny": ["Bash(rm:*)"]}}` + "\n"})
	project := filepath.Join(home, "project")
	writeTree(t, project, map[string]string{"README.md": "a project\n"})

	if out, errOut, code := ctl(t, env, "integrate", "claude-code", "--mcp", "--write"); code != 0 {
		t.Fatalf("skillfs integrate claude-code --mcp --write: exit %d\n%s%s", code, out, errOut)
	}

	reads := []string{"team/alpha/SKILL.md", "team/alpha/scripts/run.sh"}
	want := []string{string(files["alpha/SKILL.md"]), string(files["alpha/scripts/run.sh"])}
	fake := newFakeModelTool(t, "mcp__skillfs__read_skill_file", reads...)
	h := agentHosts[0] // claude-code
	argv := h.command(dir, "Use the alpha skill: read its SKILL.md and its script.")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // bounds a hang only
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(append([]string(nil), env...), h.env(fake.url)...)
	cmd.Dir = project
	cmd.Stdin = strings.NewReader("")
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	reqs := fake.requests()
	var log strings.Builder
	for _, r := range reqs {
		log.WriteString(r.Path + " " + string(r.Body[:min(len(r.Body), 3000)]) + "\n")
	}
	if err != nil {
		t.Fatalf("claude: %v\n%s\nthe model API saw %d requests:\n%s", err, out.String(), len(reqs), log.String())
	}
	for _, p := range fake.problems() {
		t.Errorf("the fake model: %s", p)
	}
	first := ""
	for _, r := range reqs {
		if bytes.Contains(r.Body, []byte(fake.tool)) && bytes.Contains(r.Body, []byte("Use the alpha skill")) {
			first = string(r.Body)
			break
		}
	}
	if first == "" {
		t.Fatalf("no request of the agent's turn named %s\n%s\n%s", fake.tool, out.String(), log.String())
	}
	for p, b := range files {
		if filepath.Base(p) != "SKILL.md" {
			continue
		}
		name := regexp.MustCompile(`(?m)^name: (.*)$`).FindSubmatch(b)
		loc := "<location>team/" + p + "</location>"
		if name == nil || !strings.Contains(first, loc) || !strings.Contains(first, "<name>"+string(name[1])+"</name>") {
			t.Errorf("the model's first request does not name %s (%s)", p, loc)
		}
	}
	if !strings.Contains(first, "<server>team</server>") {
		t.Errorf("the model's first request does not name the server")
	}
	if strings.Contains(first, "pending-one") || strings.Contains(first, "Waits for the person") {
		t.Errorf("the model's first request names the skill waiting for approval")
	}
	for i, p := range reads {
		got, ok := fake.result(i)
		if !ok {
			t.Errorf("the host never returned a result for reading %s", p)
			continue
		}
		if got != want[i] {
			t.Errorf("%s on %s returned\n%q\nwant the file's bytes\n%q", fake.tool, p, got, want[i])
		}
	}
	if t.Failed() {
		t.Logf("claude said:\n%s\nthe model API saw:\n%s", out.String(), log.String())
	}
}
