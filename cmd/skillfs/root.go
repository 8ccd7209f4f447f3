package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "skillfs",
		Short: "Mount the skills MCP servers publish as a read-only, verified directory tree",
		Long: `skillfs connects to the MCP servers in your config and shows each server's
skills (SEP-2640) as a read-only directory tree, one directory per server.
Every byte it serves has been checked against the server's sha256 digests;
nothing is fetched before it is read.`,
		Version:       versionString(),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE:          func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetVersionTemplate("skillfs {{.Version}}\n") // as `skillfs version` prints it
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError(fmt.Errorf("%w (see `%s --help`)", err, c.CommandPath()))
	})
	root.AddCommand(
		newVersionCommand(),
		newServeCommand(),
		newMountCommand(),
		newMCPCommand(),
		newUnmountCommand(),
		newCacheCommand(),
		newConfigCommand(),
	)
	root.AddCommand(newControlCommands()...)
	root.AddCommand(newCatalogCommand(), newIntegrateCommand(), newManCommand())
	// help and completion are added now rather than at Execute, so that
	// they have suggestions, man pages and completions like the others.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	withSuggestions(root)
	withCompletions(root)
	return root
}

// version is set at build time with -ldflags "-X main.version=…"; otherwise
// the module version and the commit recorded by the go command are used.
var version = ""

// versionString is what `skillfs version`, `skillfs --version` and
// status.json report: the module version ("(devel)" for a build from a
// checkout), then the commit, "+dirty" when the tree had local changes, and
// the commit time, when the build recorded them.
func versionString() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	return buildVersion(bi)
}

func buildVersion(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" || strings.Contains(v, rev[:min(12, len(rev))]) {
		return v // a pseudo-version names the commit already
	}
	v += " " + rev[:min(12, len(rev))] + dirty
	if at != "" {
		v += " " + at
	}
	return v
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the skillfs version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "skillfs %s\n", versionString())
			return err
		},
	}
}
