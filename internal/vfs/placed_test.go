package vfs_test

import (
	"slices"
	"testing"
)

// PlacedSkills names the skills the tree shows, with their origin's
// entries and every file's mount path; under approval: required only the
// approved ones.
func TestPlacedSkills(t *testing.T) {
	f := newFixture(t, baseFiles, nil)
	var paths []string
	for _, p := range f.fs.PlacedSkills() {
		paths = append(paths, p.Path)
		if p.Label != "local" || len(p.Files) != len(p.Entry.Resources) || p.Entry.Name() == "" {
			t.Errorf("%s: %+v", p.Path, p)
		}
		if p.Path == "local/team/delta/SKILL.md" && !slices.Equal(p.Files, []string{"local/team/delta/SKILL.md", "local/team/delta/scripts/x.sh"}) {
			t.Errorf("delta's files: %q", p.Files)
		}
		if p.Path == "local/team/delta/SKILL.md" && p.Entry.URI != "skill://team/delta/SKILL.md" {
			t.Errorf("delta's entry is not its origin's: %s", p.Entry.URI)
		}
	}
	slices.Sort(paths)
	want := []string{"local/alpha/SKILL.md", "local/other/epsilon/SKILL.md", "local/team/beta/SKILL.md", "local/team/beta/gamma/SKILL.md", "local/team/delta/SKILL.md"}
	if !slices.Equal(paths, want) {
		t.Errorf("placed %q, want %q", paths, want)
	}

	g := newFixture(t, baseFiles, required)
	if got := g.fs.PlacedSkills(); len(got) != 0 {
		t.Errorf("before any approval: %d placed", len(got))
	}
	approve(t, g, "local/alpha")
	if got := g.fs.PlacedSkills(); len(got) != 1 || got[0].Path != "local/alpha/SKILL.md" {
		t.Errorf("after approving alpha: %+v", got)
	}
}
