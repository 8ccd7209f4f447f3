package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skillfs/skillfs/internal/exitcode"
	"github.com/skillfs/skillfs/internal/integrate"
)

// integrateHome gives the test a home and state directory of its own.
func integrateHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
	t.Setenv("CODEX_HOME", "")
	return home
}

// integrate runs `skillfs integrate HOST ARGS` in-process and returns its
// output.
func runIntegrateCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(append([]string{"integrate"}, args...))
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func mustIntegrate(t *testing.T, args ...string) string {
	t.Helper()
	out, err := runIntegrateCmd(t, args...)
	if err != nil {
		t.Fatalf("skillfs integrate %v: %v\n%s", args, err, out)
	}
	return out
}

func readOrNil(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A user's settings.json: odd formatting, unknown keys, other hooks,
// a SessionStart hook of their own, an allow rule of their own.
const userSettings = `{"model": "opus",   "permissions": {"allow": ["Bash(ls:*)"]},
 "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}],
  "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}]},
 "zzUnknown": {"nested": [1, 2.50, "x"]}}`

type claudeSettings struct {
	Permissions struct {
		Allow []string `json:"allow"`
	} `json:"permissions"`
	Hooks map[string][]struct {
		Matcher string `json:"matcher"`
		Hooks   []struct {
			Type, Command string
			Timeout       int
		} `json:"hooks"`
	} `json:"hooks"`
}

// ourHooks are the commands of skillfs's SessionStart hooks in settings.
func ourHooks(t *testing.T, b []byte) (cmds []string, s claudeSettings) {
	t.Helper()
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("settings.json is not JSON: %v\n%s", err, b)
	}
	for _, g := range s.Hooks["SessionStart"] {
		for _, h := range g.Hooks {
			raw, _ := json.Marshal(map[string]string{"command": h.Command})
			if integrate.IsOurHook(raw) {
				cmds = append(cmds, h.Command)
			}
		}
	}
	return cmds, s
}

// TestIntegrateClaudeCodeHook: --write adds one SessionStart hook that runs
// this binary, by its absolute path, as `BIN catalog --hook claude-code
// --mount MOUNT`, and the allow rule Read(//MOUNT/**), keeping every other
// key, hook and rule; a second --write changes no byte; --remove restores
// the file byte for byte, or removes it when skillfs created it; a second
// --remove finds nothing.
func TestIntegrateClaudeCodeHook(t *testing.T) {
	bin, _ := os.Executable()
	bin, _ = filepath.EvalSymlinks(bin)
	for _, c := range []struct{ name, before string }{
		{"no file", ""},
		{"the user's settings", userSettings},
		{"an empty object", "{}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			home := integrateHome(t)
			target := filepath.Join(home, ".claude", "settings.json")
			if c.before != "" {
				os.MkdirAll(filepath.Dir(target), 0o755)
				if err := os.WriteFile(target, []byte(c.before), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			out := mustIntegrate(t, "claude-code", "--write", "--mount", "/mnt/my skills")
			if !strings.Contains(out, "undo with `skillfs integrate claude-code --remove`") {
				t.Errorf("--write does not name the undo command:\n%s", out)
			}
			first := readOrNil(t, target)
			cmds, s := ourHooks(t, first)
			want := integrate.ShellQuote(bin) + " catalog --hook claude-code --mount '/mnt/my skills'"
			if len(cmds) != 1 || cmds[0] != want {
				t.Errorf("skillfs's hooks %q, want one: %q\n%s", cmds, want, first)
			}
			allow := s.Permissions.Allow
			if c.before == userSettings {
				if !slices.Equal(allow, []string{"Bash(ls:*)", "Read(//mnt/my skills/**)"}) {
					t.Errorf("permissions.allow = %q", allow)
				}
				var before, after map[string]any
				json.Unmarshal([]byte(userSettings), &before)
				json.Unmarshal(first, &after)
				for _, k := range []string{"model", "zzUnknown"} {
					b, _ := json.Marshal(before[k])
					a, _ := json.Marshal(after[k])
					if !bytes.Equal(a, b) {
						t.Errorf("%s changed: %s -> %s", k, b, a)
					}
				}
				if len(s.Hooks["PreToolUse"]) != 1 || len(s.Hooks["SessionStart"]) != 2 || s.Hooks["SessionStart"][0].Hooks[0].Command != "echo hi" {
					t.Errorf("the user's hooks were not kept:\n%s", first)
				}
				if strings.Index(string(first), `"model"`) > strings.Index(string(first), `"zzUnknown"`) {
					t.Errorf("the keys' order changed:\n%s", first)
				}
			} else if !slices.Equal(allow, []string{"Read(//mnt/my skills/**)"}) {
				t.Errorf("permissions.allow = %q", allow)
			}
			if out := mustIntegrate(t, "claude-code", "--write", "--mount", "/mnt/my skills"); !strings.Contains(out, "nothing changed") || !bytes.Equal(readOrNil(t, target), first) {
				t.Errorf("a second --write changed settings.json (%q)", out)
			}
			mustIntegrate(t, "claude-code", "--remove")
			got := readOrNil(t, target)
			if c.before == "" && got != nil {
				t.Errorf("--remove left the file skillfs created:\n%s", got)
			}
			if c.before != "" && string(got) != c.before {
				t.Errorf("--remove did not restore the file byte for byte:\n%s\nwant\n%s", got, c.before)
			}
			if out := mustIntegrate(t, "claude-code", "--remove"); !strings.Contains(out, "nothing") {
				t.Errorf("a second --remove: %q", out)
			}
		})
	}
}

// TestIntegrateClaudeConfigDir: with CLAUDE_CONFIG_DIR set, the settings
// and CLAUDE.md are written there, and ~/.claude is not touched; a
// relative one is refused, saying why.
func TestIntegrateClaudeConfigDir(t *testing.T) {
	home := integrateHome(t)
	dir := filepath.Join(home, "elsewhere")
	t.Setenv("CLAUDE_CONFIG_DIR", dir)
	mustIntegrate(t, "claude-code", "--write", "--mount", "/m")
	if cmds, _ := ourHooks(t, readOrNil(t, filepath.Join(dir, "settings.json"))); len(cmds) != 1 {
		t.Errorf("no hook in $CLAUDE_CONFIG_DIR/settings.json")
	}
	mustIntegrate(t, "claude-code", "--write", "--import", "--mount", "/m")
	if b := readOrNil(t, filepath.Join(dir, "CLAUDE.md")); !bytes.Contains(b, []byte("\n@/m/.skillfs/catalog.md\n")) {
		t.Errorf("$CLAUDE_CONFIG_DIR/CLAUDE.md: %q", b)
	}
	if cmds, _ := ourHooks(t, readOrNil(t, filepath.Join(dir, "settings.json"))); len(cmds) != 0 {
		t.Errorf("--import left the hook beside the import: %q", cmds)
	}
	if _, err := os.Stat(filepath.Join(home, ".claude")); err == nil {
		t.Error("~/.claude was written although CLAUDE_CONFIG_DIR is set")
	}
	mustIntegrate(t, "claude-code", "--remove")
	for _, f := range []string{"settings.json", "CLAUDE.md"} {
		if b := readOrNil(t, filepath.Join(dir, f)); b != nil {
			t.Errorf("--remove left %s, which skillfs created: %q", f, b)
		}
	}
	t.Setenv("CLAUDE_CONFIG_DIR", "rel/dir")
	if _, err := runIntegrateCmd(t, "claude-code", "--write", "--mount", "/m"); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
		t.Errorf("a relative CLAUDE_CONFIG_DIR: %v", err)
	}
}

// TestIntegrateClaudeImport: --import adds a marked block whose import is
// a bare line naming catalog.md by its absolute path, and the allow rule;
// idempotent; `integrate claude-code --remove` (the command the hint
// names) takes both out.
func TestIntegrateClaudeImport(t *testing.T) {
	for _, before := range []string{"", "# Me\n\n- prefer Go\n"} {
		t.Run(before, func(t *testing.T) {
			home := integrateHome(t)
			target := filepath.Join(home, ".claude", "CLAUDE.md")
			if before != "" {
				os.MkdirAll(filepath.Dir(target), 0o755)
				os.WriteFile(target, []byte(before), 0o644)
			}
			mnt := filepath.Join(home, "mnt")
			args := []string{"claude-code", "--import", "--mount", mnt}
			if out := mustIntegrate(t, args...); !strings.Contains(out, "@"+mnt+"/.skillfs/catalog.md\n") || !strings.Contains(out, "Read(/"+mnt+"/**)") {
				t.Errorf("what it prints has no import line or no rule:\n%s", out)
			}
			if readOrNil(t, target) != nil && before == "" {
				t.Fatal("printing the snippet wrote the file")
			}
			out := mustIntegrate(t, append(args, "--write")...)
			if !strings.Contains(out, "undo with `skillfs integrate claude-code --remove`") {
				t.Errorf("the undo hint: %s", out)
			}
			first := readOrNil(t, target)
			imports := 0
			for _, l := range strings.Split(string(first), "\n") {
				if l == "@"+mnt+"/.skillfs/catalog.md" {
					imports++
				}
			}
			if imports != 1 || !strings.HasPrefix(string(first), before) {
				t.Errorf("after --write (%d import lines):\n%s", imports, first)
			}
			if _, s := ourHooks(t, readOrNil(t, filepath.Join(home, ".claude", "settings.json"))); !slices.Equal(s.Permissions.Allow, []string{"Read(/" + mnt + "/**)"}) {
				t.Errorf("the allow rule: %q", s.Permissions.Allow)
			}
			mustIntegrate(t, append(args, "--write")...)
			if !bytes.Equal(readOrNil(t, target), first) {
				t.Error("a second --write changed the file")
			}
			mustIntegrate(t, "claude-code", "--remove")
			if got := readOrNil(t, target); string(got) != before || (before == "" && got != nil) {
				t.Errorf("--remove: %q, want %q", got, before)
			}
			if got := readOrNil(t, filepath.Join(home, ".claude", "settings.json")); got != nil {
				t.Errorf("--remove left settings.json, which skillfs created: %s", got)
			}
		})
	}
}

// TestIntegrateRefusals: a symlinked target outside the home directory
// (unless --force), a folder named skills or commands, a settings.json
// that is not a JSON object, --write for generic: refused, nothing
// written, nothing recorded.
func TestIntegrateRefusals(t *testing.T) {
	home := integrateHome(t)
	outside := filepath.Join(t.TempDir(), "CLAUDE.md")
	os.WriteFile(outside, []byte("theirs\n"), 0o644)
	os.MkdirAll(filepath.Join(home, ".claude"), 0o755)
	link := filepath.Join(home, ".claude", "CLAUDE.md")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	if _, err := runIntegrateCmd(t, "claude-code", "--import", "--mount", "/m", "--write"); err == nil || !strings.Contains(err.Error(), "outside your home directory") {
		t.Errorf("a symlink out of home: %v", err)
	}
	if got := string(readOrNil(t, outside)); got != "theirs\n" {
		t.Errorf("the symlink's target was written: %q", got)
	}
	mustIntegrate(t, "claude-code", "--import", "--mount", "/m", "--write", "--force")
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 || !bytes.Contains(readOrNil(t, outside), []byte("@/m/.skillfs/catalog.md")) {
		t.Errorf("--force: the link is replaced or its target not written: %v", err)
	}
	mustIntegrate(t, "claude-code", "--remove", "--force")
	if got := string(readOrNil(t, outside)); got != "theirs\n" {
		t.Errorf("--remove through the link: %q", got)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("--remove replaced the link: %v", err)
	}

	os.Remove(link)
	for _, dir := range []string{"skills", "commands"} {
		project := filepath.Join(home, ".claude", dir, "x")
		if err := integrate.CheckTarget(filepath.Join(project, ".cursor", "rules", "skillfs.mdc"), home, true); err == nil {
			t.Errorf("a target inside a %s folder was allowed", dir)
		}
	}

	settings := filepath.Join(home, ".claude", "settings.json")
	for _, bad := range []string{`{"hooks": [1]}`, `[1, 2]`, `{"a": 1`, `{"hooks": {"SessionStart": {"x": 1}}}`, `{"permissions": {"allow": "Read"}}`, `{"permissions": []}`} {
		os.WriteFile(settings, []byte(bad), 0o600)
		if _, err := runIntegrateCmd(t, "claude-code", "--write", "--mount", "/m"); err == nil || !strings.Contains(err.Error(), "left alone") {
			t.Errorf("settings.json %s: %v", bad, err)
		}
		if got := string(readOrNil(t, settings)); got != bad {
			t.Errorf("settings.json %s was changed: %s", bad, got)
		}
	}
	recs, err := integrate.OpenRecords(filepath.Join(home, ".local", "state", "skillfs", "integrate"))
	if err != nil {
		t.Fatal(err)
	}
	if readOrNil(t, recs.Path(settings)) != nil {
		t.Error("a refused --write left a record")
	}
	if _, err := runIntegrateCmd(t, "generic", "--write"); exitcode.Of(err) != exitUsage {
		t.Errorf("generic --write: %v", err)
	}
	if _, err := runIntegrateCmd(t, "vim"); exitcode.Of(err) != exitUsage {
		t.Errorf("an unknown host: %v", err)
	}
}

// TestIntegrateMCP: --mcp registers `BIN mcp` as the MCP server "skillfs"
// where each host reads its MCP servers, keeping the user's servers; for
// Claude Code also the two allow rules, in place of the mount's hook and
// Read rule. A second --write changes nothing; --remove restores every
// file byte for byte, or removes the one skillfs created; a write of the
// mount's form takes the MCP server out.
// strconvQuote is s as a JSON (and so a TOML basic) string.
func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

func TestIntegrateMCP(t *testing.T) {
	bin, _ := os.Executable()
	bin, _ = filepath.EvalSymlinks(bin)
	home := integrateHome(t)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	userState := `{"numStartups": 2, "mcpServers": {"git": {"command": "git-mcp"}}}` + "\n"
	gemini := `{"security": {"auth": {"selectedType": "gemini-api-key"}}}` + "\n"
	for p, b := range map[string]string{".claude.json": userState, ".claude/settings.json": userSettings, ".gemini/settings.json": gemini} {
		os.MkdirAll(filepath.Dir(filepath.Join(home, p)), 0o755)
		if err := os.WriteFile(filepath.Join(home, p), []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A hook from the mount's form first: --mcp replaces it.
	mustIntegrate(t, "claude-code", "--write", "--mount", "/m")
	cfg := filepath.Join(home, "cfg.json")
	out := mustIntegrate(t, "claude-code", "--mcp", "--write", "--config", cfg)
	if !strings.Contains(out, "undo with") {
		t.Errorf("--write does not name the undo command:\n%s", out)
	}
	type server struct {
		Type    string         `json:"type"`
		Command string         `json:"command"`
		Args    []string       `json:"args"`
		Env     map[string]any `json:"env"`
		Trust   bool           `json:"trust"`
	}
	var state struct {
		NumStartups int               `json:"numStartups"`
		MCPServers  map[string]server `json:"mcpServers"`
	}
	first := readOrNil(t, filepath.Join(home, ".claude.json"))
	if err := json.Unmarshal(first, &state); err != nil {
		t.Fatal(err)
	}
	s := state.MCPServers["skillfs"]
	if state.NumStartups != 2 || state.MCPServers["git"].Command != "git-mcp" || s.Type != "stdio" || s.Command != bin || !slices.Equal(s.Args, []string{"mcp", "--config", cfg}) {
		t.Errorf("~/.claude.json:\n%s", first)
	}
	cmds, settings := ourHooks(t, readOrNil(t, filepath.Join(home, ".claude", "settings.json")))
	if len(cmds) != 0 || !slices.Equal(settings.Permissions.Allow, []string{"Bash(ls:*)", "mcp__skillfs__list_skill_files", "mcp__skillfs__read_skill_file"}) {
		t.Errorf("settings.json: hooks %q, allow %q", cmds, settings.Permissions.Allow)
	}
	if out := mustIntegrate(t, "claude-code", "--mcp", "--write", "--config", cfg); strings.Contains(out, "added") || !bytes.Equal(readOrNil(t, filepath.Join(home, ".claude.json")), first) {
		t.Errorf("a second --write changed something:\n%s", out)
	}
	// The mount's form again: the MCP server goes.
	mustIntegrate(t, "claude-code", "--write", "--mount", "/m")
	if b := readOrNil(t, filepath.Join(home, ".claude.json")); string(b) != userState {
		t.Errorf("the mount's form left the MCP server:\n%s", b)
	}
	mustIntegrate(t, "claude-code", "--mcp", "--write")
	mustIntegrate(t, "claude-code", "--remove")
	if b := readOrNil(t, filepath.Join(home, ".claude.json")); string(b) != userState {
		t.Errorf("--remove did not restore ~/.claude.json:\n%s", b)
	}
	if b := readOrNil(t, filepath.Join(home, ".claude", "settings.json")); string(b) != userSettings {
		t.Errorf("--remove did not restore settings.json:\n%s", b)
	}

	mustIntegrate(t, "gemini", "--mcp", "--write")
	var gs struct {
		MCPServers map[string]server `json:"mcpServers"`
	}
	if err := json.Unmarshal(readOrNil(t, filepath.Join(home, ".gemini", "settings.json")), &gs); err != nil || !gs.MCPServers["skillfs"].Trust || !slices.Equal(gs.MCPServers["skillfs"].Args, []string{"mcp"}) {
		t.Errorf("gemini settings.json (%v):\n%s", err, readOrNil(t, filepath.Join(home, ".gemini", "settings.json")))
	}
	mustIntegrate(t, "gemini", "--remove")
	if b := readOrNil(t, filepath.Join(home, ".gemini", "settings.json")); string(b) != gemini {
		t.Errorf("--remove did not restore gemini's settings.json:\n%s", b)
	}

	mustIntegrate(t, "cursor", "--mcp", "--write", "--project", home)
	if b := readOrNil(t, filepath.Join(home, ".cursor", "mcp.json")); !bytes.Contains(b, []byte(`"skillfs"`)) {
		t.Errorf("~/.cursor/mcp.json: %s", b)
	}
	mustIntegrate(t, "cursor", "--remove", "--project", home)
	if b := readOrNil(t, filepath.Join(home, ".cursor", "mcp.json")); b != nil {
		t.Errorf("--remove left ~/.cursor/mcp.json, which skillfs created: %s", b)
	}

	codex := "model = \"gpt-5\"\n\n[model_providers.fake]\nname = \"fake\"\n"
	os.MkdirAll(filepath.Join(home, ".codex"), 0o755)
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(codex), 0o600); err != nil {
		t.Fatal(err)
	}
	mustIntegrate(t, "codex", "--mcp", "--write", "--config", cfg)
	toml := string(readOrNil(t, filepath.Join(home, ".codex", "config.toml")))
	block := "\n# skillfs:begin: added by `skillfs integrate codex`; remove with `skillfs integrate codex --remove`\n[mcp_servers.skillfs]\ncommand = " +
		strconvQuote(bin) + "\nargs = [\"mcp\", \"--config\", " + strconvQuote(cfg) + "]\n# skillfs:end\n"
	if toml != codex+block {
		t.Errorf("config.toml:\n%s\nwant\n%s", toml, codex+block)
	}
	if out := mustIntegrate(t, "codex", "--mcp", "--write", "--config", cfg); !strings.Contains(out, "nothing changed") {
		t.Errorf("a second --write: %s", out)
	}
	mustIntegrate(t, "codex", "--remove")
	if b := readOrNil(t, filepath.Join(home, ".codex", "config.toml")); string(b) != codex {
		t.Errorf("--remove did not restore config.toml:\n%s", b)
	}
	own := codex + "\n[mcp_servers.skillfs]\ncommand = \"mine\"\n"
	os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(own), 0o600)
	if _, err := runIntegrateCmd(t, "codex", "--mcp", "--write"); err == nil || !strings.Contains(err.Error(), "not skillfs's") {
		t.Errorf("codex --mcp over the user's own [mcp_servers.skillfs]: %v", err)
	}
	if b := readOrNil(t, filepath.Join(home, ".codex", "config.toml")); string(b) != own {
		t.Errorf("the refusal changed config.toml:\n%s", b)
	}

	for _, args := range [][]string{{"generic", "--mcp"}, {"claude-code", "--mcp", "--import"}, {"claude-code", "--config", cfg}} {
		if _, err := runIntegrateCmd(t, args...); err == nil || !strings.Contains(err.Error(), "--") {
			t.Errorf("integrate %q: %v, want a usage error", args, err)
		}
	}
}
