package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/control"
	"github.com/skillfs/skillfs/internal/control/wire"
	"github.com/skillfs/skillfs/internal/mcpserve"
	"github.com/skillfs/skillfs/internal/skill"
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
			if opts.logOut == nil {
				opts.logOut = cmd.ErrOrStderr()
			}
			return runMCP(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	o := &opts.mountOptions
	f.StringVar(&o.configPath, "config", "", "config file (default $XDG_CONFIG_HOME/skillfs/config.json, or .yaml)")
	f.BoolVar(&o.demo, "demo", false, "serve the embedded demo server instead of the configured ones")
	f.StringVar(&o.cacheDir, "cache-dir", "", "where verified bytes are kept (default $XDG_CACHE_HOME/skillfs)")
	f.BoolVar(&o.debug, "debug", false, "log debug messages")
	f.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	f.StringVar(&o.logFile, "log-file", "", "append logs to `FILE` instead of stderr")
	f.DurationVar(&o.startupTimeout, "startup-timeout", 20*time.Second, "how long to wait for servers to list their skills before answering the host (the catalog in the instructions is what they listed by then)")
	f.StringVar(&o.memoryCache, "memory-cache", "8MiB", "verified bytes kept in memory (e.g. 64MiB; 0 disables)")
	f.DurationVar(&o.staleRetry, "stale-retry", vfs.DefaultStaleRetry, "how often a failed read may ask a server for a fresh entry of one skill (for tests)")
	f.MarkHidden("stale-retry")
	f.StringVar(&opts.attach, "attach", "auto", "auto: read through a running mount of the same config when there is one; never: always connect to the servers")
	return cmd
}

// runMCP serves the skills on stdio until the host hangs up or ctx ends.
func runMCP(ctx context.Context, opts mcpOptions) error {
	log, _, closeLogs, err := openLogs(&opts.mountOptions)
	if err != nil {
		return err
	}
	defer closeLogs()
	origins, err := loadOrigins(ctx, opts.mountOptions, log)
	if err != nil {
		return err
	}
	defer func() { origins.Close() }()
	origins.Config.SetShared(false)
	root, err := cacheRoot(opts.cacheDir)
	if err != nil {
		return err
	}
	st, err := openStore(opts.mountOptions, root, origins.Config, log)
	if err != nil {
		return err
	}
	origins.IdentityKey = st.IdentityKey
	if opts.attach == "auto" {
		if c := findSameMount(ctx, root, origins.Config, log); c != nil {
			st.Close()
			return serveAttached(ctx, c, log)
		}
	}
	defer st.Close()
	v, stopCore, err := startCore(ctx, opts.mountOptions, origins, st, "", log)
	if err != nil {
		return err
	}
	defer stopCore()
	defer v.Stop()
	if !waitReady(ctx, v, opts.startupTimeout, log) {
		return nil
	}
	srv, err := mcpserve.New(ctx, coreTree{v}, mcpserve.Options{Version: versionString(), Logger: log, Skills: coreTree{v}})
	if err != nil {
		return err
	}
	log.Info("serving MCP on stdio", "servers", liveSummary(v.Consent().Status()))
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
	srv, err := mcpserve.New(ctx, tree, mcpserve.Options{Version: versionString(), Logger: log, Root: mnt, Skills: &mountSkills{c: c}})
	if err != nil {
		return fmt.Errorf("the mount at %s: %w", mnt, err)
	}
	log.Info("serving MCP on stdio, attached to the running mount", "path", mnt)
	return srv.ServeStdio(ctx)
}

// findSameMount returns the directory of a live mount that serves the same
// servers (labels and keyed identities, which cover command, URL, env and
// headers) from the same cache, or "" when there is none.
func findSameMount(ctx context.Context, root string, cfg *config.Config, log *slog.Logger) *control.Client {
	want := originKeys(cfg)
	clients, _ := control.Clients(control.Dirs(root))
	var found []*control.Client
	for _, c := range clients {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		rep, err := c.Status(sctx)
		cancel()
		if err != nil {
			log.Debug("a running mount did not answer; not attaching to it", "path", c.Mountpoint, "err", err)
			continue
		}
		if filepath.Clean(rep.Mount.CacheDir) != filepath.Clean(root) || rep.State == wire.MountStarting {
			continue
		}
		var got []string
		for _, s := range rep.Servers {
			got = append(got, s.Label+"\x00"+s.ID)
		}
		slices.Sort(got)
		if slices.Equal(got, want) {
			found = append(found, c)
		}
	}
	if len(found) == 0 {
		return nil
	}
	slices.SortFunc(found, func(a, b *control.Client) int { return strings.Compare(a.Mountpoint, b.Mountpoint) })
	if len(found) > 1 {
		log.Info("more than one mount serves this config; attaching to the first", "path", found[0].Mountpoint, "mounts", len(found))
	}
	return found[0]
}

// mountSkills are a running mount's placed skills, as its control socket
// describes them (index rows, then each skill's inspection), for the
// SEP-2640 face in attach mode. An answer is kept for mountSkillsFor, so
// that a client paging through skills/list and reading files does not ask
// the mount about every skill for every request.
type mountSkills struct {
	c    *control.Client
	mu   sync.Mutex
	at   time.Time
	last []mcpserve.Skill
}

const mountSkillsFor = 2 * time.Second

func (m *mountSkills) Skills(ctx context.Context) ([]mcpserve.Skill, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last != nil && time.Since(m.at) < mountSkillsFor {
		return m.last, nil
	}
	rows, err := m.c.Skills(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("ask the mount at %s for its skills: %w", m.c.Mountpoint, err)
	}
	out := []mcpserve.Skill{}
	for _, r := range rows {
		if r.State != wire.SkillAvailable && r.State != wire.SkillFailed {
			continue // pending, rejected, removed, and dynamic (unverified)
		}
		ins, err := m.c.Inspect(ctx, wire.SkillRef{Origin: r.Origin, URI: r.URI})
		if err != nil {
			return nil, fmt.Errorf("ask the mount at %s about %s: %w", m.c.Mountpoint, r.URI, err)
		}
		e, err := skill.ParseEntry(ins.Entry)
		if err != nil || len(ins.Files) != len(e.Resources) {
			return nil, fmt.Errorf("the mount at %s describes %s oddly (%v)", m.c.Mountpoint, r.URI, err)
		}
		sk := mcpserve.Skill{Label: r.Origin, Entry: e}
		for i, f := range ins.Files {
			sk.Files = append(sk.Files, f.Path)
			if e.Resources[i].URI == e.URI {
				sk.Path = f.Path
			}
		}
		if sk.Path == "" {
			sk.Path = path.Join(r.Path, "SKILL.md")
		}
		out = append(out, sk)
	}
	m.last, m.at = out, time.Now()
	return out, nil
}

func originKeys(cfg *config.Config) []string {
	var out []string
	for _, o := range cfg.Origins {
		out = append(out, o.Label+"\x00"+o.ID())
	}
	slices.Sort(out)
	return out
}

// coreTree is the mount's core as mcpserve reads it.
type coreTree struct{ v *vfs.Core }

func (t coreTree) Stat(ctx context.Context, p string) (mcpserve.Info, error) {
	a, err := t.v.Stat(ctx, p)
	if err != nil {
		return mcpserve.Info{}, treeErr(err)
	}
	return infoOf(path.Base(p), a), nil
}

func (t coreTree) ReadDir(ctx context.Context, p string) ([]mcpserve.Info, error) {
	ents, err := t.v.ReadDir(ctx, p)
	if err != nil {
		return nil, treeErr(err)
	}
	out := make([]mcpserve.Info, 0, len(ents))
	for _, e := range ents {
		in := mcpserve.Info{Name: e.Name, Dir: e.Kind == vfs.KindDir, Size: -1}
		if !in.Dir {
			// A file's attributes are in memory: no fetch.
			if a, err := t.v.Stat(ctx, path.Join(p, e.Name)); err == nil {
				in = infoOf(e.Name, a)
			}
		}
		out = append(out, in)
	}
	return out, nil
}

func (t coreTree) ReadFile(ctx context.Context, p string) ([]byte, error) {
	b, err := t.v.ReadFile(ctx, p)
	if err != nil {
		return nil, treeErr(err)
	}
	return b, nil
}

// Skills are the skills the core places, for the SEP-2640 face.
func (t coreTree) Skills(context.Context) ([]mcpserve.Skill, error) {
	placed := t.v.PlacedSkills()
	out := make([]mcpserve.Skill, 0, len(placed))
	for _, p := range placed {
		out = append(out, mcpserve.Skill{Label: p.Label, Path: p.Path, Entry: p.Entry, Files: p.Files})
	}
	return out, nil
}

func infoOf(name string, a vfs.Attr) mcpserve.Info {
	in := mcpserve.Info{Name: name, Dir: a.Kind == vfs.KindDir, Size: a.Size}
	if in.Dir || a.Volatile {
		in.Size = -1
	}
	return in
}

// treeErr maps the core's errors to a Tree's.
func treeErr(err error) error {
	switch {
	case errors.Is(err, vfs.ErrNotExist):
		return fs.ErrNotExist
	case errors.Is(err, vfs.ErrNotDir):
		return mcpserve.ErrNotDir
	case errors.Is(err, vfs.ErrIsDir):
		return mcpserve.ErrIsDir
	}
	return err
}
