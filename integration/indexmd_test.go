//go:build linux

package integration

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillfs/skillfs/internal/testkit"
)

// TestIndexMarkdownBoundAndHealth: two servers of 250 skills each (1,000 under -soak), a
// server whose command does not exist and one that went away after it
// listed. Read through the mount, index.md stays within its bound (set in
// the config) and says each server's health in words; each server's own
// file under .skillfs/servers is there, within the bound, and lists every
// one of its skills; the <available_skills> block points at SKILL.md files
// that exist in the mount.
func TestIndexMarkdownBoundAndHealth(t *testing.T) {
	t.Parallel()
	// 1,000 skills a server under -soak; 250 keep every assertion.
	perServer := testkit.Size(250, 1000)
	// One server's list (about 120 bytes a skill) fits this bound; both
	// together do not, so index.md is the summary.
	bound := perServer * 164
	servers := map[string]any{
		"broken": map[string]any{"command": missingCommand},
	}
	names := map[string][]string{}
	for _, label := range []string{"acme", "docs"} {
		dir := t.TempDir()
		files := map[string]string{}
		for i := range perServer {
			name := fmt.Sprintf("%s-skill-%04d", label, i)
			files[fmt.Sprintf("group-%02d/%s/SKILL.md", i%37, name)] = skillMD(name, fmt.Sprintf("Skill %d of %s for the index test.", i, label), "body\n")
			names[label] = append(names[label], name)
		}
		writeTree(t, dir, files)
		servers[label] = stdioServe(dir, os.DevNull)
	}
	goneDir := t.TempDir()
	genTree(t, goneDir, "gone")
	gone := serveHTTP(t, goneDir)
	servers["gone"] = map[string]any{"type": "http", "url": gone.URL}
	cfg := writeConfig(t, servers, map[string]any{"index_max_bytes": bound, "index_available_skills": true})
	m := startMount(t, cfg)
	m.warnings = true // the broken server's attempts and the gone one's end are logged

	// The gone server goes away after listing; a read it cannot serve
	// makes the mount notice at once.
	gone.Kill()
	if _, err := os.ReadFile(m.Path("gone", "team", "beta", "docs", "deep", "x.md")); !errors.Is(err, syscall.EIO) {
		t.Errorf("an uncached file of a server that went away: %v, want EIO", err)
	}

	line := func(md, label string) string {
		for _, l := range strings.Split(md, "\n") {
			if strings.HasPrefix(l, "- `"+label+"`: ") {
				return l
			}
		}
		return ""
	}
	var md string
	waitFor(t, 5*time.Minute, "index.md to show every server's health", func() bool {
		b, err := os.ReadFile(m.Path(".skillfs", "index.md"))
		if err != nil {
			t.Fatal(err)
		}
		md = string(b)
		return strings.Contains(line(md, "broken"), "failed to start") && strings.Contains(line(md, "gone"), "not connected now")
	})
	t.Logf("index.md: %d bytes, bound %d", len(md), bound)
	if len(md) > bound {
		t.Errorf("index.md is %d bytes, over its bound of %d", len(md), bound)
	}
	for label, want := range map[string][]string{
		"acme":   {fmt.Sprintf("connected, %d skills.", perServer), "`.skillfs/servers/acme.md`"},
		"docs":   {fmt.Sprintf("connected, %d skills.", perServer), "`.skillfs/servers/docs.md`"},
		"broken": {fmt.Sprintf(`failed to start: command "%s" not found; retrying`, missingCommand), "`.skillfs/servers/broken.md`"},
		"gone":   {"5 skills", "not connected now: reads of files not yet cached will fail", "`.skillfs/servers/gone.md`"},
	} {
		l := line(md, label)
		for _, w := range want {
			if !strings.Contains(l, w) {
				t.Errorf("index.md's line for %s lacks %q: %q", label, w, l)
			}
		}
	}
	if !strings.Contains(md, "Every server's list does not fit") || strings.Count(md, "\n- **`") != 0 {
		t.Errorf("index.md over the bound is not the summary")
	}

	ents, err := os.ReadDir(m.Path(".skillfs", "servers"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if want := []string{"acme.md", "broken.md", "docs.md", "gone.md"}; !slices.Equal(got, want) {
		t.Errorf("ls .skillfs/servers = %v, want %v", got, want)
	}
	for label, want := range names {
		b, err := os.ReadFile(m.Path(".skillfs", "servers", label+".md"))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > bound {
			t.Errorf("%s.md is %d bytes, over the bound of %d", label, len(b), bound)
		}
		t.Logf("%s.md: %d bytes", label, len(b))
		missing := 0
		for _, name := range want {
			if !strings.Contains(string(b), "**`"+name+"`**") {
				missing++
			}
		}
		if missing > 0 {
			t.Errorf("%s.md lacks %d of its %d skills", label, missing, len(want))
		}
	}
	b, err := os.ReadFile(m.Path(".skillfs", "servers", "gone.md"))
	if err != nil || !strings.Contains(string(b), "This server is not connected now") || !strings.Contains(string(b), "`gone/alpha/SKILL.md`") {
		t.Errorf("gone.md: %v\n%s", err, b)
	}

	// The block lists what fits of the connected servers' skills, each at
	// its SKILL.md in this mount.
	block, _, _ := strings.Cut(md[strings.Index(md, "<available_skills>")+1:], "</available_skills>")
	locs := 0
	for _, l := range strings.Split(block, "\n") {
		if loc, ok := strings.CutPrefix(l, "<location>"); ok {
			loc = strings.TrimSuffix(loc, "</location>")
			if locs%100 == 0 {
				if _, err := os.Stat(loc); err != nil {
					t.Errorf("a location in the block: %v", err)
				}
			}
			if strings.HasPrefix(loc, m.Path("gone")) {
				t.Errorf("the block lists a skill of the server that went away: %s", loc)
			}
			locs++
		}
	}
	if locs == 0 || !strings.Contains(block, "more not listed here") {
		t.Errorf("the block lists %d skills and does not say how many more:\n%s", locs, block)
	}
}
