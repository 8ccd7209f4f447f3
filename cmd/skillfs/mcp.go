package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillfs/skillfs/internal/control"
	"github.com/skillfs/skillfs/internal/mcpserve"
	"github.com/skillfs/skillfs/internal/mountd"
	"github.com/skillfs/skillfs/internal/vfs"
)

// mcpOptions is what `skillfs mcp` takes from its command line: the
// mount's config, cache and log flags, and how to find a running mount.
type mcpOptions struct {
	mountOptions
	// attach is "auto" (attach to a running mount of the same config when
	// there is one) or "never".
	attach string
}

func newMCPCommand() *cobra.Command {
	var opts mcpOptions
	cmd := &cobra.Command{
		Use:   "mcp [flags]",
		Short: "Serve the configured servers' verified skills as one stdio MCP server, for hosts that cannot mount",
		Long: `mcp is an MCP server on stdin/stdout that an agent host launches. It gives the
host the skills a mount would show, through two tools, with the same guarantees:

  list_skill_files(path)  list a directory: LABEL/skill, "" for the root
  read_skill_file(path)   a file's verified bytes: LABEL/skill/SKILL.md

Paths are the mount's. The server's instructions carry the catalog
(.skillfs/catalog.md): every skill the host may load now, naming its server.
Results are bounded (200 entries per listing, 256 KiB per read, with offset
paging); a file that fails verification is a tool error, never its bytes.
Nothing runs a skill's script.

It speaks SEP-2640 too, for skill-aware clients: skills/list, skills/get,
resources/read and resources/directory/read of the same skills under
skill://LABEL/..., each entry its origin's (frontmatter, sizes, digests),
every byte verified.

It uses the same config, cache, approvals and verification as the mount. When a
mount of the same config and cache is running (the same servers, by label and
identity), mcp reads through that mount's directory: one cache, one consent, no
second connection to each server (--attach never turns this off). Otherwise it
connects to the servers itself, as a mount would, without mounting anything;
skills waiting for approval then stay absent until a mount approves them.

Stdout carries only the MCP protocol; logs go to stderr or --log-file.
Register it with a host: skillfs integrate claude-code --mcp --write.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 {
				return usageError(fmt.Errorf("mcp takes no arguments, got %d (it serves on stdin/stdout)", len(args)))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.attach != "auto" && opts.attach != "never" {
				return usageError(fmt.Errorf("--attach %q: write auto (a running mount of the same config) or never", opts.attach))
			}
			if opts.LogOut == nil {
				opts.LogOut = cmd.ErrOrStderr()
			}
			return runMCP(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	o := &opts.mountOptions
	f.StringVar(&o.ConfigPath, "config", "", "config file (default $XDG_CONFIG_HOME/skillfs/config.json, or .yaml)")
	f.BoolVar(&o.Demo, "demo", false, "serve the embedded demo server instead of the configured ones")
	f.StringVar(&o.CacheDir, "cache-dir", "", "where verified bytes are kept (default $XDG_CACHE_HOME/skillfs)")
	f.BoolVar(&o.Debug, "debug", false, "log debug messages")
	f.StringVar(&o.LogLevel, "log-level", "info", "debug, info, warn or error")
	f.StringVar(&o.LogFile, "log-file", "", "append logs to `FILE` instead of stderr")
	f.DurationVar(&o.StartupTimeout, "startup-timeout", 20*time.Second, "how long to wait for servers to list their skills before answering the host (the catalog in the instructions is what they listed by then)")
	f.StringVar(&o.MemoryCache, "memory-cache", "8MiB", "verified bytes kept in memory (e.g. 64MiB; 0 disables)")
	f.DurationVar(&o.StaleRetry, "stale-retry", vfs.DefaultStaleRetry, "how often a failed read may ask a server for a fresh entry of one skill (for tests)")
	f.MarkHidden("stale-retry")
	f.StringVar(&opts.attach, "attach", "auto", "auto: read through a running mount of the same config when there is one; never: always connect to the servers")
	return cmd
}

// runMCP serves the skills on stdio until the host hangs up or ctx ends.
func runMCP(ctx context.Context, opts mcpOptions) error {
	opts.Version = versionString()
	log, _, closeLogs, err := mountd.OpenLogs(&opts.mountOptions.Options)
	if err != nil {
		return err
	}
	defer closeLogs()
	origins, err := mountd.LoadOrigins(ctx, opts.mountOptions.Options, log)
	if err != nil {
		return err
	}
	defer func() { origins.Close() }()
	origins.Config.SetShared(false)
	root, err := mountd.CacheRoot(opts.CacheDir)
	if err != nil {
		return err
	}
	st, err := mountd.OpenStore(opts.mountOptions.Options, root, origins.Config, log)
	if err != nil {
		return err
	}
	origins.IdentityKey = st.IdentityKey
	if opts.attach == "auto" {
		if c := mcpserve.FindSameMount(ctx, root, origins.Config, log); c != nil {
			st.Close()
			return serveAttached(ctx, c, log)
		}
	}
	defer st.Close()
	v, stopCore, err := mountd.StartCore(ctx, opts.mountOptions.Options, origins, st, "", log)
	if err != nil {
		return err
	}
	defer stopCore()
	defer v.Stop()
	if !mountd.WaitReady(ctx, v, opts.StartupTimeout, log) {
		return nil
	}
	srv, err := mcpserve.New(ctx, mcpserve.CoreTree{V: v}, mcpserve.Options{Version: versionString(), Logger: log, Skills: mcpserve.CoreTree{V: v}})
	if err != nil {
		return err
	}
	log.Info("serving MCP on stdio", "servers", mountd.LiveSummary(v.Consent().Status()))
	return srv.ServeStdio(ctx)
}

// serveAttached serves the tree of the mount c controls by reading its
// files, and its skills' entries from its control socket.
func serveAttached(ctx context.Context, c *control.Client, log *slog.Logger) error {
	mnt := c.Mountpoint
	tree, err := mcpserve.OpenDirTree(mnt)
	if err != nil {
		return err
	}
	defer tree.Close()
	srv, err := mcpserve.New(ctx, tree, mcpserve.Options{Version: versionString(), Logger: log, Root: mnt, Skills: &mcpserve.MountSkills{C: c}})
	if err != nil {
		return fmt.Errorf("the mount at %s: %w", mnt, err)
	}
	log.Info("serving MCP on stdio, attached to the running mount", "path", mnt)
	return srv.ServeStdio(ctx)
}
