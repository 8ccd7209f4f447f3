package mountd

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	skfs "github.com/skillfs/skillfs/fs"
	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/exitcode"
	"github.com/skillfs/skillfs/internal/retain"
	"github.com/skillfs/skillfs/internal/statefile"
	"github.com/skillfs/skillfs/internal/store"
	"github.com/skillfs/skillfs/internal/vfs"
)

// The steps of Run, in the order it takes them. Each returns what
// undoes it, for Run to defer.

// OpenLogs opens --log-file, if any, as opts' log output, and makes the
// mount's logger.
func OpenLogs(opts *Options) (*slog.Logger, *statefile.LogFile, func(), error) {
	var logs *statefile.LogFile
	closeLogs := func() {}
	if opts.LogFile != "" {
		lf, err := statefile.OpenLog(opts.LogFile)
		if err != nil {
			return nil, nil, nil, exitcode.UsageError(fmt.Errorf("--log-file: %w", err))
		}
		logs, opts.LogOut, closeLogs = lf, lf, func() { lf.Close() }
	}
	log, err := newLogger(opts.LogOut, opts.LogLevel, opts.Debug)
	if err != nil {
		closeLogs()
		return nil, nil, nil, err
	}
	return log, logs, closeLogs, nil
}

// mountTarget is the absolute mountpoint, refused where an agent's own
// discovery folders would find the skills (config.CheckPlacement), and
// refused before any server starts when this system cannot mount FUSE.
func mountTarget(mountpoint string) (string, error) {
	mnt, err := filepath.Abs(mountpoint)
	if err != nil {
		return "", exitcode.UsageError(err)
	}
	if err := config.CheckPlacement(mnt, config.Homes()...); err != nil {
		return "", exitcode.UsageError(fmt.Errorf("refusing mountpoint: %w", err))
	}
	if err := skfs.Available(); err != nil {
		return "", exitcode.New(exitcode.Mount, err)
	}
	return mnt, nil
}

// openOrigins loads the servers to mount and opens the cache they are kept
// in, and readies the mountpoint. The returned func closes both, waiting
// for disk writes under way.
func openOrigins(ctx context.Context, opts Options, mnt string, log *slog.Logger) (*Servers, *store.Store, func(), error) {
	origins, err := LoadOrigins(ctx, opts, log)
	if err != nil {
		return nil, nil, nil, err
	}
	origins.Config.SetShared(opts.AllowOther) // a private listing is not shown to other users
	st, err := openMountStore(opts, mnt, origins.Config, log)
	if err != nil {
		origins.Close()
		return nil, nil, nil, err
	}
	closeAll := func() {
		st.Close()
		origins.Close()
	}
	origins.IdentityKey = st.IdentityKey
	if err := skfs.PrepareMountpoint(mnt, log); err != nil {
		closeAll()
		return nil, nil, nil, exitcode.New(exitcode.Mount, err)
	}
	return origins, st, closeAll, nil
}

// StartCore makes the mount's core and starts its origins. They outlive
// ctx (a stop signal ends the mount first); the returned func stops them
// and waits a while for their sessions to end.
func StartCore(ctx context.Context, opts Options, origins *Servers, st *store.Store, mnt string, log *slog.Logger) (*vfs.Core, func(), error) {
	v, err := vfs.New(vfs.Options{Config: origins.Config, Store: st, Dial: origins.Dial, Logger: log, Version: opts.Version, StaleRetry: opts.StaleRetry, MountPoint: mnt})
	if err != nil {
		return nil, nil, err
	}
	retain.AtStart(st, origins.Config.Cache, v, log) // the origins' directories are leased by now
	vctx, stopOrigins := context.WithCancel(context.WithoutCancel(ctx))
	wait := v.Start(vctx)
	return v, func() {
		stopOrigins()
		waitTimeout(wait, 10*time.Second)
	}, nil
}

// announce tells whoever started the mount that it is live: the log, the
// ready line (opts.Ready), the --daemon parent and systemd.
func announce(opts Options, v *vfs.Core, mnt string, log *slog.Logger) *notifier {
	summary := LiveSummary(v.Consent().Status())
	log.Info("mounted", "path", mnt, "servers", summary)
	fmt.Fprintf(opts.Ready, "skillfs: mounted %s: %s\n", mnt, summary)
	if opts.ReadyPipe != nil {
		opts.ReadyPipe.Close() // the --daemon parent returns on this
	}
	sd := &notifier{}
	sd.send("READY=1", "STATUS="+summary)
	return sd
}
