package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strings"

	"github.com/skillfs/skillfs/control"
	"github.com/skillfs/skillfs/vfs"
)

// errNoApproval answers the approval methods until the approval core is in.
var errNoApproval = errors.New("approval is not available in this build")

// controlAPI is the mount's core as the control endpoint sees it.
//
// Status, Skills, Inspect and ShowSkillMD work from what the core shows;
// approval (Pending, Approve, ApproveAll, Revoke) and Get wait for the
// core's own methods (vfs/control.go), which replace these.
type controlAPI struct{ v *vfs.Core }

var _ control.API = controlAPI{}

func (a controlAPI) Status() vfs.Status      { return a.v.Status() }
func (a controlAPI) Skills() []vfs.SkillInfo { return a.v.Index().Skills }
func (a controlAPI) Pending() []control.Pending {
	return nil
}
func (a controlAPI) Approve([]control.SkillRef) ([]vfs.SkillInfo, error) { return nil, errNoApproval }
func (a controlAPI) ApproveAll(string) ([]vfs.SkillInfo, error)          { return nil, errNoApproval }
func (a controlAPI) Revoke([]control.SkillRef) ([]vfs.SkillInfo, error)  { return nil, errNoApproval }
func (a controlAPI) Get(context.Context, string, string) (vfs.SkillInfo, error) {
	return vfs.SkillInfo{}, errNoApproval
}

// find is the index row ref names.
func (a controlAPI) find(ref control.SkillRef) (vfs.SkillInfo, error) {
	for _, s := range a.Skills() {
		if (ref.Path != "" && s.Path == ref.Path) || (ref.Path == "" && s.Origin == ref.Origin && s.URI == ref.URI) {
			return s, nil
		}
	}
	return vfs.SkillInfo{}, control.NotFound("no skill %s on this mount (see `skillfs list`)", ref)
}

// Inspect lists the skill's files as the tree shows them, with their
// digests and whether they were verified in this run.
func (a controlAPI) Inspect(ctx context.Context, ref control.SkillRef) (control.Inspection, error) {
	s, err := a.find(ref)
	if err != nil {
		return control.Inspection{}, err
	}
	ins := control.Inspection{Skill: s, Files: []control.FileState{}}
	if s.State == "rejected" {
		return ins, nil
	}
	err = a.walk(ctx, s.Path, func(p string, size int64) {
		fs := control.FileState{Path: strings.TrimPrefix(p, s.Path+"/"), Size: size}
		xs, _ := a.v.Xattrs(ctx, p)
		for _, x := range xs {
			switch x.Name {
			case "user.skillfs.uri":
				fs.URI = x.Value
			case "user.skillfs.digest":
				fs.Digest = x.Value
			case "user.skillfs.verified":
				fs.Verified = x.Value == "yes"
			}
		}
		ins.Files = append(ins.Files, fs)
	})
	return ins, err
}

func (a controlAPI) walk(ctx context.Context, dir string, file func(p string, size int64)) error {
	ents, err := a.v.ReadDir(ctx, dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		p := path.Join(dir, e.Name)
		if e.Kind == vfs.KindDir {
			if err := a.walk(ctx, p, file); err != nil {
				return err
			}
			continue
		}
		at, err := a.v.Stat(ctx, p)
		if err != nil {
			return err
		}
		file(p, at.Size)
	}
	return nil
}

// ShowSkillMD reads SKILL.md as a reader of the mount would: verified.
func (a controlAPI) ShowSkillMD(ctx context.Context, ref control.SkillRef) ([]byte, error) {
	s, err := a.find(ref)
	if err != nil {
		return nil, err
	}
	if s.State == "rejected" {
		return nil, fmt.Errorf("%s was rejected (%s): it has no SKILL.md on this mount: %w", s.Path, s.Reason, control.ErrInvalid)
	}
	return a.v.ReadFile(ctx, s.Path+"/SKILL.md")
}

// startControl serves the control endpoint for a live mount; the returned
// func stops it. A mount without one still serves its tree, so a failure
// is a warning.
func startControl(ctx context.Context, v *vfs.Core, mnt string, opts mountOptions, log *slog.Logger) func() {
	root, err := cacheRoot(opts.cacheDir)
	if err != nil {
		log.Warn("no control endpoint: skillfs status and the other commands will not find this mount", "err", err)
		return func() {}
	}
	srv, err := control.Serve(ctx, control.Options{
		Dir:    control.Dirs(root)[0],
		Mount:  control.MountInfo{Path: mnt, Started: v.Status().StartedAt, CacheDir: root},
		API:    controlAPI{v},
		Logger: log,
	})
	if err != nil {
		log.Warn("no control endpoint: skillfs status and the other commands will not find this mount", "err", err)
		return func() {}
	}
	return func() { srv.Close() }
}
