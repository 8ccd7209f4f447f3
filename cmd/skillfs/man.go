package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/skillfs/skillfs/internal/manpage"
)

func newManCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "Write a man page for every command into DIR (skillfs.1, skillfs-mount.1, ...)",
		Long: `Man writes one man page (section 1) per command into DIR, creating DIR if
needed and replacing pages written before: skillfs.1, skillfs-mount.1,
skillfs-cache-list.1 and so on, from the same text as --help. To install
them for yourself:

  skillfs man ~/.local/share/man/man1 && man skillfs-mount

(~/.local/share/man is on man's path when ~/.local/bin is on $PATH; otherwise
add it to $MANPATH.)`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError(fmt.Errorf("%s needs one DIR (see `%s --help`)", cmd.CommandPath(), cmd.CommandPath()))
			}
			return nil
		},
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveFilterDirs
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := manpage.Write(cmd.Root(), args[0], versionString())
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "wrote %d man pages to %s\n", n, args[0])
			return err
		},
	}
}
