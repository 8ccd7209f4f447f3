package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/mountd"
	"github.com/skillfs/skillfs/internal/vfs"
)

// mountOptions are the mount's flags: mountd's, and --daemon, which runs
// the mount as a child of this command.
type mountOptions struct {
	mountd.Options
	daemon bool
}

func (o *mountOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.ConfigPath, "config", "", "config file (default $XDG_CONFIG_HOME/skillfs/config.json, or .yaml)")
	f.BoolVar(&o.Demo, "demo", false, "mount the embedded demo server instead of the configured ones")
	f.StringVar(&o.CacheDir, "cache-dir", "", "where verified bytes are kept (default $XDG_CACHE_HOME/skillfs)")
	f.BoolVar(&o.Debug, "debug", false, "log FUSE requests and debug messages")
	f.StringVar(&o.LogLevel, "log-level", "info", "debug, info, warn or error")
	f.BoolVar(&o.AllowOther, "allow-other", false, "let other users read the mount (needs user_allow_other in /etc/fuse.conf)")
	f.DurationVar(&o.StartupTimeout, "startup-timeout", 20*time.Second, "how long to wait for servers to list their skills before the mount goes live")
	f.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the daemon to `FILE` (for BENCHMARKS.md)")
	f.StringVar(&o.MemProfile, "memprofile", "", "write a heap profile to `FILE` when unmounting")
	f.DurationVar(&o.StaleRetry, "stale-retry", vfs.DefaultStaleRetry, "how often a failed read may ask a server for a fresh entry of one skill (for tests)")
	f.BoolVar(&o.RequireAll, "require-all", false, "exit with code 5, mounting nothing, when a server fails to start within --startup-timeout")
	f.BoolVar(&o.daemon, "daemon", false, "run in the background: return once the mount is live (exit 0), log to --log-file, write --pid-file")
	f.StringVar(&o.LogFile, "log-file", "", "append logs to `FILE` instead of stderr (with --daemon: $XDG_STATE_HOME/skillfs/<mountpoint>.log); reopened on SIGHUP")
	f.StringVar(&o.PidFile, "pid-file", "", "write the daemon's pid to `FILE` while mounted (with --daemon: $XDG_STATE_HOME/skillfs/<mountpoint>.pid)")
	f.BoolVar(&o.NoNotify, "no-notify", false, "serve as for a kernel without cache notifications, as on macOS (for tests)")
	f.MarkHidden("no-notify")
	f.MarkHidden("stale-retry")
	f.MarkHidden("cpuprofile")
	f.MarkHidden("memprofile")
	f.StringVar(&o.Xattrs, "xattrs", "on", "on: user.skillfs.* attributes on every file; off: none, so `ls -l` asks the daemon nothing per file (faster)")
	f.StringVar(&o.MemoryCache, "memory-cache", "8MiB", "verified bytes kept in memory, on top of the kernel's page cache (e.g. 64MiB; 0 disables)")
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
			if opts.Xattrs != "on" && opts.Xattrs != "off" {
				return usageError(fmt.Errorf("--xattrs %q: write on (the user.skillfs.* attributes) or off (none; ls -l is faster)", opts.Xattrs))
			}
			if rp := mountd.ReadyPipe(); rp != nil {
				// A --daemon child: the parent waits for this line.
				opts.Ready, opts.ReadyPipe = rp, rp
			} else if opts.daemon {
				mnt, err := filepath.Abs(args[0])
				if err != nil {
					return usageError(err)
				}
				return mountd.Daemon(opts.Options, mnt, cmd.OutOrStdout())
			}
			if opts.Ready == nil {
				opts.Ready = cmd.OutOrStdout()
			}
			if opts.LogOut == nil {
				opts.LogOut = cmd.ErrOrStderr()
			}
			opts.Version = versionString()
			return mountd.Run(cmd.Context(), opts.Options, args[0])
		},
	}
	opts.addFlags(cmd)
	return cmd
}
