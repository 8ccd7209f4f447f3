package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/skillfs/skillfs/control"
	"github.com/skillfs/skillfs/vfs"
)

// controlAPI is the mount's core as the control endpoint sees it: the
// core's own methods (vfs/control.go), with its errors sorted into what the
// endpoint reports as not found or as bad input.
type controlAPI struct{ v *vfs.Core }

var _ control.API = controlAPI{}

func (a controlAPI) Status() vfs.Status      { return a.v.Status() }
func (a controlAPI) Skills() []vfs.SkillInfo { return a.v.Skills() }
func (a controlAPI) Pending() []control.Pending {
	return a.v.Pending()
}

func (a controlAPI) Inspect(ctx context.Context, ref control.SkillRef) (control.Inspection, error) {
	ins, err := a.v.Inspect(ctx, ref)
	return ins, refErr(err)
}

func (a controlAPI) ShowSkillMD(ctx context.Context, ref control.SkillRef) ([]byte, error) {
	b, err := a.v.ShowSkillMD(ctx, ref)
	return b, refErr(err)
}

func (a controlAPI) Approve(refs []control.SkillRef, all string) ([]vfs.SkillInfo, error) {
	out, err := a.v.Approve(refs, all)
	return out, refErr(err)
}

func (a controlAPI) Revoke(refs []control.SkillRef) ([]vfs.SkillInfo, error) {
	out, err := a.v.Revoke(refs)
	return out, refErr(err)
}

func (a controlAPI) Get(ctx context.Context, label, uri string) (vfs.SkillInfo, error) {
	s, err := a.v.Get(ctx, label, uri)
	return s, refErr(err)
}

// refErr makes a ref that names no skill bad input (the command exits 2)
// and an unknown one not found, with a message that says what to do.
func refErr(err error) error {
	var re *vfs.RefError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &re):
		return fmt.Errorf("%w: %w", err, control.ErrInvalid)
	case errors.Is(err, vfs.ErrNotExist):
		return control.NotFound("no skill %s on this mount (see `skillfs list`)", strings.TrimSuffix(err.Error(), ": "+vfs.ErrNotExist.Error()))
	}
	return err
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
	v.SetControl(srv.Socket())
	return func() {
		v.SetControl("")
		srv.Close()
	}
}
