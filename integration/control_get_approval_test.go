//go:build linux

package integration

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
)

// TestControlGetUnderApprovalSaysPending: under approval: required, a skill
// `skillfs get` confirms is held back until approved, and get says so
// rather than "added" alone; `approve` then says "approved PATH" once.
func TestControlGetUnderApprovalSaysPending(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"alpha/SKILL.md": skillMD("alpha", "Listed", "x\n"),
		"zulu/SKILL.md":  skillMD("zulu", "Left out of the listing", "z\n"),
	})
	env := runtimeEnv(t)
	requireApproval(t, env, dir)
	cfg := writeConfig(t, map[string]any{"local": stdioServe(dir, os.DevNull, "--page-size", "1")},
		map[string]any{"servers": map[string]any{"local": map[string]any{
			"approval": "required", "limits": map[string]any{"max_list_pages": 1}}}})
	m := startMountEnv(t, env, cfg)
	m.warnings = true // the cut listing is logged
	_, paths := pendingPaths(t, env, m.Dir)
	var missing string
	switch {
	case paths["local/alpha"] && !paths["local/zulu"]:
		missing = "zulu"
	case paths["local/zulu"] && !paths["local/alpha"]:
		missing = "alpha"
	default:
		t.Fatalf("one page of one skill should leave exactly one skill out: pending %v", paths)
	}
	out, errOut, code := ctl(t, env, "get", "--mount", m.Dir, "--origin", "local", "skill://"+missing+"/SKILL.md")
	want := "added local/" + missing + " (skill://" + missing + "/SKILL.md), pending approval: it is not in the mount until you run skillfs approve local/" + missing + "\n"
	if code != 0 || out != want {
		t.Fatalf("skillfs get under approval: required: exit %d\n%q\nwant %q\n%s", code, out, want, errOut)
	}
	if _, err := os.Stat(m.Path("local", missing, "SKILL.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a skill get confirmed but nobody approved is in the tree: %v", err)
	}
	out, errOut, code = ctl(t, env, "approve", "--yes", "--mount", m.Dir, "local/"+missing)
	said := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "approved ") {
			said++
		}
	}
	if code != 0 || !strings.HasSuffix(out, "\napproved local/"+missing+"\n") || said != 1 {
		t.Errorf("approve --yes: exit %d; want the last line exactly %q:\n%s%s", code, "approved local/"+missing, out, errOut)
	}
}
