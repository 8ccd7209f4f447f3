package resolver

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/skillfs/skillfs/integration/hostile"
	"github.com/skillfs/skillfs/internal/config"
)

func TestNamedSkills(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"none", "Use the tools; see https://example.com/SKILL.md", nil},
		{"plain", "Start with skill://git-workflow/SKILL.md.", []string{"skill://git-workflow/SKILL.md"}},
		{"code span and parentheses", "read `skill://acme/billing/refunds/SKILL.md` (or skill://pdf/SKILL.md), then",
			[]string{"skill://acme/billing/refunds/SKILL.md", "skill://pdf/SKILL.md"}},
		{"markdown link", "[refunds](skill://refunds/SKILL.md)", []string{"skill://refunds/SKILL.md"}},
		{"scheme in any case, canonical", "SKILL://Upper/SKILL.md", []string{"skill://Upper/SKILL.md"}},
		{"each once, in order", "skill://b/SKILL.md skill://a/SKILL.md skill://b/SKILL.md", []string{"skill://b/SKILL.md", "skill://a/SKILL.md"}},
		{"not SKILL.md", "skill://a/README.md skill://a/SKILL.mdx skill://a/SKILL.md/x skill://a", nil},
		{"a longer name", "skill://a/SKILL.md.bak skill://a/SKILL.md~", nil},
		{"a space ends it", "skill://a b/SKILL.md", nil},
		{"a supporting file is not a skill", "skill://a/references/GUIDE.md", nil},
		{"another scheme is not taken", "github://o/r/skills/x/SKILL.md", nil},
		{"dot segments are refused", "skill://a/../b/SKILL.md", nil},
		{"back to back", "skill://a/SKILL.md,skill://b/SKILL.md", []string{"skill://a/SKILL.md", "skill://b/SKILL.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, cut := NamedSkills(tc.text, MaxNamedSkills)
			if !slices.Equal(got, tc.want) || cut {
				t.Errorf("NamedSkills(%q) = %q, %v; want %q, false", tc.text, got, cut, tc.want)
			}
		})
	}
}

// The cap at its edge: exactly MaxNamedSkills distinct URIs are all kept;
// one more is cut, and repeats of the kept ones are not "more".
func TestNamedSkillsCapAtTheEdge(t *testing.T) {
	text := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "see skill://s%d/SKILL.md\n", i)
		}
		return b.String()
	}
	got, cut := NamedSkills(text(MaxNamedSkills)+text(MaxNamedSkills), MaxNamedSkills)
	if len(got) != MaxNamedSkills || cut {
		t.Errorf("%d URIs named twice: kept %d, cut %v; want %d, false", MaxNamedSkills, len(got), cut, MaxNamedSkills)
	}
	got, cut = NamedSkills(text(MaxNamedSkills+1), MaxNamedSkills)
	if len(got) != MaxNamedSkills || !cut || got[MaxNamedSkills-1] != fmt.Sprintf("skill://s%d/SKILL.md", MaxNamedSkills-1) {
		t.Errorf("%d URIs: kept %d (last %q), cut %v; want the first %d, true", MaxNamedSkills+1, len(got), got[len(got)-1], cut, MaxNamedSkills)
	}
	got, cut = NamedSkills(text(100_000), MaxNamedSkills)
	if len(got) != MaxNamedSkills || !cut {
		t.Errorf("100,000 URIs: kept %d, cut %v", len(got), cut)
	}
}

// A text made to be scanned many times over (prefixes without an end) is
// still read once: this finishes at once rather than in hours.
func TestNamedSkillsIsLinear(t *testing.T) {
	text := strings.Repeat("skill://", 1<<20) + " skill://a/SKILL.md"
	got, _ := NamedSkills(text, MaxNamedSkills)
	if !slices.Equal(got, []string{"skill://a/SKILL.md"}) {
		t.Errorf("got %q", got)
	}
}

func TestKeepInstructions(t *testing.T) {
	short := "Use skill://a/SKILL.md."
	if got := keepInstructions(short); got != short {
		t.Errorf("short instructions changed: %q", got)
	}
	exact := strings.Repeat("x", MaxInstructions)
	if got := keepInstructions(exact); got != exact {
		t.Errorf("instructions of exactly %d bytes were cut to %d", MaxInstructions, len(got))
	}
	long := strings.Repeat("x", MaxInstructions-1) + "é" + "tail"
	got := keepInstructions(long)
	if got != strings.Repeat("x", MaxInstructions-1) || !utf8.ValidString(got) {
		t.Errorf("a character across the cap: kept %d bytes %q…", len(got), got[len(got)-4:])
	}
}

// TestNamedSkillsCountAgainstListingCaps: skills named in the instructions
// are held within max_list_entries with the listed ones: at the cap all
// are held; one below, the last is never asked for and the listing says
// why.
func TestNamedSkillsCountAgainstListingCaps(t *testing.T) {
	const named = 5
	var text strings.Builder
	for i := range named {
		fmt.Fprintf(&text, "see skill://walk/w-%d/SKILL.md\n", i)
	}
	file := filepath.Join(t.TempDir(), "instructions.md")
	if err := os.WriteFile(file, []byte(text.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		entries, held int
	}{{2 + named, named}, {2 + named - 1, named - 1}} {
		log := filepath.Join(t.TempDir(), "access.log")
		_, cats := hostileRig(t, hostile.Options{Fixtures: []string{}, Mode: hostile.ModeUnlistedCrowd, Crowd: named + 2, AccessLog: log, InstructionsFile: file},
			func(o *config.Origin) { o.Limits.MaxListEntries = c.entries })
		cat := nextCatalog(t, cats)
		b, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		asked := strings.Count(string(b), "skills/get ")
		t.Logf("max_list_entries %d: %d skills, %d named, %d asked, truncated %q", c.entries, len(cat.Skills), len(cat.Named), asked, cat.Truncated)
		if len(cat.Named) != c.held || len(cat.Skills) != 2+c.held || asked != c.held {
			t.Errorf("max_list_entries %d: %d skills (%d named), %d skills/get; want %d named, each asked once", c.entries, len(cat.Skills), len(cat.Named), asked, c.held)
		}
		if wantCut := c.held < named; wantCut != strings.Contains(cat.Truncated, "max_list_entries") {
			t.Errorf("max_list_entries %d: truncated %q", c.entries, cat.Truncated)
		}
	}
}
