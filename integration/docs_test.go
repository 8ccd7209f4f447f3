//go:build linux

package integration

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The documentation a user expects of a command-line tool: a did-you-mean
// for a mistyped command, man pages, and shell completion.

// TestMistypedCommandSuggests: a mistyped command or subcommand is a usage
// error (exit 2) on stderr that names the word and the command it was
// given to, and suggests the nearest names; nothing goes to stdout.
func TestMistypedCommandSuggests(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args    []string
		want    string
		suggest []string // nil: no suggestion is made
	}{
		{[]string{"mout"}, `skillfs: unknown command "mout" for "skillfs"`, []string{"mount"}},
		{[]string{"stat"}, `skillfs: unknown command "stat" for "skillfs"`, []string{"status"}},
		{[]string{"cache", "lst"}, `skillfs: unknown command "lst" for "skillfs cache"`, []string{"list"}},
		{[]string{"config", "chek"}, `skillfs: unknown command "chek" for "skillfs config"`, []string{"check"}},
		{[]string{"mout", "x"}, `skillfs: unknown command "mout" for "skillfs"`, []string{"mount"}},
		{[]string{"xyzzy"}, `skillfs: unknown command "xyzzy" for "skillfs" (see ` + "`skillfs --help`)", nil},
	} {
		stdout, stderr, code := runSkillfs(t, nil, tc.args...)
		name := strings.Join(tc.args, " ")
		if code != 2 {
			t.Errorf("skillfs %s: exit %d, want 2 (usage)\n%s", name, code, stderr)
		}
		if stdout != "" {
			t.Errorf("skillfs %s: wrote to stdout:\n%s", name, stdout)
		}
		if !strings.HasPrefix(stderr, tc.want) {
			t.Errorf("skillfs %s: stderr does not start %q:\n%s", name, tc.want, stderr)
		}
		if tc.suggest == nil && strings.Contains(stderr, "Did you mean") {
			t.Errorf("skillfs %s: suggests something:\n%s", name, stderr)
		}
		for _, s := range tc.suggest {
			if !strings.Contains(stderr, "Did you mean this?\n    "+s+"\n") {
				t.Errorf("skillfs %s: does not suggest %q:\n%s", name, s, stderr)
			}
		}
	}
	// A command group alone still prints its help and succeeds.
	if stdout, stderr, code := runSkillfs(t, nil, "cache"); code != 0 || !strings.Contains(stdout, "Usage:\n  skillfs cache") {
		t.Errorf("skillfs cache: exit %d\n%s%s", code, stdout, stderr)
	}
}

// TestManPages: `skillfs man DIR` writes a page for every command that
// --help lists, each renders without a warning, and each names the
// command's flags as --help does.
func TestManPages(t *testing.T) {
	t.Parallel()
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("groff is not installed: the pages cannot be rendered here")
	}
	dir := filepath.Join(t.TempDir(), "man", "man1")
	stdout, stderr, code := runSkillfs(t, nil, "man", dir)
	if code != 0 {
		t.Fatalf("skillfs man: exit %d\n%s%s", code, stdout, stderr)
	}
	written, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("wrote %d man pages to %s\n", len(written), dir); stdout != want {
		t.Errorf("skillfs man printed %q, want %q", stdout, want)
	}
	pages := map[string]bool{}
	for _, e := range written {
		pages[e.Name()] = true
	}
	overstrike := regexp.MustCompile(".\b")
	var visit func(path []string)
	visit = func(path []string) {
		help, stderr, code := runSkillfs(t, nil, append(path[1:], "--help")...)
		if code != 0 {
			t.Fatalf("%s --help: exit %d\n%s", strings.Join(path, " "), code, stderr)
		}
		page := strings.Join(path, "-") + ".1"
		if !pages[page] {
			t.Errorf("no man page %s for `%s`", page, strings.Join(path, " "))
			return
		}
		delete(pages, page)
		var errb bytes.Buffer
		cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", filepath.Join(dir, page))
		cmd.Stderr = &errb
		out, err := cmd.Output()
		if err != nil || errb.Len() > 0 {
			t.Errorf("groff -man %s: %v\n%s", page, err, errb.String())
		}
		text := overstrike.ReplaceAllString(string(out), "")
		if !strings.Contains(text, "NAME\n       "+strings.Join(path, "-")+" - ") {
			t.Errorf("%s: no NAME line:\n%s", page, text)
		}
		section := ""
		for _, line := range strings.Split(help, "\n") {
			switch {
			case strings.HasSuffix(line, ":") && !strings.HasPrefix(line, " "):
				section = line
			case section == "Available Commands:" && strings.HasPrefix(line, "  "):
				if name := strings.Fields(line)[0]; name != "help" {
					visit(append(append([]string(nil), path...), name))
				}
			case strings.HasSuffix(section, "Flags:") && strings.HasPrefix(strings.TrimSpace(line), "-"):
				for _, f := range strings.Fields(line) {
					if f = strings.TrimSuffix(f, ","); strings.HasPrefix(f, "-") && !strings.Contains(text, f) {
						t.Errorf("%s does not name %s (its --help line: %q)", page, f, line)
					}
				}
			}
		}
	}
	visit([]string{"skillfs"})
	for p := range pages {
		t.Errorf("man page %s is of no command --help lists", p)
	}
	// Text that looks like markup is the page's text.
	b, err := exec.Command(groff, "-man", "-Tutf8", filepath.Join(dir, "skillfs-cache.1")).Output()
	if err != nil {
		t.Fatal(err)
	}
	if text := overstrike.ReplaceAllString(string(b), ""); !strings.Contains(text, "$XDG_CACHE_HOME/skillfs/<label>-<fingerprint>/") {
		t.Errorf("skillfs-cache.1 lost the cache layout:\n%s", text)
	}
	// Again: the pages are replaced, nothing else is left in DIR.
	if _, stderr, code := runSkillfs(t, nil, "man", dir); code != 0 {
		t.Fatalf("skillfs man again: exit %d\n%s", code, stderr)
	}
	if again, _ := os.ReadDir(dir); len(again) != len(written) {
		t.Errorf("skillfs man again left %d files, want %d", len(again), len(written))
	}
}
