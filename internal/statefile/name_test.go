package statefile

import (
	"regexp"
	"strings"
	"testing"
)

// TestMountNameIsPasteable: the default log and pid file names hold only
// characters a shell takes unquoted, are never hidden, stay within a file
// name's 255 bytes, and differ for mountpoints that read alike.
func TestMountNameIsPasteable(t *testing.T) {
	safe := regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*-[0-9a-f]{8}$`)
	seen := map[string]string{}
	for _, mnt := range []string{
		"/root/.cache/mcp-skills", "/root/.cache/mcp/skills", "/a-b", "/a/b", "/a_b",
		"/", "/.hidden/mnt", "/home/me/my skills", "/home/me/$(rm -rf ~)", "/home/me/é\\x2d",
		"/" + strings.Repeat("long/", 100),
	} {
		name := MountName(mnt)
		if !safe.MatchString(name) || len(name+".log") > 255 {
			t.Errorf("MountName(%q) = %q: not a pasteable file name", mnt, name)
		}
		if other, ok := seen[name]; ok {
			t.Errorf("MountName gives %q for both %q and %q", name, other, mnt)
		}
		seen[name] = mnt
	}
	if got := MountName("/root/.cache/mcp-skills"); !strings.HasPrefix(got, "root-.cache-mcp-skills-") {
		t.Errorf("MountName(/root/.cache/mcp-skills) = %q, want the path readable in it", got)
	}
	if MountName("/x/y/") != MountName("/x/y") {
		t.Errorf("a trailing slash changes the name")
	}
}
