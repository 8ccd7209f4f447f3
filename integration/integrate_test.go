//go:build linux

package integration

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIntegrateHostsFromMount: with a real mount, `skillfs integrate` writes
// each host's documented form in a home directory of the test's own —
// Gemini's GEMINI.md block holds the catalog and its settings.json
// lists the mount in context.includeDirectories; Codex's AGENTS.md block holds the catalog
// with every skill's server and path; Cursor's rule is an .mdc with
// frontmatter (description, alwaysApply: true) and the catalog — a second
// --write changes no byte, and --remove restores each file byte for byte
// (or removes the one skillfs created).
func TestIntegrateHostsFromMount(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	genTree(t, dir, "team")
	m := startMount(t, writeConfig(t, map[string]any{"team": stdioServe(dir, os.DevNull)}, nil))

	home, project := t.TempDir(), t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "XDG_STATE_HOME=") && !strings.HasPrefix(kv, "CODEX_HOME=") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+home, "XDG_STATE_HOME="+filepath.Join(home, ".local", "state"))
	integrate := func(args ...string) string {
		t.Helper()
		out, errOut, code := ctl(t, env, append(append([]string{"integrate"}, args...), "--mount", m.Dir, "--cache-dir", m.Cache)...)
		if code != 0 {
			t.Fatalf("skillfs integrate %v: exit %d\n%s%s", args, code, out, errOut)
		}
		return out
	}
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return b
	}
	skills := []string{"team/alpha", "team/team/beta", "team/team/beta/gamma", "team/shared/refunds", "team/only-team"}

	before := "# My agent notes\n\nBe brief.\n"
	writeTree(t, filepath.Join(home, ".gemini"), map[string]string{"GEMINI.md": before})
	writeTree(t, filepath.Join(home, ".codex"), map[string]string{"AGENTS.md": before})
	for _, c := range []struct {
		host   string
		target string
		extra  []string
		check  func(b []byte)
	}{
		{"gemini", filepath.Join(home, ".gemini", "GEMINI.md"), nil, func(b []byte) {
			// Gemini CLI refuses imports from outside ~/.gemini: the
			// catalog's text goes in, and the mount into the folders
			// read_file may read.
			if c := parseCatalog(t, b); len(c.Skills) != len(skills) {
				t.Errorf("GEMINI.md's catalog lists %d skills, want %d:\n%s", len(c.Skills), len(skills), b)
			}
			var s struct {
				Context struct{ IncludeDirectories []string }
			}
			settings := read(filepath.Join(home, ".gemini", "settings.json"))
			if err := json.Unmarshal(settings, &s); err != nil || len(s.Context.IncludeDirectories) != 1 || s.Context.IncludeDirectories[0] != m.Dir {
				t.Errorf("~/.gemini/settings.json: %v\n%s", err, settings)
			}
		}},
		{"codex", filepath.Join(home, ".codex", "AGENTS.md"), nil, func(b []byte) {
			c := parseCatalog(t, b)
			if len(c.Skills) != len(skills) {
				t.Errorf("AGENTS.md's catalog lists %d skills, want %d:\n%s", len(c.Skills), len(skills), b)
			}
			for _, p := range skills {
				if !bytes.Contains(b, []byte("<server>team</server>")) || !bytes.Contains(b, []byte("<location>"+m.Path(p, "SKILL.md")+"</location>")) {
					t.Errorf("AGENTS.md lacks %s with its server", p)
				}
			}
		}},
		{"cursor", filepath.Join(project, ".cursor", "rules", "skillfs.mdc"), []string{"--project", project}, func(b []byte) {
			fm, body, ok := strings.Cut(strings.TrimPrefix(string(b), "---\n"), "\n---\n")
			if !strings.HasPrefix(string(b), "---\n") || !ok || !strings.Contains("\n"+fm+"\n", "\nalwaysApply: true\n") || !strings.Contains(fm, "description: ") {
				t.Errorf("the rule's frontmatter:\n%s", b)
			}
			if c := parseCatalog(t, []byte(body)); len(c.Skills) != len(skills) {
				t.Errorf("the rule's catalog lists %d skills, want %d", len(c.Skills), len(skills))
			}
		}},
	} {
		old := read(c.target)
		if out := integrate(append([]string{c.host}, c.extra...)...); !strings.Contains(out, c.target) || !bytes.Equal(read(c.target), old) {
			t.Errorf("%s without --write: wrote, or did not say where (%q)", c.host, out)
		}
		integrate(append([]string{c.host, "--write"}, c.extra...)...)
		first := read(c.target)
		if !bytes.HasPrefix(first, old) {
			t.Errorf("%s: --write changed what was there:\n%s", c.host, first)
		}
		c.check(first)
		integrate(append([]string{c.host, "--write"}, c.extra...)...)
		if !bytes.Equal(read(c.target), first) {
			t.Errorf("%s: a second --write changed the file", c.host)
		}
		integrate(append([]string{c.host, "--remove"}, c.extra...)...)
		if got := read(c.target); !bytes.Equal(got, old) {
			t.Errorf("%s: --remove left %q, want %q", c.host, got, old)
		}
		if old == nil {
			if _, err := os.Stat(c.target); !os.IsNotExist(err) {
				t.Errorf("%s: --remove left the file skillfs created: %v", c.host, err)
			}
		}
		if _, err := os.Stat(filepath.Join(home, ".gemini", "settings.json")); !os.IsNotExist(err) {
			t.Errorf("%s: --remove left ~/.gemini/settings.json, which skillfs created: %v", c.host, err)
		}
	}
}
