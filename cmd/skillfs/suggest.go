package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// suggestDistance is how many edits away a command name may be to be
// suggested for a mistyped one (`skillfs mout` → mount); a name the typed
// word starts (`skillfs stat` → status) is suggested too.
const suggestDistance = 2

// withSuggestions makes every command that has subcommands refuse a word
// that names none of them, as a usage error (exit 2) that suggests the
// nearest names. Cobra does this itself only for the root and only when
// the root leaves Args unset; skillfs's root took any arguments (to say
// "unknown command" itself) and so suggested nothing, and a group such as
// `skillfs cache` printed its help and exited 0 for `skillfs cache lst`.
func withSuggestions(cmd *cobra.Command) {
	if cmd.HasSubCommands() {
		cmd.SuggestionsMinimumDistance = suggestDistance
		cmd.Args = unknownSubcommand
		if !cmd.Runnable() {
			cmd.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		}
	}
	for _, c := range cmd.Commands() {
		withSuggestions(c)
	}
}

// unknownSubcommand is the Args of a command that has subcommands: no
// argument is its help, anything else names no subcommand.
func unknownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		b.WriteString("\n\nDid you mean this?\n")
		for _, name := range s {
			b.WriteString("    " + name + "\n")
		}
		b.WriteString("\n")
	} else {
		b.WriteString(" ")
	}
	fmt.Fprintf(&b, "(see `%s --help`)", cmd.CommandPath())
	return usageError(fmt.Errorf("%s", b.String()))
}
