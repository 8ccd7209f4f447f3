package vfs

import (
	"bytes"
	"encoding/json"

	"github.com/skillfs/skillfs/internal/skill"
)

// A PlacedSkill is a skill the tree shows now, with its files' manifest:
// what a SEP-2640 face of the mount (skillfs mcp) lists. Pending, rejected
// and withheld skills are not placed; dynamic ones, whose files nothing
// verifies, are left out too.
type PlacedSkill struct {
	Label string
	// Path is the mount-relative path of its SKILL.md.
	Path string
	// Entry is the entry as its origin sent it (a copy).
	Entry skill.Entry
	// Files are the mount-relative paths of Entry.Resources, in order.
	Files []string
}

// PlacedSkills returns every origin's placed skills, by label, each in
// catalog order.
func (c *Core) PlacedSkills() []PlacedSkill {
	var out []PlacedSkill
	for label, o := range c.all() {
		t := o.cat.current()
		for _, sn := range t.skills {
			if sn.s.Dynamic {
				continue
			}
			ps := PlacedSkill{Label: label, Path: joinPath(label, sn.s.URI.Path()), Entry: cloneEntry(sn.s.Entry)}
			for i := range sn.s.Files {
				ps.Files = append(ps.Files, joinPath(label, filePath(&sn.s.Files[i])))
			}
			out = append(out, ps)
		}
	}
	return out
}

// cloneEntry is a deep copy of e: the held entry is shared and must not
// change.
func cloneEntry(e skill.Entry) skill.Entry {
	out := e
	out.Resources = append([]skill.Resource(nil), e.Resources...)
	if e.Frontmatter != nil {
		// The frontmatter is the JSON data model: a round trip copies it.
		b, err := json.Marshal(e.Frontmatter)
		var fm map[string]any
		if err == nil {
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.UseNumber()
			if dec.Decode(&fm) == nil {
				out.Frontmatter = fm
			}
		}
	}
	return out
}
