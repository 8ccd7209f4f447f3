package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillfs/skillfs/config"
	"github.com/skillfs/skillfs/demo"
	skfs "github.com/skillfs/skillfs/fs"
	"github.com/skillfs/skillfs/skillserver"
	"github.com/skillfs/skillfs/store"
	"github.com/skillfs/skillfs/vfs"
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
	// ready, when set, receives the mount's ready line instead of stdout.
	ready io.Writer
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
	f.MarkHidden("cpuprofile")
	f.MarkHidden("memprofile")
	f.StringVar(&o.memoryCache, "memory-cache", "16MiB", "verified bytes kept in memory, on top of the kernel's page cache (e.g. 64MiB; 0 disables)")
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
The command stays in the foreground; SIGINT or SIGTERM unmounts, SIGHUP re-lists.

The config is the mcpServers file MCP hosts use, plus an optional skillfs
section (every key and default: config/doc.go), in JSON or YAML:

` + config.Example + `

Exit codes: 0 unmounted cleanly, 1 runtime failure, 2 usage or config error,
3 could not mount, 4 unmounted lazily because the mount was busy.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError(fmt.Errorf("mount needs exactly one MOUNTPOINT, got %d arguments (example: skillfs mount ~/.cache/mcp-skills)", len(args)))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
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

func runMount(ctx context.Context, opts mountOptions, mountpoint string) error {
	log, err := newLogger(opts.logOut, opts.logLevel, opts.debug)
	if err != nil {
		return err
	}
	if os.Getenv("GOGC") == "" {
		// The catalog is most of the live heap and barely changes; a
		// smaller headroom over it keeps RSS near what is needed at the
		// cost of more frequent (cheap, mostly idle-time) collections.
		debug.SetGCPercent(defaultGCPercent)
	}
	stopProfiles, err := startProfiles(opts.cpuProfile, opts.memProfile)
	if err != nil {
		return usageError(err)
	}
	defer stopProfiles()
	mnt, err := filepath.Abs(mountpoint)
	if err != nil {
		return usageError(err)
	}
	homes := config.Homes()
	if err := config.CheckPlacement(mnt, homes...); err != nil {
		return usageError(fmt.Errorf("refusing mountpoint: %w", err))
	}

	cfg, dial, stopDemo, err := loadOrigins(ctx, opts, log)
	if err != nil {
		return err
	}
	defer stopDemo()
	cfg.SetShared(opts.allowOther) // a private listing is not shown to other users
	var labels []string
	for _, o := range cfg.Origins {
		labels = append(labels, o.Label)
	}
	if err := config.CheckMountPlacement(mnt, labels, homes...); err != nil {
		return usageError(fmt.Errorf("refusing mountpoint: %w", err))
	}

	root := opts.cacheDir
	if root == "" {
		if root, err = store.DefaultRoot(); err != nil {
			return err
		}
	}
	if root, err = filepath.Abs(root); err != nil {
		return usageError(err)
	}
	if err := config.CheckPlacement(root, homes...); err != nil {
		return usageError(fmt.Errorf("refusing cache directory: %w", err))
	}
	if within(root, mnt) {
		return usageError(fmt.Errorf("the cache directory %s is inside the mountpoint %s; choose another --cache-dir", root, mnt))
	}
	memLimit, err := parseSize(opts.memoryCache)
	if err != nil {
		return usageError(fmt.Errorf("--memory-cache %q: %v (write e.g. 32MiB)", opts.memoryCache, err))
	}
	if memLimit == 0 {
		memLimit = -1 // store: negative disables
	}
	st, err := store.Open(root, store.Options{Logger: log, MemoryLimit: memLimit})
	if err != nil {
		return fmt.Errorf("open cache: %w", err)
	}
	defer st.Close() // waits for disk writes under way
	// Origin ids (store directory names) are keyed with the store's key so
	// that they reveal nothing of the env values and headers they cover.
	idKey, err := st.IdentityKey()
	if err != nil {
		return fmt.Errorf("open cache: %w", err)
	}
	cfg.SetIdentityKey(idKey)

	if err := prepareMountpoint(mnt, log); err != nil {
		return &exitError{code: exitMount, err: err}
	}

	// Catalog swaps before the mount exists need no invalidation; after, the
	// mount takes them without blocking the swap.
	var mounted atomic.Pointer[skfs.Mount]
	v, err := vfs.New(vfs.Options{
		Config:  cfg,
		Store:   st,
		Dial:    dial,
		Logger:  log,
		Version: versionString(),
		OnChange: func(c vfs.Change) {
			if m := mounted.Load(); m != nil {
				m.Invalidate(c)
			}
		},
	})
	if err != nil {
		return err
	}
	vctx, stopOrigins := context.WithCancel(context.WithoutCancel(ctx))
	defer func() {
		stopOrigins()
		waitTimeout(v.Wait, 10*time.Second)
	}()
	v.Start(vctx)
	rctx, cancel := context.WithTimeout(ctx, opts.startupTimeout)
	waiting := v.Ready(rctx)
	cancel()
	if ctx.Err() != nil {
		return nil
	}
	for _, label := range waiting {
		log.Warn("server not ready yet; its directory fills in when it answers", "origin", label)
	}

	live, err := skfs.Start(mnt, v, skfs.Options{Debug: opts.debug, AllowOther: opts.allowOther, Logger: log})
	if err != nil {
		return &exitError{code: exitMount, err: fmt.Errorf("%w%s", err, mountHint(err))}
	}
	mounted.Store(live)
	fmt.Fprintf(opts.ready, "skillfs: mounted %s (%s)\n", mnt, strings.Join(v.Labels(), ", "))

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP, syscall.SIGUSR1)
	defer signal.Stop(hup)
	gone := make(chan struct{})
	go func() { live.Wait(); close(gone) }()
	for {
		select {
		case sig := <-hup:
			if sig == syscall.SIGUSR1 {
				writeHeapProfile(opts.memProfile)
				continue
			}
			log.Info("SIGHUP: listing every server again")
			v.Refresh()
			continue
		case <-gone:
			log.Info("unmounted from outside", "path", mnt)
			return nil
		case <-ctx.Done():
		}
		break
	}
	if err := live.Unmount(); err != nil {
		if lerr := skfs.UnmountPath(mnt, true); lerr != nil {
			return fmt.Errorf("unmount %s: %w (lazy unmount: %v)", mnt, err, lerr)
		}
		fmt.Fprintf(opts.logOut, "skillfs: %s was busy; detached it lazily, it disappears when the last user lets go\n", mnt)
		return &exitError{code: exitUnmountBusy, err: fmt.Errorf("unmounted %s lazily: %w", mnt, err)}
	}
	return nil
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

// parseSize reads a byte count with an optional unit (KiB, MiB, GiB, KB, MB, GB).
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("not a size")
	}
	return n * mult, nil
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

func mountHint(err error) string {
	if os.Geteuid() != 0 && strings.Contains(err.Error(), "fusermount") {
		return " (install fuse3 for fusermount3: apt-get install fuse3)"
	}
	return ""
}

// prepareMountpoint creates the mountpoint if needed, cleans up a dead
// mount a killed daemon left behind, and refuses a non-empty directory.
func prepareMountpoint(mnt string, log *slog.Logger) error {
	fi, err := os.Stat(mnt)
	if errors.Is(err, syscall.ENOTCONN) || (err == nil && skfs.IsMounted(mnt) && isDead(mnt)) {
		// The kernel may still answer stat from its cache; a directory read
		// reaches the (gone) daemon and tells.
		fmt.Fprintf(os.Stderr, "skillfs: %s is a dead mount left by a daemon that was killed; unmounting it first\n", mnt)
		if err := skfs.UnmountPath(mnt, true); err != nil {
			return fmt.Errorf("clean up dead mount at %s: %w", mnt, err)
		}
		fi, err = os.Stat(mnt)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(mnt, 0o755); err != nil {
			return fmt.Errorf("create mountpoint: %w", err)
		}
		log.Info("created mountpoint", "path", mnt)
		fi, err = os.Stat(mnt)
	}
	if err != nil {
		return fmt.Errorf("mountpoint: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("mountpoint %s is not a directory", mnt)
	}
	if skfs.IsMounted(mnt) {
		return fmt.Errorf("%s is already a mount point; unmount it first (skillfs unmount %s)", mnt, mnt)
	}
	ents, err := os.ReadDir(mnt)
	if err != nil {
		return fmt.Errorf("mountpoint: %w", err)
	}
	if len(ents) > 0 {
		return fmt.Errorf("mountpoint %s is not empty (it holds %s); mount on an empty directory so nothing is hidden", mnt, ents[0].Name())
	}
	return nil
}

func isDead(dir string) bool {
	_, err := os.ReadDir(dir)
	return errors.Is(err, syscall.ENOTCONN)
}

// loadOrigins returns the configured servers, or the in-process demo.
func loadOrigins(ctx context.Context, opts mountOptions, log *slog.Logger) (*config.Config, map[string]func(context.Context) (io.ReadWriteCloser, error), func(), error) {
	nothing := func() {}
	useDemo := opts.demo
	if !useDemo {
		path := opts.configPath
		if path == "" {
			p, err := config.DefaultPath()
			if err != nil {
				return nil, nil, nothing, usageError(err)
			}
			path = p
		}
		cfg, err := config.Load(path)
		switch {
		case err == nil:
			return cfg, nil, nothing, nil
		case errors.Is(err, fs.ErrNotExist) && opts.configPath == "":
			fmt.Fprintf(os.Stderr, "skillfs: no config at %s; mounting the embedded demo server (see `skillfs mount --help`)\n", path)
			useDemo = true
		default:
			return nil, nil, nothing, usageError(err)
		}
	}
	return startDemo(ctx, log)
}

// demoLabel is the directory the demo origin appears under.
const demoLabel = "demo"

// startDemo serves the embedded demo skills from an in-process server and
// returns a config with one origin that dials it over an in-memory pipe.
func startDemo(ctx context.Context, log *slog.Logger) (*config.Config, map[string]func(context.Context) (io.ReadWriteCloser, error), func(), error) {
	dir, err := os.MkdirTemp("", "skillfs-demo-")
	if err != nil {
		return nil, nil, nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	if err := demo.Materialize(dir); err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	// The demo server's session chatter is not the user's concern; its
	// warnings are.
	srvLog := slog.New(minLevel{log.Handler(), slog.LevelWarn}).With("origin", demoLabel, "op", "demo-server")
	srv, err := skillserver.New(dir, skillserver.Options{Logger: srvLog, PollInterval: -1, Name: "skillfs-demo"})
	if err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	dial := func(context.Context) (io.ReadWriteCloser, error) {
		client, server := net.Pipe()
		go func() {
			if err := srv.ServeConn(sctx, server); err != nil && sctx.Err() == nil {
				log.Debug("demo session ended", "origin", demoLabel, "err", err)
			}
			server.Close()
		}()
		return client, nil
	}
	cfg := &config.Config{Origins: []config.Origin{{
		Label:   demoLabel,
		Kind:    config.Stdio,
		Command: "skillfs-embedded-demo",
		Limits:  config.DefaultLimits(),
	}}}
	return cfg, map[string]func(context.Context) (io.ReadWriteCloser, error){demoLabel: dial}, func() { cancel(); cleanup() }, nil
}

// minLevel drops records below a level before they reach h.
type minLevel struct {
	h     slog.Handler
	level slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.level && m.h.Enabled(ctx, l)
}
func (m minLevel) Handle(ctx context.Context, r slog.Record) error { return m.h.Handle(ctx, r) }
func (m minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{m.h.WithAttrs(as), m.level}
}
func (m minLevel) WithGroup(name string) slog.Handler { return minLevel{m.h.WithGroup(name), m.level} }
