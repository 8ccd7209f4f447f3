package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillfs/skillfs/internal/integrate"
	"github.com/skillfs/skillfs/internal/mcpserve"
	"github.com/skillfs/skillfs/internal/render"
	"github.com/skillfs/skillfs/internal/statefile"
)

// `skillfs integrate HOST` puts the catalog where an agent host reads it
// (see the README, "Use the skills in your agent"). Without --write it
// prints what it would add and where; --write adds it, idempotently;
// --remove takes every part of skillfs's for that host out again. The
// file edits, their records and the rules they keep are package
// internal/integrate's; this face says which files each host reads and
// what goes in them.

// integrateHosts are the hosts `skillfs integrate` knows, as named on its
// command line.
var integrateHosts = []string{"claude-code", "codex", "gemini", "cursor", "generic"}

// snapshotCatalogBytes bounds the catalog written into a file that cannot
// import another (AGENTS.md, GEMINI.md, a Cursor rule): Codex cuts its
// combined instructions at 32 KiB.
const snapshotCatalogBytes = 16 << 10

type integrateOptions struct {
	mount, cacheDir, project string
	write, remove, force     bool
	claudeImport             bool
	// mcp registers `skillfs mcp` as the host's MCP server instead of
	// pointing it at a mount; configPath is the --config it is given.
	mcp        bool
	configPath string
}

func newIntegrateCommand() *cobra.Command {
	var o integrateOptions
	cmd := &cobra.Command{
		Use:   "integrate HOST [--write | --remove]",
		Short: "Show, add or remove the setup that puts the skills catalog in an agent host's context (claude-code, codex, gemini, cursor, generic)",
		Long: `Integrate sets up an agent host to see the mount's skills and read them:
without --write it prints what it would add and to which file; --write adds
it (again: nothing changes, or it is brought up to date); --remove takes out
every part of skillfs's for the host and nothing else.

  claude-code  in ~/.claude/settings.json ($CLAUDE_CONFIG_DIR/settings.json):
               a SessionStart hook running this binary, by its absolute
               path, as BIN catalog --hook claude-code --mount MOUNT, and
               the allow rule Read(//MOUNT/**) so Claude Code may read the
               mount; with --import, a line @MOUNT/.skillfs/catalog.md in
               CLAUDE.md beside it instead of the hook (the rule stays)
  codex        the catalog in a marked block of ~/.codex/AGENTS.md
               ($CODEX_HOME/AGENTS.md); run --write again when skills change
  gemini       the catalog in a marked block of ~/.gemini/GEMINI.md, and
               MOUNT in context.includeDirectories of ~/.gemini/settings.json
               so read_file may read it; run --write again when skills change
  cursor       the rule .cursor/rules/skillfs.mdc (alwaysApply) in the
               project (--project DIR, default the current directory) with
               the catalog; run --write again when skills change
  generic      prints the catalog to paste into a system prompt

With --mcp (claude-code, codex, gemini, cursor) no mount is needed: the host is
given skillfs mcp as an MCP server named "skillfs", run as BIN mcp (with
--config and --cache-dir when given), which serves the same verified skills
through its tools, list_skill_files and read_skill_file, and the catalog in
its instructions:

  claude-code  mcpServers.skillfs in ~/.claude.json ($CLAUDE_CONFIG_DIR/.claude.json,
               user scope), and the allow rules mcp__skillfs__list_skill_files
               and mcp__skillfs__read_skill_file in settings.json
  codex        a marked block with [mcp_servers.skillfs] at the end of
               ~/.codex/config.toml ($CODEX_HOME/config.toml)
  gemini       mcpServers.skillfs in ~/.gemini/settings.json, trust: true
  cursor       mcpServers.skillfs in ~/.cursor/mcp.json

One form at a time: a --write with --mcp takes out the mount's setup of the
host, and one without takes out the MCP server. --remove takes out both.

--remove puts a file back byte for byte only when it is exactly as skillfs
left it and nobody else wrote it since skillfs first did; otherwise it takes
out skillfs's block, hook, rule or directory entry and keeps the rest. Each
write is synced to disk and refused when the file changed while skillfs was
writing it. It never writes inside a skills or commands folder; a target
that is a symlink resolving outside your home directory is refused unless
--force. The mount is the one at --mount DIR, or the only one running.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 || !slices.Contains(integrateHosts, args[0]) {
				return usageError(fmt.Errorf("integrate: name one host of %s (see `skillfs integrate --help`)", strings.Join(integrateHosts, ", ")))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.checkFlags(args[0]); err != nil {
				return err
			}
			return runIntegrate(cmd.Context(), cmd.OutOrStdout(), args[0], o)
		},
	}
	o.addFlags(cmd)
	return cmd
}

// addFlags binds integrate's flags to o.
func (o *integrateOptions) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&o.write, "write", false, "add the snippet to the host's file")
	f.BoolVar(&o.remove, "remove", false, "take every part of skillfs's for the host out of its files")
	f.BoolVar(&o.force, "force", false, "write through a symlink that resolves outside the home directory")
	f.BoolVar(&o.claudeImport, "import", false, "claude-code: import .skillfs/catalog.md in CLAUDE.md instead of a hook")
	f.StringVar(&o.mount, "mount", "", "the mount (`DIR`); needed when more than one is running")
	f.StringVar(&o.cacheDir, "cache-dir", "", "the mount's --cache-dir, where its socket is when $XDG_RUNTIME_DIR is not set")
	f.StringVar(&o.project, "project", "", "cursor: the project `DIR` (default the current directory)")
	f.BoolVar(&o.mcp, "mcp", false, "register `skillfs mcp` as the host's MCP server (no mount needed) instead of pointing the host at a mount")
	f.StringVar(&o.configPath, "config", "", "with --mcp: the config `FILE` skillfs mcp is given (default: its own default)")
}

// checkFlags refuses, as a usage error, flags that do not go together or
// do not go with host.
func (o integrateOptions) checkFlags(host string) error {
	if o.write && o.remove {
		return usageError(errors.New("integrate: --write or --remove, not both"))
	}
	if o.claudeImport && host != "claude-code" {
		return usageError(errors.New("integrate: --import is for claude-code"))
	}
	if o.mcp && (o.claudeImport || !slices.Contains(integrate.MCPHosts, host)) {
		return usageError(fmt.Errorf("integrate: --mcp is for %s, without --import", strings.Join(integrate.MCPHosts, ", ")))
	}
	if o.configPath != "" && !o.mcp {
		return usageError(errors.New("integrate: --config is the config `skillfs mcp` is given: it goes with --mcp"))
	}
	return nil
}

// integrationFiles are the files host reads and what skillfs puts in each
// (no parts when removing), as integrate.Files makes them from o.
func integrationFiles(ctx context.Context, host string, o integrateOptions, home string) ([]integrate.File, error) {
	claudeDir := os.Getenv("CLAUDE_CONFIG_DIR")
	if host == "claude-code" && claudeDir != "" && !filepath.IsAbs(claudeDir) {
		return nil, usageError(fmt.Errorf("integrate: CLAUDE_CONFIG_DIR=%s is not an absolute path: Claude Code's settings folder cannot be found from it", claudeDir))
	}
	project := o.project
	if host == "cursor" {
		if project == "" {
			wd, err := os.Getwd()
			if err != nil {
				return nil, err
			}
			project = wd
		}
		abs, err := filepath.Abs(project)
		if err != nil {
			return nil, err
		}
		project = abs
	}
	return integrate.Files(integrate.Setup{
		Host: host, Home: home, ClaudeConfigDir: claudeDir, CodexHome: os.Getenv("CODEX_HOME"), Project: project,
		Tools:  []string{mcpserve.ToolList, mcpserve.ToolRead},
		Remove: o.remove, MCP: o.mcp, Import: o.claudeImport,
		Mount:    func() (string, error) { return o.mountPath(ctx) },
		Snapshot: func() (string, string, error) { return o.snapshot(ctx, host) },
		Hook:     o.hookCommand,
		Command:  o.mcpCommand,
	})
}

func runIntegrate(ctx context.Context, out io.Writer, host string, o integrateOptions) error {
	if host == "generic" {
		if o.write || o.remove {
			return usageError(errors.New("integrate generic: there is no file to write; paste what it prints into your system prompt"))
		}
		cat, _, err := o.catalog(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(out, "# Paste this into your agent's system prompt (it lists the skills that can be loaded now):")
		fmt.Fprintln(out)
		_, err = out.Write(cat)
		return err
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return fmt.Errorf("integrate: find the home directory: %w", err)
	}
	files, err := integrationFiles(ctx, host, o, home)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := integrate.CheckTarget(f.Path, home, o.force); err != nil {
			return err
		}
	}
	if !o.write && !o.remove {
		return showIntegration(out, host, files)
	}
	dir, err := statefile.Dir()
	if err != nil {
		return err
	}
	recs, err := integrate.OpenRecords(filepath.Join(dir, "integrate"))
	if err != nil {
		return err
	}
	changed := false
	for _, f := range files {
		r, err := integrate.Apply(recs, f)
		if err != nil {
			return err
		}
		// The form not chosen (CLAUDE.md for the hook) says nothing
		// when there was nothing of skillfs's in it.
		if !r.Changed && o.write && len(f.Parts) == 0 {
			continue
		}
		changed = changed || r.Changed
		fmt.Fprintf(out, "skillfs: %s\n", r.Message)
	}
	if o.write && changed {
		fmt.Fprintf(out, "skillfs: undo with `skillfs integrate %s --remove`\n", host)
	}
	return nil
}

// showIntegration prints what --write would add, file by file.
func showIntegration(out io.Writer, host string, files []integrate.File) error {
	for _, f := range files {
		if len(f.Parts) == 0 {
			continue
		}
		switch f.Kind {
		case integrate.JSON, integrate.TOML:
			b, err := integrate.Preview(f)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "# Add this to %s, keeping what is there (or run `skillfs integrate %s --write`):\n\n%s\n", f.Path, host, b)
		case integrate.Whole:
			fmt.Fprintf(out, "# Write this as %s (or run `skillfs integrate %s --write`):\n\n%s\n", f.Path, host, f.Parts[0].Block)
		default:
			fmt.Fprintf(out, "# Add this to %s (or run `skillfs integrate %s --write`):\n\n%s\n", f.Path, host, integrate.Block(host, f.Parts[0].Block))
		}
	}
	return nil
}

// hookCommand is the SessionStart hook's command: this binary by its
// absolute path, so that the host's PATH cannot break it, and the mount
// by --mount, so that a second mount cannot.
func (o integrateOptions) hookCommand(mnt string) (string, error) {
	bin, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("integrate: find this binary's path for the hook: %w", err)
	}
	if real, err := filepath.EvalSymlinks(bin); err == nil {
		bin = real
	}
	cmd := integrate.ShellQuote(bin) + " catalog --hook claude-code --mount " + integrate.ShellQuote(mnt)
	if o.cacheDir != "" {
		abs, err := filepath.Abs(o.cacheDir)
		if err != nil {
			return "", err
		}
		cmd += " --cache-dir " + integrate.ShellQuote(abs)
	}
	return cmd, nil
}

// mountPath is the mount's absolute path: --mount, or the running one's.
func (o integrateOptions) mountPath(ctx context.Context) (string, error) {
	if o.mount != "" {
		return filepath.Abs(o.mount)
	}
	c, err := (&controlOptions{cacheDir: o.cacheDir}).client()
	if err != nil {
		return "", fmt.Errorf("%w; or name the mount with --mount DIR", err)
	}
	return c.Mountpoint, nil
}

// catalog is the running mount's catalog, as a snapshot for a file, and
// the mount's path.
func (o integrateOptions) catalog(ctx context.Context) ([]byte, string, error) {
	c, err := (&controlOptions{cacheDir: o.cacheDir, mount: o.mount}).client()
	if err != nil {
		return nil, "", err
	}
	b, err := catalogOf(ctx, c, render.FormatXML, snapshotCatalogBytes)
	return b, c.Mountpoint, err
}

// snapshot is the catalog as the text of a file that cannot import
// another, with where the live one is.
func (o integrateOptions) snapshot(ctx context.Context, host string) (string, string, error) {
	cat, mnt, err := o.catalog(ctx)
	if err != nil {
		return "", "", err
	}
	return string(cat) + "\nThe live catalog is " + filepath.Join(mnt, render.MetaDir, render.CatalogFile) +
		"; this copy was written by `skillfs integrate " + host + " --write`, run again when skills change.\n", mnt, nil
}

// mcpCommand is how a host runs skillfs mcp: this binary by its absolute
// path, with --config and --cache-dir made absolute when given.
func (o integrateOptions) mcpCommand() (string, []string, error) {
	bin, err := os.Executable()
	if err != nil {
		return "", nil, fmt.Errorf("integrate: find this binary's path: %w", err)
	}
	if real, err := filepath.EvalSymlinks(bin); err == nil {
		bin = real
	}
	args := []string{"mcp"}
	for _, f := range []struct{ flag, val string }{{"--config", o.configPath}, {"--cache-dir", o.cacheDir}} {
		if f.val == "" {
			continue
		}
		abs, err := filepath.Abs(f.val)
		if err != nil {
			return "", nil, err
		}
		args = append(args, f.flag, abs)
	}
	return bin, args, nil
}
