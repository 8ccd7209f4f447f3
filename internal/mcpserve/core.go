package mcpserve

import (
	"context"
	"errors"
	"io/fs"
	"path"

	"github.com/skillfs/skillfs/internal/vfs"
)

// CoreTree is a mount's core as a Tree, and its placed skills (Skills)
// for the SEP-2640 face: what skillfs mcp serves when it runs the
// resolver itself.
type CoreTree struct{ V *vfs.Core }

func (t CoreTree) Stat(ctx context.Context, p string) (Info, error) {
	a, err := t.V.Stat(ctx, p)
	if err != nil {
		return Info{}, treeErr(err)
	}
	return infoOf(path.Base(p), a), nil
}

func (t CoreTree) ReadDir(ctx context.Context, p string) ([]Info, error) {
	ents, err := t.V.ReadDir(ctx, p)
	if err != nil {
		return nil, treeErr(err)
	}
	out := make([]Info, 0, len(ents))
	for _, e := range ents {
		in := Info{Name: e.Name, Dir: e.Kind == vfs.KindDir, Size: -1}
		if !in.Dir {
			// A file's attributes are in memory: no fetch.
			if a, err := t.V.Stat(ctx, path.Join(p, e.Name)); err == nil {
				in = infoOf(e.Name, a)
			}
		}
		out = append(out, in)
	}
	return out, nil
}

func (t CoreTree) ReadFile(ctx context.Context, p string) ([]byte, error) {
	b, err := t.V.ReadFile(ctx, p)
	if err != nil {
		return nil, treeErr(err)
	}
	return b, nil
}

// Skills are the skills the core places, for the SEP-2640 face.
func (t CoreTree) Skills(context.Context) ([]Skill, error) {
	placed := t.V.PlacedSkills()
	out := make([]Skill, 0, len(placed))
	for _, p := range placed {
		out = append(out, Skill{Label: p.Label, Path: p.Path, Entry: p.Entry, Files: p.Files})
	}
	return out, nil
}

func infoOf(name string, a vfs.Attr) Info {
	in := Info{Name: name, Dir: a.Kind == vfs.KindDir, Size: a.Size}
	if in.Dir || a.Volatile {
		in.Size = -1
	}
	return in
}

// treeErr maps the core's errors to a Tree's.
func treeErr(err error) error {
	switch {
	case errors.Is(err, vfs.ErrNotExist):
		return fs.ErrNotExist
	case errors.Is(err, vfs.ErrNotDir):
		return ErrNotDir
	case errors.Is(err, vfs.ErrIsDir):
		return ErrIsDir
	}
	return err
}
