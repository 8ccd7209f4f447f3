//go:build linux

package integration

import (
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
