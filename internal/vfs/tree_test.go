package vfs

import (
	"fmt"
	"hash/fnv"
	"slices"
	"testing"
	"time"

	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/resolver"
	"github.com/skillfs/skillfs/verify"
)

func checkedSkill(t *testing.T, name, description string, files map[string]string) *verify.Skill {
	t.Helper()
	e := skill.Entry{URI: "skill://" + name + "/SKILL.md", Frontmatter: map[string]any{"name": name, "description": description}}
	for rel, body := range files {
		e.Resources = append(e.Resources, skill.Resource{URI: "skill://" + name + "/" + rel, Digest: verify.DigestOf([]byte(body)), Size: int64(len(body)), HasSize: true})
	}
	slices.SortFunc(e.Resources, func(a, b skill.Resource) int {
		if a.URI < b.URI {
			return -1
		}
		return 1
	})
	s, err := verify.CheckEntry(e, verify.EntryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A file's inode is its version: the same content under the same entry
// keeps it; new bytes, or a SKILL.md under a new frontmatter with the very
// same bytes, get a new one and count as changed.
func TestFileVersionsAndChanges(t *testing.T) {
	now := time.Unix(1, 0)
	a := checkedSkill(t, "a", "First", map[string]string{"SKILL.md": "x", "notes.md": "n1"})
	base := buildTree("o", &resolver.Catalog{Skills: []*verify.Skill{a}}, "live", nil, now, nil)

	same := buildTree("o", &resolver.Catalog{Skills: []*verify.Skill{checkedSkill(t, "a", "First", map[string]string{"SKILL.md": "x", "notes.md": "n1"})}}, "live", base, now, nil)
	if f, d := changes(base, same); len(f)+len(d) != 0 {
		t.Errorf("an identical catalog changed %v %v", f, d)
	}
	if base.nodes["a/SKILL.md"].ino != same.nodes["a/SKILL.md"].ino {
		t.Error("an unchanged file got a new inode")
	}

	fm := buildTree("o", &resolver.Catalog{Skills: []*verify.Skill{checkedSkill(t, "a", "Second", map[string]string{"SKILL.md": "x", "notes.md": "n1"})}}, "live", base, now, nil)
	if f, _ := changes(base, fm); !slices.Equal(f, []string{"a/SKILL.md"}) {
		t.Errorf("a frontmatter-only change changed %v, want the SKILL.md alone", f)
	}
	if base.nodes["a/SKILL.md"].ino == fm.nodes["a/SKILL.md"].ino {
		t.Error("a SKILL.md under a new frontmatter kept its inode")
	}
	if base.nodes["a/notes.md"].ino != fm.nodes["a/notes.md"].ino {
		t.Error("a supporting file's inode changed with the frontmatter")
	}

	bytes := buildTree("o", &resolver.Catalog{Skills: []*verify.Skill{checkedSkill(t, "a", "First", map[string]string{"SKILL.md": "x", "notes.md": "n2"})}}, "live", base, now, nil)
	if f, _ := changes(base, bytes); !slices.Equal(f, []string{"a/notes.md"}) {
		t.Errorf("new bytes changed %v, want notes.md", f)
	}
	if base.nodes["a/notes.md"].ino == bytes.nodes["a/notes.md"].ino {
		t.Error("new bytes kept the inode")
	}
}

// A skill the catalog rejects after directory reads may have shown its
// directory is announced as changed, with its parent, so that the kernel
// forgets it.
func TestNewlyRejectedDirectoryIsAChange(t *testing.T) {
	now := time.Unix(1, 0)
	empty := buildTree("o", &resolver.Catalog{}, "none", nil, now, nil)
	rejected := buildTree("o", &resolver.Catalog{Rejected: []resolver.Rejection{{URI: "skill://team/bad/SKILL.md", Reason: verify.NameMismatch}}}, "live", empty, now, nil)
	_, dirs := changes(empty, rejected)
	if !slices.Contains(dirs, "team/bad") || !slices.Contains(dirs, "team") {
		t.Errorf("changed directories %v; want team/bad and team", dirs)
	}
}

// Inode numbers are stable across restarts, and so across skillfs
// versions that compute them differently: pin the formula.
func TestInodeNumbersKeepTheirFormula(t *testing.T) {
	want := func(label, p string, dir bool, v *fileVersion) uint64 {
		h := fnv.New64a()
		h.Write([]byte(label))
		h.Write([]byte{0})
		h.Write([]byte(p))
		if dir {
			h.Write([]byte{1})
		}
		if v != nil && !v.dynamic {
			fmt.Fprintf(h, "\x02%s\x00%d\x00%t\x00%s\x00", v.res.Digest, v.res.Size, v.res.HasSize, v.conflict)
			h.Write(v.frontmatter[:])
		}
		ino := h.Sum64() &^ (1 << 63)
		if ino < 2 {
			ino += 2
		}
		return ino
	}
	d := verify.DigestOf([]byte("x"))
	for _, c := range []struct {
		label, p string
		dir      bool
		v        *fileVersion
	}{
		{"acme", "", true, nil},
		{"acme", "a/b", true, nil},
		{"acme", "a/b/SKILL.md", false, nil},
		{"acme", "a/b/SKILL.md", false, &fileVersion{res: skill.Resource{Digest: d, Size: 1, HasSize: true}}},
		{"acme", "a/b/x.md", false, &fileVersion{res: skill.Resource{Digest: d, Size: -3}, conflict: "they disagree", frontmatter: [32]byte{1, 2}}},
		{"acme", "a/b/x.md", false, &fileVersion{dynamic: true}},
	} {
		if got, want := inoVersion(c.label, c.p, c.dir, c.v), want(c.label, c.p, c.dir, c.v); got != want {
			t.Errorf("inoVersion(%q, %q, %v, %+v) = %d, want %d", c.label, c.p, c.dir, c.v, got, want)
		}
	}
}

func TestFilePathIsThePath(t *testing.T) {
	for _, raw := range []string{
		"skill://a/b/SKILL.md",
		"skill://a",
		"skill://a/b%20c/d.md",
		"SKILL://a/b/d.md",
		"skill://a/b%41c",
		"github://o/r/SKILL.md",
		"skill://ab/a",
	} {
		u, err := verify.ParseURI(raw)
		if err != nil {
			t.Fatalf("ParseURI(%q): %v", raw, err)
		}
		f := &verify.File{Resource: &skill.Resource{URI: raw}, URI: u}
		if got, want := filePath(f), u.Path(); got != want {
			t.Errorf("filePath(%q) = %q, want %q", raw, got, want)
		}
	}
}
