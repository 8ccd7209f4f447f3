package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckPlacement(t *testing.T) {
	// Resolve the temp dir itself so that "given" and "resolved" forms
	// differ only where the test makes them differ.
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(tmp, "home")
	other := filepath.Join(tmp, "other")
	for _, d := range []string{home + "/.claude/skills", home + "/.cache", home + "/.config/agents", other + "/real", other + "/data"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, name); err != nil {
			t.Fatal(err)
		}
	}
	// ~/.cache/tocl → ~/.claude: reaching a discovery path through a link.
	link(home+"/.claude", home+"/.cache/tocl")
	// ~/.cache/relcl → ../.claude/skills, relative.
	link("../.claude/skills", home+"/.cache/relcl")
	// ~/.cache/dangling → ~/.agents/new, which does not exist yet:
	// mkdir -p through it would create inside ~/.agents.
	link(home+"/.agents/new", home+"/.cache/dangling")
	// ~/.cache/ok → other/real: a link to somewhere harmless.
	link(other+"/real", home+"/.cache/ok")
	// ~/.gemini is itself a link to other/data: other/data is then a
	// discovery path under another name.
	link(other+"/data", home+"/.gemini")
	// A loop.
	link(home+"/.cache/loop2", home+"/.cache/loop1")
	link(home+"/.cache/loop1", home+"/.cache/loop2")
	// A home reached through a link: the check is given the link.
	linkHome := filepath.Join(tmp, "linkhome")
	link(home, linkHome)

	for _, tc := range []struct {
		name, path, home string
		discovery        string // "" means allowed
		resolved         bool   // the error names the resolved form
	}{
		{"cache", home + "/.cache/mcp-skills", home, "", false},
		{"home itself", home, home, "", false},
		{"elsewhere", "/srv/mnt", home, "", false},
		{"claude", home + "/.claude", home, "~/.claude", false},
		{"inside claude", home + "/.claude/mnt", home, "~/.claude", false},
		{"case", home + "/.Claude/mnt", home, "~/.claude", false},
		{"agents", home + "/.agents/x", home, "~/.agents", false},
		{"config agents", home + "/.config/agents/x", home, "~/.config/agents", false},
		{"config agentsx", home + "/.config/agentsx", home, "", false},
		{"cursor", home + "/.cursor/x", home, "~/.cursor", false},
		{"copilot", home + "/.copilot", home, "~/.copilot", false},
		{"codex", home + "/.codex/x", home, "~/.codex", false},
		{"gemini", home + "/.gemini/x", home, "~/.gemini", false},
		{"opencode", home + "/.config/opencode/x", home, "~/.config/opencode", false},
		{"goose", home + "/.config/goose/x", home, "~/.config/goose", false},
		{"windsurf", home + "/.windsurf/x", home, "~/.windsurf", false},
		{"codeium", home + "/.codeium/windsurf/x", home, "~/.codeium", false},
		{"etc codex", "/etc/codex", home, "/etc/codex", false},
		{"etc codex inside", "/etc/codex/skills-cache", home, "/etc/codex", false},
		{"etc codexx", "/etc/codexx", home, "", false},
		{"skills folder", "/srv/project/.github/skills/x", home, "a folder named skills", false},
		{"dot skills", "/srv/.skills", home, "a folder named .skills", false},
		{"Skills", "/srv/Skills/x", home, "a folder named Skills", false},
		{"config anything skills", home + "/.config/anything/skills", home, "a folder named skills", false},
		{"skills in a name", "/srv/my-skills/x", home, "", false},
		{"no home", home + "/.claude/x", "", "", false},
		{"no home, skills", "/srv/skills", "", "a folder named skills", false},
		{"link into claude", home + "/.cache/tocl/mnt", home, "~/.claude", true},
		{"relative link", home + "/.cache/relcl", home, "~/.claude", true},
		{"dangling link", home + "/.cache/dangling/mnt", home, "~/.agents", true},
		{"harmless link", home + "/.cache/ok/mnt", home, "", false},
		{"discovery dir is a link", other + "/data/mnt", home, "~/.gemini", false},
		{"home is a link", home + "/.cursor/x", linkHome, "~/.cursor", false},
		{"home is a link, path resolved", linkHome + "/.cache/tocl/x", linkHome, "~/.claude", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckPlacement(tc.path, tc.home)
			if tc.discovery == "" {
				if err != nil {
					t.Errorf("CheckPlacement(%s) = %v, want nil", tc.path, err)
				}
				return
			}
			var pe *PlacementError
			if !errors.As(err, &pe) {
				t.Fatalf("CheckPlacement(%s) = %v, want a *PlacementError", tc.path, err)
			}
			if pe.Discovery != tc.discovery || (pe.Resolved != "") != tc.resolved {
				t.Errorf("CheckPlacement(%s): discovery %q resolved %q; want %q, resolved=%v", tc.path, pe.Discovery, pe.Resolved, tc.discovery, tc.resolved)
			}
			msg := err.Error()
			for _, want := range []string{tc.path + " ", "inside " + tc.discovery,
				"agents load skills from there as local, trusted files; MCP-served skills must stay distinguishable (SEP-2640 cache isolation)",
				"choose a directory outside"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
		})
	}

	for _, bad := range [][2]string{
		{"relative/path", home},
		{home + "/x/../.claude", home},
		{home + "/", home},
		{"", home},
		{home + "/.cache/x", "relative"},
		{home + "/.cache/loop1/x", home},
	} {
		err := CheckPlacement(bad[0], bad[1])
		var pe *PlacementError
		if err == nil || errors.As(err, &pe) || !strings.Contains(err.Error(), "check placement") {
			t.Errorf("CheckPlacement(%q, %q) = %v, want a plain error", bad[0], bad[1], err)
		}
	}
}

func TestResolveExisting(t *testing.T) {
	tmp, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(tmp+"/a/b", 0o755)
	os.Symlink("b", tmp+"/a/l")                // relative, inside
	os.Symlink(tmp+"/a/l", tmp+"/chain")       // link to a link
	os.Symlink("../missing/deep", tmp+"/a/dl") // dangling, relative
	for _, tc := range []struct{ in, want string }{
		{tmp + "/a/b", tmp + "/a/b"},
		{tmp + "/a/l/x/y", tmp + "/a/b/x/y"},
		{tmp + "/chain", tmp + "/a/b"},
		{tmp + "/a/dl/z", tmp + "/missing/deep/z"},
		{tmp + "/nope/a/l", tmp + "/nope/a/l"},
		{"/", "/"},
	} {
		got, err := resolveExisting(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("resolveExisting(%s) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
