package mountd

import (
	"context"
	"log/slog"

	"github.com/skillfs/skillfs/internal/control"
	"github.com/skillfs/skillfs/internal/vfs"
)

// The mount's Consent is what the control endpoint serves.
var _ control.API = (*vfs.Consent)(nil)

// It also tells `skillfs status` how each stdio server last ended.
var _ control.ExitReporter = (*vfs.Consent)(nil)
var _ control.StderrReporter = (*vfs.Consent)(nil)

// startControl serves the control endpoint from before the mount is live
// (starting reports whether it is not yet; cmd/skillfs, starting.go, prints it); the returned
// func stops it. A mount without one still serves its tree, so a failure
// is a warning.
func startControl(ctx context.Context, v *vfs.Core, mnt string, opts Options, reload control.ReloadFunc, starting func() bool, log *slog.Logger) func() {
	root, err := CacheRoot(opts.CacheDir)
	if err != nil {
		log.Warn("no control endpoint: skillfs status and the other commands will not find this mount", "err", err)
		return func() {}
	}
	srv, err := control.Serve(ctx, control.Options{
		Dir:      control.Dirs(root)[0],
		Mount:    control.MountInfo{Path: mnt, Started: v.Consent().Status().StartedAt, CacheDir: root},
		API:      v.Consent(),
		Logger:   log,
		Reload:   reload,
		Starting: starting,
	})
	if err != nil {
		log.Warn("no control endpoint: skillfs status and the other commands will not find this mount", "err", err)
		return func() {}
	}
	v.Consent().SetControl(srv.Socket())
	return func() {
		v.Consent().SetControl("")
		srv.Close()
	}
}
