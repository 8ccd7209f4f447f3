package main

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

	"github.com/spf13/cobra"

	skfs "github.com/skillfs/skillfs/fs"
	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/demo"
	"github.com/skillfs/skillfs/internal/retain"
	"github.com/skillfs/skillfs/internal/statefile"
	"github.com/skillfs/skillfs/internal/store"
	"github.com/skillfs/skillfs/internal/vfs"
)

type mountOptions struct {
	configPath     string
	demo           bool
	cacheDir       string
	debug          bool
	logLevel       string
	allowOther     bool
	startupTimeout time.Duration
	memoryCache    string
	cpuProfile     string
	memProfile     string
	staleRetry     time.Duration
	requireAll     bool
	daemon         bool
	logFile        string
	pidFile        string
	noNotify       bool
	xattrs         string
	// ready, when set, receives the mount's ready line instead of stdout.
	ready io.Writer
	// readyPipe, in a --daemon child, is ready's pipe, closed after the line.
	readyPipe *os.File
	// logOut is where logs go; stderr by default.
	logOut io.Writer
}

func (o *mountOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.configPath, "config", "", "config file (default $XDG_CONFIG_HOME/skillfs/config.json, or .yaml)")
	f.BoolVar(&o.demo, "demo", false, "mount the embedded demo server instead of the configured ones")
	f.StringVar(&o.cacheDir, "cache-dir", "", "where verified bytes are kept (default $XDG_CACHE_HOME/skillfs)")
	f.BoolVar(&o.debug, "debug", false, "log FUSE requests and debug messages")
	f.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	f.BoolVar(&o.allowOther, "allow-other", false, "let other users read the mount (needs user_allow_other in /etc/fuse.conf)")
	f.DurationVar(&o.startupTimeout, "startup-timeout", 20*time.Second, "how long to wait for servers to list their skills before the mount goes live")
	f.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the daemon to `FILE` (for BENCHMARKS.md)")
	f.StringVar(&o.memProfile, "memprofile", "", "write a heap profile to `FILE` when unmounting")
	f.DurationVar(&o.staleRetry, "stale-retry", vfs.DefaultStaleRetry, "how often a failed read may ask a server for a fresh entry of one skill (for tests)")
	f.BoolVar(&o.requireAll, "require-all", false, "exit with code 5, mounting nothing, when a server fails to start within --startup-timeout")
	f.BoolVar(&o.daemon, "daemon", false, "run in the background: return once the mount is live (exit 0), log to --log-file, write --pid-file")
	f.StringVar(&o.logFile, "log-file", "", "append logs to `FILE` instead of stderr (with --daemon: $XDG_STATE_HOME/skillfs/<mountpoint>.log); reopened on SIGHUP")
	f.StringVar(&o.pidFile, "pid-file", "", "write the daemon's pid to `FILE` while mounted (with --daemon: $XDG_STATE_HOME/skillfs/<mountpoint>.pid)")
	f.BoolVar(&o.noNotify, "no-notify", false, "serve as for a kernel without cache notifications, as on macOS (for tests)")
	f.MarkHidden("no-notify")
	f.MarkHidden("stale-retry")
	f.MarkHidden("cpuprofile")
	f.MarkHidden("memprofile")
	f.StringVar(&o.xattrs, "xattrs", "on", "on: user.skillfs.* attributes on every file; off: none, so `ls -l` asks the daemon nothing per file (faster)")
	f.StringVar(&o.memoryCache, "memory-cache", "8MiB", "verified bytes kept in memory, on top of the kernel's page cache (e.g. 64MiB; 0 disables)")
}

func newMountCommand() *cobra.Command {
	var opts mountOptions
	cmd := &cobra.Command{
		Use:   "mount [flags] MOUNTPOINT",
		Short: "Mount the configured servers' skills at MOUNTPOINT (runs in the foreground)",
		Long: `Mount shows each configured MCP server's skills as a read-only directory tree:
MOUNTPOINT/<label>/<skill-path>/<file>, plus MOUNTPOINT/.skillfs/ with index.json,
index.md and status.json. Files are fetched when first read and served only after
their size and sha256 digest (and, for SKILL.md, the frontmatter) match the listing.

With no config file, the embedded demo server is mounted (as with --demo).
The command stays in the foreground; SIGINT or SIGTERM unmounts. SIGHUP re-reads
the config file (servers added, removed or changed are applied; a config with
errors is logged and the running one kept), lists every server again, retries
servers that gave up starting, and reopens --log-file.

With --daemon it returns once the mount is live (exit 0, printing the ready line
and the daemon's pid), or with the reason and the end of the log when it cannot
be. Under systemd (Type=notify) the mount reports READY=1, STATUS= and STOPPING=1.

The config is the mcpServers file MCP hosts use, plus an optional skillfs
section (every key and default: internal/config/doc.go), in JSON or YAML:

` + config.Example + `

Exit codes: 0 unmounted cleanly, 1 runtime failure, 2 usage or config error,
3 could not mount, 4 unmounted lazily because the mount was busy, 5 with
--require-all: a server failed to start (nothing was mounted), 130 Ctrl-C
(SIGINT) while starting (nothing was mounted).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError(fmt.Errorf("mount needs exactly one MOUNTPOINT, got %d arguments (example: skillfs mount ~/.cache/mcp-skills)", len(args)))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.xattrs != "on" && opts.xattrs != "off" {
				return usageError(fmt.Errorf("--xattrs %q: write on (the user.skillfs.* attributes) or off (none; ls -l is faster)", opts.xattrs))
			}
			if rp := readyPipe(); rp != nil {
				// A --daemon child: the parent waits for this line.
				opts.ready, opts.readyPipe = rp, rp
			} else if opts.daemon {
				mnt, err := filepath.Abs(args[0])
				if err != nil {
					return usageError(err)
				}
				return runDaemon(opts, mnt, cmd.OutOrStdout())
			}
			if opts.ready == nil {
				opts.ready = cmd.OutOrStdout()
			}
			if opts.logOut == nil {
				opts.logOut = cmd.ErrOrStderr()
			}
			return runMount(cmd.Context(), opts, args[0])
		},
	}
	opts.addFlags(cmd)
	return cmd
}

func newLogger(w io.Writer, level string, debug bool) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usageError(fmt.Errorf("--log-level %q: use debug, info, warn or error", level))
	}
	if debug {
		l = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// defaultGCPercent is the daemon's GOGC unless the environment sets one.
const defaultGCPercent = 50

// runMount mounts the configured servers at mountpoint and serves them
// until ctx ends or the mount is unmounted. Each step (mount_steps.go)
// hands back what undoes it, deferred here, so the way out is the way in
// reversed.
func runMount(ctx context.Context, opts mountOptions, mountpoint string) error {
	log, logs, closeLogs, err := openLogs(&opts)
	if err != nil {
		return err
	}
	defer closeLogs()
	// From here on SIGHUP is caught (and acted on once the mount is
	// live), so that a reload sent during startup does not end it.
	sigs, stopSignals := catchSignals()
	defer stopSignals()
	stopProfiles, err := startProfiles(opts.cpuProfile, opts.memProfile)
	if err != nil {
		return usageError(err)
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
	v, stopCore, err := startCore(ctx, opts, origins, st, mnt, log)
	if err != nil {
		return err
	}
	defer stopCore()
	// The control endpoint answers from here on: while the servers are
	// still listing, status shows them doing it (starting.go).
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
	live, err := skfs.Start(mnt, v, skfs.Options{Debug: opts.debug, AllowOther: opts.allowOther, NoNotify: opts.noNotify, NoXattrs: opts.xattrs == "off", Logger: log})
	if err != nil {
		return &exitError{code: exitMount, err: err}
	}
	isLive.Store(true)
	removePid, err := statefile.WritePid(opts.pidFile)
	if err != nil {
		live.Unmount()
		return usageError(err)
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
func openMountStore(opts mountOptions, mnt string, cfg *config.Config, log *slog.Logger) (*store.Store, error) {
	homes := config.Homes()
	var labels []string
	for _, o := range cfg.Origins {
		labels = append(labels, o.Label)
	}
	if err := config.CheckMountPlacement(mnt, labels, homes...); err != nil {
		return nil, usageError(fmt.Errorf("refusing mountpoint: %w", err))
	}
	root, err := cacheRoot(opts.cacheDir)
	if err != nil {
		return nil, err
	}
	if err := config.CheckPlacement(root, homes...); err != nil {
		return nil, usageError(fmt.Errorf("refusing cache directory: %w", err))
	}
	if within(root, mnt) {
		return nil, usageError(fmt.Errorf("the cache directory %s is inside the mountpoint %s; choose another --cache-dir", root, mnt))
	}
	return openStore(opts, root, cfg, log)
}

// openStore opens the cache at root (refused inside a discovery path) with
// the origins' identities keyed to it: what a mount and `skillfs mcp`
// share.
func openStore(opts mountOptions, root string, cfg *config.Config, log *slog.Logger) (*store.Store, error) {
	if err := config.CheckPlacement(root, config.Homes()...); err != nil {
		return nil, usageError(fmt.Errorf("refusing cache directory: %w", err))
	}
	memLimit, err := config.ParseSize(opts.memoryCache)
	if err != nil {
		return nil, usageError(fmt.Errorf("--memory-cache %q: %v (write e.g. 32MiB)", opts.memoryCache, err))
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

// cacheRoot is the cache directory a command uses: --cache-dir, or
// $XDG_CACHE_HOME/skillfs, made absolute.
func cacheRoot(dir string) (string, error) {
	if dir == "" {
		var err error
		if dir, err = store.DefaultRoot(); err != nil {
			return "", err
		}
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return "", usageError(err)
	}
	return root, nil
}

// waitWithProgress is waitReady with the terminal's progress line
// (startupProgress), erased before the ready line is printed.
func waitWithProgress(ctx context.Context, opts mountOptions, v *vfs.Core, log *slog.Logger) bool {
	erase := startupProgress(opts, v)
	defer erase()
	return waitReady(ctx, v, opts.startupTimeout, log)
}

// waitReady waits up to timeout for every server's first listing; false
// when ctx ended meanwhile.
func waitReady(ctx context.Context, v *vfs.Core, timeout time.Duration, log *slog.Logger) bool {
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

// servers are the origins a mount connects to, with the dialers of those
// served in-process (the demo).
type servers struct {
	Config *config.Config
	Dial   map[string]func(context.Context) (io.ReadWriteCloser, error)
	Close  func()
	// Path is the config file, "" for the demo; SIGHUP re-reads it.
	Path string
	// IdentityKey is the cache's key for origin ids (set once the cache
	// is open), for a re-read config.
	IdentityKey func() ([]byte, error)
}

// loadOrigins returns the configured servers, or the in-process demo when
// --demo is given or no config exists.
func loadOrigins(ctx context.Context, opts mountOptions, log *slog.Logger) (*servers, error) {
	if !opts.demo {
		path := opts.configPath
		if path == "" {
			p, err := config.DefaultPath()
			if err != nil {
				return nil, usageError(err)
			}
			path = p
		}
		cfg, err := config.Load(path)
		switch {
		case err == nil:
			return &servers{Config: cfg, Close: func() {}, Path: path}, nil
		case errors.Is(err, fs.ErrNotExist) && opts.configPath == "":
			fmt.Fprintf(opts.logOut, "skillfs: no config at %s; mounting the embedded demo server (see `skillfs mount --help`)\n", path)
		default:
			return nil, usageError(err)
		}
	}
	d, err := demo.Serve(ctx, log)
	if err != nil {
		return nil, err
	}
	return &servers{Config: d.Config, Dial: d.Dial, Close: d.Close}, nil
}
