package mountd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	skfs "github.com/skillfs/skillfs/fs"
	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/exitcode"
	"github.com/skillfs/skillfs/internal/statefile"
	"github.com/skillfs/skillfs/internal/vfs"
)

// running is a live mount and what its signals act on.
type running struct {
	live    *skfs.Mount
	v       *vfs.Core
	mnt     string
	opts    Options
	log     *slog.Logger
	logs    *statefile.LogFile // --log-file, or nil
	sd      *notifier
	origins *Servers
	// sigs receives SIGHUP and SIGUSR1 from before the ready line on
	// (catchSignals): a SIGHUP sent as soon as the line is seen must not
	// meet the default action, which ends the process.
	sigs chan os.Signal
	// reloadMu keeps reloads (SIGHUP, `skillfs reload`) one at a time.
	reloadMu sync.Mutex
}

// catchSignals starts catching the signals a live mount acts on; the
// returned func stops it.
func catchSignals() (chan os.Signal, func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGHUP, syscall.SIGUSR1)
	return sigs, func() { signal.Stop(sigs) }
}

// statusEvery is how often systemd's STATUS= is brought up to date.
const statusEvery = 5 * time.Second

// serve runs the mount until a signal or an unmount from outside: SIGHUP
// re-reads the config and lists every server again, SIGUSR1 writes the
// heap profile.
//
// A reload runs beside the loop, never in it: whatever it waits on (a
// config input, a server that is slow to stop), SIGTERM and SIGINT unmount
// at once and the reload is abandoned. A SIGHUP during a reload asks for
// one more after it.
func (m *running) serve(ctx context.Context) error {
	sigs := m.sigs
	gone := make(chan struct{})
	go func() { m.live.Wait(); close(gone) }()
	rctx, abandon := context.WithCancel(context.WithoutCancel(ctx))
	defer abandon()
	var reloading chan struct{} // closed when the reload under way ends; nil when none is
	again := false
	// STATUS= is kept up to date only for systemd: an idle daemon
	// elsewhere wakes for nothing.
	var tick <-chan time.Time
	if os.Getenv("NOTIFY_SOCKET") != "" {
		t := time.NewTicker(statusEvery)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case sig := <-sigs:
			if sig == syscall.SIGUSR1 {
				writeHeapProfile(m.opts.MemProfile)
				continue
			}
			if reloading != nil {
				again = true
				continue
			}
			reloading = m.hangup(rctx)
			continue
		case <-reloading:
			reloading = nil
			if again {
				again = false
				reloading = m.hangup(rctx)
			}
			continue
		case <-tick:
			m.sd.status(LiveSummary(m.v.Consent().Status()))
			continue
		case <-gone:
			m.log.Info("unmounted from outside", "path", m.mnt)
			return nil
		case <-ctx.Done():
		}
		break
	}
	abandon()
	if reloading != nil {
		m.log.Info("unmounting with a reload of the config under way; it is abandoned", "config", m.origins.Path)
	}
	m.sd.send("STOPPING=1")
	m.log.Info("unmounting", "path", m.mnt)
	// Reads waiting on a server fail now (EIO, reason "stopped") rather
	// than hold the unmount for as long as a stalled server's call timeout.
	m.v.Stop()
	if err := m.live.Unmount(); err != nil {
		if lerr := skfs.UnmountPath(m.mnt, true); lerr != nil {
			return fmt.Errorf("unmount %s: %w (lazy unmount: %v)", m.mnt, err, lerr)
		}
		// go-fuse's own attempt fell back to a fusermount that need not
		// exist; the lazy unmount succeeded, so its error is no news.
		m.log.Debug("unmount failed; detached lazily", "path", m.mnt, "err", err)
		return exitcode.New(exitcode.UnmountBusy, fmt.Errorf("%s was busy; detached it lazily, it disappears when the last user lets go", m.mnt))
	}
	return nil
}

// hangup is SIGHUP, run beside the signal loop: reopen the log file,
// re-read the config and apply it, then list every server again (which
// also retries those that gave up). The returned channel is closed when it
// is done; once ctx ends (the mount is stopping) it changes nothing more.
func (m *running) hangup(ctx context.Context) chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if m.logs != nil {
			if err := m.logs.Reopen(); err != nil {
				m.log.Error("SIGHUP: could not reopen the log file; still writing to the old one", "path", m.logs.Path(), "err", err)
			}
		}
		m.reload(ctx)
		if ctx.Err() != nil {
			return
		}
		m.log.Info("SIGHUP: listing every server again")
		m.v.Refresh()
	}()
	return done
}

// reload re-reads the config file and applies its servers (SIGHUP). A
// config that does not load, or that the mount cannot apply, changes
// nothing; the failure shows in status.json and `skillfs status` until a
// reload succeeds. Config inputs are read within config.ReadTimeout.
func (m *running) reload(ctx context.Context) {
	if m.origins.Path == "" {
		m.log.Info("SIGHUP: serving the embedded demo; there is no config file to re-read")
		return
	}
	m.applyConfig(ctx, "SIGHUP")
}

// errAbandoned: the mount stopped while a reload was under way.
var errAbandoned = errors.New("the mount is stopping; the reload was abandoned")

// A configError is a reload that failed on the config: it does not load,
// or the mount refuses or cannot apply it.
type configError struct{ error }

// applyConfig is a reload of the config file, logged as by why (SIGHUP or
// `skillfs reload`): what changed, or a configError (noted in
// status.json) or errAbandoned. Reloads run one at a time.
func (m *running) applyConfig(ctx context.Context, why string) (vfs.Reload, error) {
	m.reloadMu.Lock()
	defer m.reloadMu.Unlock()
	cfg, err := config.Load(m.origins.Path)
	if ctx.Err() != nil {
		return vfs.Reload{}, errAbandoned // the mount is stopping: nothing to apply it to
	}
	if err == nil {
		err = m.prepare(cfg)
	}
	if err != nil {
		m.v.NoteReload(err)
		m.log.Error(why+": the config has errors; keeping the servers as they were", "config", m.origins.Path, "err", err)
		return vfs.Reload{}, configError{err}
	}
	r, err := m.v.Apply(cfg)
	if ctx.Err() != nil {
		return vfs.Reload{}, errAbandoned
	}
	if err != nil {
		err = fmt.Errorf("could not apply %s: %w", m.origins.Path, err)
		m.v.NoteReload(err)
		m.log.Error(why+": could not apply the config; keeping the servers as they were", "config", m.origins.Path, "err", err)
		return vfs.Reload{}, configError{err}
	}
	m.v.NoteReload(nil)
	m.log.Info(why+": config re-read", "config", m.origins.Path, "changes", r.String(),
		"added", r.Added, "removed", r.Removed, "changed", r.Changed)
	return r, nil
}

// prepare gives a re-read config what the mount gave the first one: the
// shared flag, the cache's identity key, and the placement checks for its
// labels.
func (m *running) prepare(cfg *config.Config) error {
	cfg.SetShared(m.opts.AllowOther)
	key, err := m.origins.IdentityKey()
	if err != nil {
		return err
	}
	cfg.SetIdentityKey(key)
	var labels []string
	for _, o := range cfg.Origins {
		labels = append(labels, o.Label)
	}
	if err := config.CheckMountPlacement(m.mnt, labels, config.Homes()...); err != nil {
		return fmt.Errorf("refusing mountpoint: %w", err)
	}
	return nil
}
