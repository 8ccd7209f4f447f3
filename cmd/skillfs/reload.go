package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/skillfs/skillfs/internal/control"
	"github.com/skillfs/skillfs/internal/report"
)

func newReloadCommand() *cobra.Command {
	var opts controlOptions
	return controlCommand("reload", "Re-read a running mount's config and apply it (as SIGHUP), printing what changed",
		`Reload asks a running mount to re-read its config file and apply it, as
SIGHUP does: servers added are started, servers removed leave the tree,
servers whose entry changed are started again, and every server lists its
skills again. It prints the servers added, removed and changed.

A config with errors changes nothing: the mount keeps serving the servers it
had, the error is printed and shown by `+"`skillfs status`"+` until a reload
succeeds, and the command exits 1.

`+findHelp, argsBetween(0, 0, "takes no arguments"), &opts,
		func(ctx context.Context, c *control.Client, _ []string) error {
			r, err := c.Reload(ctx)
			if err != nil {
				return err // exit 1: the config's errors, or why the mount could not reload
			}
			if opts.json {
				return opts.printJSON(r)
			}
			return printReload(opts.out, r)
		})
}

func printReload(w io.Writer, r control.ReloadResult) error {
	fmt.Fprintf(w, "reloaded %s\n", r.Config)
	if len(r.Added)+len(r.Removed)+len(r.Changed) == 0 {
		_, err := fmt.Fprintln(w, "no server changed")
		return err
	}
	for _, part := range []struct {
		what   string
		labels []string
	}{{"added", r.Added}, {"removed", r.Removed}, {"changed", r.Changed}} {
		for _, l := range part.labels {
			fmt.Fprintf(w, "%-8s %s\n", part.what, report.Cell(l, 0))
		}
	}
	return nil
}
