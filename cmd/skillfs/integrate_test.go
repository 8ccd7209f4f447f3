package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
func integrate(t *testing.T, args ...string) (string, error) {
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
	out, err := integrate(t, args...)
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
// a SessionStart hook of their own.
const userSettings = `{"model": "opus",   "permissions": {"allow": ["Bash(ls:*)"]},
 "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}],
  "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}]},
 "zzUnknown": {"nested": [1, 2.50, "x"]}}`

// TestIntegrateClaudeCodeHook: --write adds one SessionStart hook that runs
// `skillfs catalog --hook claude-code` and keeps every other key and hook;
// a second --write changes no byte; --remove restores the file byte for
// byte, or removes it when skillfs created it.
func TestIntegrateClaudeCodeHook(t *testing.T) {
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
			mustIntegrate(t, "claude-code", "--write")
			first := readOrNil(t, target)
			var s struct {
				Hooks map[string][]hookGroup `json:"hooks"`
				Rest  map[string]any         `json:"-"`
			}
			if err := json.Unmarshal(first, &s); err != nil {
				t.Fatalf("settings.json after --write is not JSON: %v\n%s", err, first)
			}
			ours := 0
			for _, g := range s.Hooks["SessionStart"] {
				for _, h := range g.Hooks {
					if h.Command == hookCommand && h.Type == "command" && g.Matcher == "" {
						ours++
					}
				}
			}
			if ours != 1 {
				t.Errorf("%d SessionStart hooks of skillfs's, want 1:\n%s", ours, first)
			}
			if c.before == userSettings {
				var before, after map[string]any
				json.Unmarshal([]byte(userSettings), &before)
				json.Unmarshal(first, &after)
				for _, k := range []string{"model", "permissions", "zzUnknown"} {
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
			}
			if out := mustIntegrate(t, "claude-code", "--write"); !strings.Contains(out, "nothing changed") || !bytes.Equal(readOrNil(t, target), first) {
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

// TestIntegrateRemoveAfterEdit: when the file changed since --write (the
// user or the host edited it), --remove takes out only skillfs's part.
func TestIntegrateRemoveAfterEdit(t *testing.T) {
	home := integrateHome(t)
	target := filepath.Join(home, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(target), 0o755)
	os.WriteFile(target, []byte(userSettings), 0o600)
	mustIntegrate(t, "claude-code", "--write", "--mount", "/mnt/my skills")
	b := readOrNil(t, target)
	if !bytes.Contains(b, []byte(`"skillfs catalog --hook claude-code --mount '/mnt/my skills'"`)) {
		t.Errorf("the hook does not name the mount, quoted:\n%s", b)
	}
	edited := bytes.Replace(b, []byte(`"model": "opus"`), []byte(`"model": "sonnet", "theme": "dark"`), 1)
	os.WriteFile(target, edited, 0o600)
	mustIntegrate(t, "claude-code", "--remove")
	var after map[string]any
	got := readOrNil(t, target)
	if err := json.Unmarshal(got, &after); err != nil || after["theme"] != "dark" || after["model"] != "sonnet" || bytes.Contains(got, []byte("skillfs")) || !bytes.Contains(got, []byte("echo hi")) || !bytes.Contains(got, []byte("audit.sh")) {
		t.Errorf("--remove after an edit: %v\n%s", err, got)
	}
}

// TestIntegrateMarkdownImport: gemini (and claude-code --import) add a
// marked block whose import is a bare line naming catalog.md by its
// absolute path; idempotent and reversible, with or without a file before.
func TestIntegrateMarkdownImport(t *testing.T) {
	for _, c := range []struct {
		host, file string
		args       []string
		before     string
	}{
		{"gemini", ".gemini/GEMINI.md", nil, ""},
		{"gemini", ".gemini/GEMINI.md", nil, "# My notes\n\nUse tabs."},
		{"claude-code", ".claude/CLAUDE.md", []string{"--import"}, "# Me\n\n- prefer Go\n"},
	} {
		t.Run(c.host+"/"+c.before, func(t *testing.T) {
			home := integrateHome(t)
			target := filepath.Join(home, c.file)
			if c.before != "" {
				os.MkdirAll(filepath.Dir(target), 0o755)
				os.WriteFile(target, []byte(c.before), 0o644)
			}
			mnt := filepath.Join(home, "mnt")
			args := append([]string{c.host, "--mount", mnt}, c.args...)
			if out := mustIntegrate(t, args...); !strings.Contains(out, "@"+mnt+"/.skillfs/catalog.md\n") {
				t.Errorf("the snippet printed has no import line:\n%s", out)
			}
			if readOrNil(t, target) != nil && c.before == "" {
				t.Fatal("printing the snippet wrote the file")
			}
			mustIntegrate(t, append(args, "--write")...)
			first := readOrNil(t, target)
			lines := strings.Split(string(first), "\n")
			imports := 0
			for _, l := range lines {
				if l == "@"+mnt+"/.skillfs/catalog.md" {
					imports++
				}
			}
			if imports != 1 || !strings.HasPrefix(string(first), c.before) {
				t.Errorf("after --write (%d import lines):\n%s", imports, first)
			}
			mustIntegrate(t, append(args, "--write")...)
			if !bytes.Equal(readOrNil(t, target), first) {
				t.Error("a second --write changed the file")
			}
			mustIntegrate(t, append([]string{c.host, "--remove"}, c.args...)...)
			if got := readOrNil(t, target); string(got) != c.before || (c.before == "" && got != nil) {
				t.Errorf("--remove: %q, want %q", got, c.before)
			}
		})
	}
	t.Run("edited since", func(t *testing.T) {
		home := integrateHome(t)
		target := filepath.Join(home, ".gemini", "GEMINI.md")
		os.MkdirAll(filepath.Dir(target), 0o755)
		os.WriteFile(target, []byte("before\n"), 0o644)
		mustIntegrate(t, "gemini", "--mount", "/m", "--write")
		b := append(readOrNil(t, target), "after\n"...)
		os.WriteFile(target, b, 0o644)
		mustIntegrate(t, "gemini", "--remove")
		if got := string(readOrNil(t, target)); got != "before\nafter\n" {
			t.Errorf("--remove after an edit: %q", got)
		}
	})
}

// TestIntegrateRefusals: a symlinked target outside the home directory
// (unless --force), a folder named skills or commands, a settings.json
// that is not a JSON object, --write for generic: refused, nothing
// written, nothing recorded.
func TestIntegrateRefusals(t *testing.T) {
	home := integrateHome(t)
	outside := filepath.Join(t.TempDir(), "GEMINI.md")
	os.WriteFile(outside, []byte("theirs\n"), 0o644)
	os.MkdirAll(filepath.Join(home, ".gemini"), 0o755)
	link := filepath.Join(home, ".gemini", "GEMINI.md")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	if _, err := integrate(t, "gemini", "--mount", "/m", "--write"); err == nil || !strings.Contains(err.Error(), "outside your home directory") {
		t.Errorf("a symlink out of home: %v", err)
	}
	if got := string(readOrNil(t, outside)); got != "theirs\n" {
		t.Errorf("the symlink's target was written: %q", got)
	}
	mustIntegrate(t, "gemini", "--mount", "/m", "--write", "--force")
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 || !bytes.Contains(readOrNil(t, outside), []byte("@/m/.skillfs/catalog.md")) {
		t.Errorf("--force: the link is replaced or its target not written: %v", err)
	}
	mustIntegrate(t, "gemini", "--remove", "--force")
	if got := string(readOrNil(t, outside)); got != "theirs\n" {
		t.Errorf("--remove through the link: %q", got)
	}

	// A symlink inside home (a dotfiles checkout) is followed.
	dot := filepath.Join(home, "dotfiles", "AGENTS.md")
	os.MkdirAll(filepath.Dir(dot), 0o755)
	os.WriteFile(dot, []byte("mine\n"), 0o644)
	os.MkdirAll(filepath.Join(home, ".codex"), 0o755)
	os.Symlink(dot, filepath.Join(home, ".codex", "AGENTS.md"))
	in := integration{host: "codex", target: filepath.Join(home, ".codex", "AGENTS.md"), snippet: "catalog\n"}
	if err := checkTarget(in.target, home, false); err != nil {
		t.Errorf("a symlink inside home: %v", err)
	}
	if _, err := in.write(); err != nil || !bytes.Contains(readOrNil(t, dot), []byte("catalog\n")) {
		t.Errorf("writing through a symlink inside home: %v", err)
	}
	if _, err := in.undo(); err != nil || string(readOrNil(t, dot)) != "mine\n" {
		t.Errorf("undo through a symlink inside home: %v, %q", err, readOrNil(t, dot))
	}

	for _, dir := range []string{"skills", "commands"} {
		project := filepath.Join(home, ".claude", dir, "x")
		if err := checkTarget(filepath.Join(project, ".cursor", "rules", "skillfs.mdc"), home, true); err == nil {
			t.Errorf("a target inside a %s folder was allowed", dir)
		}
	}

	settings := filepath.Join(home, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	for _, bad := range []string{`{"hooks": [1]}`, `[1, 2]`, `{"a": 1`, `{"hooks": {"SessionStart": {"x": 1}}}`} {
		os.WriteFile(settings, []byte(bad), 0o600)
		if _, err := integrate(t, "claude-code", "--write"); err == nil || !strings.Contains(err.Error(), "left alone") {
			t.Errorf("settings.json %s: %v", bad, err)
		}
		if got := string(readOrNil(t, settings)); got != bad {
			t.Errorf("settings.json %s was changed: %s", bad, got)
		}
	}
	if p, _ := recordPath(settings); readOrNil(t, p) != nil {
		t.Error("a refused --write left a record")
	}
	if _, err := integrate(t, "generic", "--write"); exitCode(err) != exitUsage {
		t.Errorf("generic --write: %v", err)
	}
	if _, err := integrate(t, "vim"); exitCode(err) != exitUsage {
		t.Errorf("an unknown host: %v", err)
	}
}
