package mountd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"time"

	skfs "github.com/skillfs/skillfs/fs"
	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/demo"
	"github.com/skillfs/skillfs/internal/exitcode"
	"github.com/skillfs/skillfs/internal/retain"
	"github.com/skillfs/skillfs/internal/statefile"
	"github.com/skillfs/skillfs/internal/store"
	"github.com/skillfs/skillfs/internal/vfs"
)

func newLogger(w io.Writer, level string, debug bool) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, exitcode.UsageError(fmt.Errorf("--log-level %q: use debug, info, warn or error", level))
	}
	if debug {
		l = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// defaultGCPercent is the daemon's GOGC unless the environment sets one.
const defaultGCPercent = 50

// Run mounts the configured servers at mountpoint and serves them
// until ctx ends or the mount is unmounted. Each step (mount_steps.go)
// hands back what undoes it, deferred here, so the way out is the way in
// reversed.
func Run(ctx context.Context, opts Options, mountpoint string) error {
	log, logs, closeLogs, err := OpenLogs(&opts)
	if err != nil {
		return err
	}
	defer closeLogs()
	// From here on SIGHUP is caught (and acted on once the mount is
	// live), so that a reload sent during startup does not end it.
	sigs, stopSignals := catchSignals()
	defer stopSignals()
	stopProfiles, err := startProfiles(opts.CPUProfile, opts.MemProfile)
	if err != nil {
		return exitcode.UsageError(err)
	}
	defer stopProfiles()
	mnt, err := mountTarget(mountpoint)
	if err != nil {
		return err
	}
	origins, st, closeOrigins, err := openOrigins(ctx, opts, mnt, log)
	if err != nil {
		return err
	}
	defer closeOrigins()
	v, stopCore, err := StartCore(ctx, opts, origins, st, mnt, log)
	if err != nil {
		return err
	}
	defer stopCore()
	// The control endpoint answers from here on: while the servers are
	// still listing, status shows them doing it (cmd/skillfs, starting.go).
	var hook reloadHook
	var isLive atomic.Bool
	defer startControl(ctx, v, mnt, opts, hook.reload, func() bool { return !isLive.Load() }, log)()
	if !waitWithProgress(ctx, opts, v, log) {
		return interruptedAtStart(ctx)
	}
	tuneGC()
	if err := requireAll(opts, v.Consent().Status()); err != nil {
		return err
	}
	live, err := skfs.Start(mnt, v, skfs.Options{Debug: opts.Debug, AllowOther: opts.AllowOther, NoNotify: opts.NoNotify, NoXattrs: opts.Xattrs == "off", Logger: log})
	if err != nil {
		return exitcode.New(exitcode.Mount, err)
	}
	isLive.Store(true)
	removePid, err := statefile.WritePid(opts.PidFile)
	if err != nil {
		live.Unmount()
		return exitcode.UsageError(err)
	}
	defer removePid()
	sd := announce(opts, v, mnt, log)
	defer sd.send("STOPPING=1")
	m := &running{live: live, v: v, mnt: mnt, opts: opts, log: log, logs: logs, sd: sd, origins: origins, sigs: sigs}
	hook.m.Store(m)
	return m.serve(ctx)
}

// tuneGC sets the daemon's GOGC unless the environment sets one: the
// catalog is most of the live heap and barely changes, so a smaller
// headroom over it keeps RSS near what is needed at the cost of more
// frequent (cheap, mostly idle-time) collections. It is set once the
// first catalogs are held: while they are decoded the heap only grows,
// and collecting at every half of it again would mark the catalog over
// and over on the way to a live mount.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}

// openMountStore checks where the mount, the servers' directories below it
// and the cache may be, and opens the cache with the origins' identities
// keyed to it.
func openMountStore(opts Options, mnt string, cfg *config.Config, log *slog.Logger) (*store.Store, error) {
	homes := config.Homes()
	var labels []string
	for _, o := range cfg.Origins {
		labels = append(labels, o.Label)
	}
	if err := config.CheckMountPlacement(mnt, labels, homes...); err != nil {
		return nil, exitcode.UsageError(fmt.Errorf("refusing mountpoint: %w", err))
	}
	root, err := CacheRoot(opts.CacheDir)
	if err != nil {
		return nil, err
	}
	if err := config.CheckPlacement(root, homes...); err != nil {
		return nil, exitcode.UsageError(fmt.Errorf("refusing cache directory: %w", err))
	}
	if within(root, mnt) {
		return nil, exitcode.UsageError(fmt.Errorf("the cache directory %s is inside the mountpoint %s; choose another --cache-dir", root, mnt))
	}
	return OpenStore(opts, root, cfg, log)
}

// OpenStore opens the cache at root (refused inside a discovery path) with
// the origins' identities keyed to it: what a mount and `skillfs mcp`
// share.
func OpenStore(opts Options, root string, cfg *config.Config, log *slog.Logger) (*store.Store, error) {
	if err := config.CheckPlacement(root, config.Homes()...); err != nil {
		return nil, exitcode.UsageError(fmt.Errorf("refusing cache directory: %w", err))
	}
	memLimit, err := config.ParseSize(opts.MemoryCache)
	if err != nil {
		return nil, exitcode.UsageError(fmt.Errorf("--memory-cache %q: %v (write e.g. 32MiB)", opts.MemoryCache, err))
	}
	if memLimit == 0 {
		memLimit = -1 // store: negative disables
	}
	st, err := store.Open(root, retain.StoreOptions(cfg.Cache, log, memLimit))
	if err != nil {
		return nil, fmt.Errorf("open cache: %w", err)
	}
	// Origin ids (store directory names) are keyed with the store's key so
	// that they reveal nothing of the env values and headers they cover.
	idKey, err := st.IdentityKey()
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("open cache: %w", err)
	}
	cfg.SetIdentityKey(idKey)
	return st, nil
}

// CacheRoot is the cache directory a command uses: --cache-dir, or
// $XDG_CACHE_HOME/skillfs, made absolute.
func CacheRoot(dir string) (string, error) {
	if dir == "" {
		var err error
		if dir, err = store.DefaultRoot(); err != nil {
			return "", err
		}
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return "", exitcode.UsageError(err)
	}
	return root, nil
}

// waitWithProgress is waitReady with the terminal's progress line
// (startupProgress), erased before the ready line is printed.
func waitWithProgress(ctx context.Context, opts Options, v *vfs.Core, log *slog.Logger) bool {
	erase := startupProgress(opts, v)
	defer erase()
	return WaitReady(ctx, v, opts.StartupTimeout, log)
}

// WaitReady waits up to timeout for every server's first listing; false
// when ctx ended meanwhile.
func WaitReady(ctx context.Context, v *vfs.Core, timeout time.Duration, log *slog.Logger) bool {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	waiting := v.Ready(rctx)
	cancel()
	if ctx.Err() != nil {
		return false
	}
	for _, label := range waiting {
		log.Warn("server not ready yet; its directory fills in when it answers", "origin", label)
	}
	return true
}

// startProfiles starts a CPU profile and arranges a heap profile; the
// returned func writes them.
func startProfiles(cpu, mem string) (func(), error) {
	var cpuFile *os.File
	if cpu != "" {
		f, err := os.Create(cpu)
		if err != nil {
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		cpuFile = f
	}
	return func() {
		if cpuFile != nil {
			pprof.StopCPUProfile()
			cpuFile.Close()
		}
		writeHeapProfile(mem)
	}, nil
}

// writeHeapProfile writes the live heap to path (SIGUSR1, and at exit).
func writeHeapProfile(path string) {
	if path == "" {
		return
	}
	if f, err := os.Create(path); err == nil {
		runtime.GC()
		pprof.WriteHeapProfile(f)
		f.Close()
	}
}

func waitTimeout(wait func(), d time.Duration) {
	done := make(chan struct{})
	go func() { wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// Servers are the origins a mount connects to, with the dialers of those
// served in-process (the demo).
type Servers struct {
	Config *config.Config
	Dial   map[string]func(context.Context) (io.ReadWriteCloser, error)
	Close  func()
	// Path is the config file, "" for the demo; SIGHUP re-reads it.
	Path string
	// IdentityKey is the cache's key for origin ids (set once the cache
	// is open), for a re-read config.
	IdentityKey func() ([]byte, error)
}

// LoadOrigins returns the configured servers, or the in-process demo when
// --demo is given or no config exists.
func LoadOrigins(ctx context.Context, opts Options, log *slog.Logger) (*Servers, error) {
	if !opts.Demo {
		path := opts.ConfigPath
		if path == "" {
			p, err := config.DefaultPath()
			if err != nil {
				return nil, exitcode.UsageError(err)
			}
			path = p
		}
		cfg, err := config.Load(path)
		switch {
		case err == nil:
			return &Servers{Config: cfg, Close: func() {}, Path: path}, nil
		case errors.Is(err, fs.ErrNotExist) && opts.ConfigPath == "":
			fmt.Fprintf(opts.LogOut, "skillfs: no config at %s; mounting the embedded demo server (see `skillfs mount --help`)\n", path)
		default:
			return nil, exitcode.UsageError(err)
		}
	}
	d, err := demo.Serve(ctx, log)
	if err != nil {
		return nil, err
	}
	return &Servers{Config: d.Config, Dial: d.Dial, Close: d.Close}, nil
}
