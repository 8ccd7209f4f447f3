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
	// ~/.cache/proj → other/project/.claude: a project folder under a link.
	if err := os.MkdirAll(other+"/project/.claude/commands", 0o755); err != nil {
		t.Fatal(err)
	}
	link(other+"/project/.claude", home+"/.cache/proj")
	// A home reached through a link: the check is given the link.
	linkHome := filepath.Join(tmp, "linkhome")
	link(home, linkHome)

	for _, tc := range []struct {
		name, path, home string
		discovery        string // "" means allowed
		resolved         bool   // the error names the resolved form
	}{
		{"cache", home + "/.cache/mcp-skills", home, "", false},
		{"cache skillfs", home + "/.cache/skillfs", home, "", false},
		{"home itself", home, home, "", false},
		{"elsewhere", "/srv/mnt", home, "", false},
		{"tmp", "/tmp/x", home, "", false},
		{"claude", home + "/.claude", home, "~/.claude", false},
		{"inside claude", home + "/.claude/mnt", home, "~/.claude", false},
		{"claude commands", home + "/.claude/commands", home, "~/.claude", false},
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
		{"second home", "/srv/realhome/.claude/x", home, "~/.claude", false},
		{"etc codex", "/etc/codex", home, "/etc/codex", false},
		{"etc codex inside", "/etc/codex/skills-cache", home, "/etc/codex", false},
		{"etc claude-code", "/etc/claude-code/x", home, "/etc/claude-code", false},
		{"etc codexx", "/etc/codexx", home, "", false},
		// Project-level folders, at any depth, with or without a home.
		{"project claude commands", "/srv/project/.claude/commands", home, "a .claude folder", false},
		{"project claude", "/srv/project/.claude", home, "a .claude folder", false},
		{"project claude agents", "/srv/a/b/c/.claude/agents/x", "", "a .claude folder", false},
		{"project agents skills", "/srv/project/.agents/skills", home, "a .agents folder", false},
		{"project cursor rules", "/srv/project/.cursor/rules", home, "a .cursor folder", false},
		{"project codex", "/srv/project/.codex", home, "a .codex folder", false},
		{"project gemini commands", "/srv/project/.gemini/commands", home, "a .gemini folder", false},
		{"project opencode", "/srv/project/.opencode/command", home, "a .opencode folder", false},
		{"project github", "/srv/project/.github/prompts", home, "a .github folder", false},
		{"project github skills", "/srv/project/.github/skills/x", home, "a .github folder", false},
		{"project GITHUB", "/srv/project/.GitHub", home, "a .github folder", false},
		{"other user's config agents", "/home/bob/.config/agents/x", home, "a .config/agents folder", false},
		{"project continue", "/srv/p/.continue/rules", home, "a .continue folder", false},
		{"my.claude", "/srv/my.claude/x", home, "", false},
		{"claude without dot", "/srv/claude/x", home, "", false},
		{"agents without dot", "/srv/agents/x", home, "", false},
		{"config alone", "/srv/.config/x", home, "", false},
		{"skills folder", "/srv/project/lib/skills/x", home, "a folder named skills", false},
		{"dot skills", "/srv/.skills", home, "a folder named .skills", false},
		{"Skills", "/srv/Skills/x", home, "a folder named Skills", false},
		{"config anything skills", home + "/.config/anything/skills", home, "a folder named skills", false},
		{"skills in a name", "/srv/my-skills/x", home, "", false},
		{"commands alone", "/srv/commands/x", home, "", false},
		{"no home, link to a home folder", home + "/.cache/tocl/x", "", "a .claude folder", true},
		{"no home, project folder", home + "/.claude/x", "", "a .claude folder", false},
		{"no home, skills", "/srv/skills", "", "a folder named skills", false},
		{"link into claude", home + "/.cache/tocl/mnt", home, "~/.claude", true},
		{"relative link", home + "/.cache/relcl", home, "~/.claude", true},
		{"dangling link", home + "/.cache/dangling/mnt", home, "~/.agents", true},
		{"harmless link", home + "/.cache/ok/mnt", home, "", false},
		{"discovery dir is a link", other + "/data/mnt", home, "~/.gemini", false},
		{"home is a link", home + "/.cursor/x", linkHome, "~/.cursor", false},
		{"home is a link, path resolved", linkHome + "/.cache/tocl/x", linkHome, "~/.claude", true},
		{"link to a project folder", home + "/.cache/proj/cmds", home, "a .claude folder", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckPlacement(tc.path, tc.home, "/srv/realhome")
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
			for _, want := range []string{tc.path, "inside " + tc.discovery,
				"agents load skills from there as local, trusted files; MCP-served skills must stay distinguishable (SEP-2640 cache isolation)",
				"where " + pe.Reads + ":", "choose a directory outside every agent's folders, such as ~/.cache/mcp-skills"} {
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
		{home + "/.cache/x", home + "/"},
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

func TestCheckMountPlacement(t *testing.T) {
	home := "/home/u"
	for _, tc := range []struct {
		name, mnt string
		labels    []string
		discovery string // "" means allowed
		label     string // the label blamed
	}{
		{"ordinary", "/home/u/.cache/mcp-skills", []string{"acme", "local", "skills-x", "commands"}, "", ""},
		{"mount in a project's .claude", "/srv/p/.claude", []string{"acme"}, "a .claude folder", ""},
		{"mount at .claude/commands", "/srv/p/.claude/commands", []string{"acme"}, "a .claude folder", ""},
		{"label skills", "/srv/p/mnt", []string{"acme", "skills"}, "a folder named skills", "skills"},
		{"label Skills", "/srv/p/mnt", []string{"Skills"}, "a folder named Skills", "Skills"},
		{"empty .config with label agents", "/home/u/.config", []string{"agents"}, "~/.config/agents", "agents"},
		{"empty .config with label opencode", "/home/u/.config", []string{"opencode"}, "~/.config/opencode", "opencode"},
		{"another .config with label agents", "/srv/x/.config", []string{"agents"}, "a .config/agents folder", "agents"},
		{"no labels", "/srv/p/mnt", nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckMountPlacement(tc.mnt, tc.labels, home)
			if tc.discovery == "" {
				if err != nil {
					t.Errorf("CheckMountPlacement(%s, %q) = %v, want nil", tc.mnt, tc.labels, err)
				}
				return
			}
			var pe *PlacementError
			if !errors.As(err, &pe) {
				t.Fatalf("CheckMountPlacement(%s, %q) = %v, want a *PlacementError", tc.mnt, tc.labels, err)
			}
			if pe.Discovery != tc.discovery || pe.Label != tc.label {
				t.Errorf("discovery %q label %q; want %q, %q", pe.Discovery, pe.Label, tc.discovery, tc.label)
			}
			if tc.label != "" {
				msg := err.Error()
				for _, want := range []string{filepath.Join(tc.mnt, tc.label) + ` (the directory of server "` + tc.label + `" under the mountpoint)`,
					`rename server "` + tc.label + `" in the config`} {
					if !strings.Contains(msg, want) {
						t.Errorf("message %q lacks %q", msg, want)
					}
				}
			}
		})
	}
	if err := CheckMountPlacement("/srv/mnt", []string{"../.claude"}, home); err == nil || !strings.Contains(err.Error(), "rename the server") {
		t.Errorf("an invalid label: %v", err)
	}
}

func TestHomes(t *testing.T) {
	real := lookupHome
	t.Cleanup(func() { lookupHome = real })
	for _, tc := range []struct {
		name, env, db string
		dbErr         bool
		want          []string
	}{
		{"both agree", "/home/u", "/home/u", false, []string{"/home/u"}},
		{"HOME unset", "", "/home/u", false, []string{"/home/u"}},
		{"HOME elsewhere", "/tmp/fake", "/home/u", false, []string{"/tmp/fake", "/home/u"}},
		{"HOME relative", "rel", "/home/u", false, []string{"/home/u"}},
		{"HOME unclean", "/home/u/", "/home/u", false, []string{"/home/u"}},
		{"no user entry", "/home/u", "", true, []string{"/home/u"}},
		{"nothing", "", "", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("HOME", tc.env)
			lookupHome = func() (string, error) {
				if tc.dbErr {
					return "", errors.New("no such user")
				}
				return tc.db, nil
			}
			got := Homes()
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("Homes() = %q, want %q", got, tc.want)
			}
		})
	}
	// With HOME unset, the real user database still names a home, and
	// ~/.claude under it is refused as such.
	lookupHome = real
	t.Setenv("HOME", "")
	os.Unsetenv("HOME")
	hs := Homes()
	if len(hs) != 1 {
		t.Skipf("no home in the user database here: %q", hs)
	}
	var pe *PlacementError
	if err := CheckPlacement(filepath.Join(hs[0], ".claude", "mnt"), hs...); !errors.As(err, &pe) || pe.Discovery != "~/.claude" {
		t.Errorf("~/.claude/mnt with HOME unset: %v", err)
	}
}
