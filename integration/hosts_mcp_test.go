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

// TestRealHostMCP: Claude Code, Gemini CLI and Codex, as npm ships them, each set up
// only by `skillfs integrate HOST --mcp --write`, with no FUSE mount
// anywhere, run one prompt offline against the fake model API. The model's
// first request carries the catalog (skillfs mcp's instructions name every
// skill, its server and its path) but not the skill waiting for approval;
// the model calls the host's name for read_skill_file on a SKILL.md and a
// script, and the tool results in the next requests carry their exact
// bytes (less the host's own framing: Codex's "Wall time" header, Gemini's
// <untrusted_context> wrapper).
func TestRealHostMCP(t *testing.T) {
	t.Parallel()
	dir := installHosts(t)
	for _, h := range []struct {
		host agentHost
		// tool is the fake model's name for the read tool (fakeModel.tool).
		tool string
	}{
		{agentHosts[0], "mcp__skillfs__read_skill_file"},
		{agentHosts[1], "mcp_skillfs_read_skill_file"},
		{agentHosts[2], "mcp__skillfs/read_skill_file"},
	} {
		t.Run(h.host.name, func(t *testing.T) {
			t.Parallel()
			testRealHostMCP(t, dir, h.host, h.tool)
		})
	}
}

func testRealHostMCP(t *testing.T, dir string, h agentHost, tool string) {
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
	project := filepath.Join(home, "project")
	writeTree(t, project, map[string]string{"README.md": "a project\n"})

	reads := []string{"team/alpha/SKILL.md", "team/alpha/scripts/run.sh"}
	want := []string{string(files["alpha/SKILL.md"]), string(files["alpha/scripts/run.sh"])}
	fake := newFakeModelTool(t, tool, reads...)
	h.setup(t, home, fake.url) // the user's own settings
	if out, errOut, code := ctl(t, env, "integrate", h.name, "--mcp", "--write"); code != 0 {
		t.Fatalf("skillfs integrate %s --mcp --write: exit %d\n%s%s", h.name, code, out, errOut)
	}

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
		t.Fatalf("%s: %v\n%s\nthe model API saw %d requests:\n%s", h.name, err, out.String(), len(reqs), log.String())
	}
	for _, p := range fake.problems() {
		t.Errorf("the fake model: %s", p)
	}
	first := ""
	for _, r := range reqs {
		if body := plainJSON(r.Body); strings.Contains(body, "read_skill_file") && strings.Contains(body, "Use the alpha skill") {
			first = body
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
		if got = unframeMCP(got); got != want[i] {
			// Gemini CLI hands an MCP tool's text back marked as
			// untrusted: "<untrusted_context>\nTEXT\n</untrusted_context>".
			if inner, ok := strings.CutPrefix(got, "<untrusted_context>\n"); ok && h.name == "gemini" {
				got, _ = strings.CutSuffix(inner, "\n</untrusted_context>")
			}
		}
		if got != want[i] {
			t.Errorf("%s on %s returned\n%q\nwant the file's bytes\n%q", fake.tool, p, got, want[i])
		}
	}
	if t.Failed() {
		t.Logf("%s said:\n%s\nthe model API saw:\n%s", h.name, out.String(), log.String())
	}
}

// plainJSON is a request body re-encoded without HTML escapes (Codex
// writes < as \u003c), so that the catalog's elements can be found in it.
func plainJSON(b []byte) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return string(b)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	return out.String()
}

// unframeMCP is the text of an MCP tool's result as a host hands it back:
// Claude Code the text itself, Codex a JSON list of input_text items whose
// first is its own "Wall time" header.
func unframeMCP(out string) string {
	var items []struct {
		Type, Text string
	}
	if json.Unmarshal([]byte(out), &items) != nil {
		return out
	}
	var b strings.Builder
	for _, it := range items {
		if strings.HasPrefix(it.Text, "Wall time:") {
			continue
		}
		b.WriteString(it.Text)
	}
	return b.String()
}
