package main

import (
	"fmt"
	"runtime/debug"

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
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError(fmt.Errorf("unknown command %q (see `skillfs --help`)", args[0]))
			}
			return cmd.Help()
		},
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError(fmt.Errorf("%w (see `%s --help`)", err, c.CommandPath()))
	})
	root.AddCommand(
		newVersionCommand(),
		newServeCommand(),
		newMountCommand(),
		newUnmountCommand(),
		newCacheCommand(),
		newConfigCommand(),
	)
	root.AddCommand(newControlCommands()...)
	return root
}

// version is set at build time with -ldflags "-X main.version=…"; otherwise
// the module version recorded by the go command is used.
var version = ""

func versionString() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
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
