package vfs_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/skillfs/skillfs/internal/vfs"
)

// TestRejectedSkillServesNoFile: once a SKILL.md fails verification under
// the held entry (here the server changed it behind the listing into a
// skill it can no longer publish, so skills/get gives no fresh entry), the
// skill is not loaded: its supporting file, whose own bytes would verify,
// is refused without a fetch. When the SKILL.md verifies again under the
// same entry, the skill's files are served again.
func TestRejectedSkillServesNoFile(t *testing.T) {
	f := newFixture(t, baseFiles, nil)
	f.allowWarn = true // the failed reads and skills/get are logged
	original := baseFiles["alpha/SKILL.md"]
	writeFiles(t, f.dir, map[string]string{"alpha/SKILL.md": "---\nname: not-alpha\ndescription: Alpha s\n---\nbody\n"})
	_, err := f.read(t, "local/alpha/SKILL.md")
	var re *vfs.ReadError
	if !errors.As(err, &re) || re.Reason != "digest-mismatch" {
		t.Fatalf("read of the changed SKILL.md: %v, want a digest mismatch (same length)", err)
	}
	_, err = f.read(t, "local/alpha/refs/a.md")
	if !errors.As(err, &re) || re.Reason != "skill-rejected" {
		t.Fatalf("read of a file of the rejected skill: %v, want a ReadError with reason skill-rejected", err)
	}
	if slices.Contains(f.access.reads(), "skill://alpha/refs/a.md") {
		t.Errorf("the file of the rejected skill was fetched: %v", f.access.reads())
	}
	// Another skill is not affected.
	if b, err := f.read(t, "local/team/beta/data.txt"); err != nil || string(b) != "beta data\n" {
		t.Errorf("read of another skill's file: %q, %v", b, err)
	}

	writeFiles(t, f.dir, map[string]string{"alpha/SKILL.md": original})
	if err := f.srv.Rescan(); err != nil {
		t.Fatal(err)
	}
	if b, err := f.read(t, "local/alpha/SKILL.md"); err != nil || string(b) != original {
		t.Fatalf("read of the restored SKILL.md: %q, %v", b, err)
	}
	if b, err := f.read(t, "local/alpha/refs/a.md"); err != nil || string(b) != "aaa\n" {
		t.Errorf("read of the file once its SKILL.md verifies: %q, %v", b, err)
	}
}
