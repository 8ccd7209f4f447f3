package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/skillfs/skillfs/internal/control"
)

// reloadHook answers `skillfs reload` for a mount: the control endpoint
// may listen before the mount is live, and a reload is refused until it is.
type reloadHook struct{ m atomic.Pointer[running] }

// reload is SIGHUP's reload of the config through the control endpoint,
// answered when it is done: what changed, or why nothing did. Like SIGHUP,
// a reload that changed the config lists every server again.
func (h *reloadHook) reload(ctx context.Context) (control.ReloadResult, error) {
	m := h.m.Load()
	if m == nil {
		return control.ReloadResult{}, errors.New("the mount is starting; try again once it is live")
	}
	if m.origins.Path == "" {
		return control.ReloadResult{}, errors.New("this mount serves the embedded demo; there is no config file to re-read")
	}
	// A client that goes away does not abandon a reload half applied; a
	// mount that stops does (Apply refuses then).
	r, err := m.applyConfig(context.WithoutCancel(ctx), "skillfs reload")
	var ce configError
	switch {
	case errors.As(err, &ce):
		return control.ReloadResult{}, fmt.Errorf("%s has errors; the mount keeps serving the servers it had: %v", m.origins.Path, ce.error)
	case err != nil:
		return control.ReloadResult{}, err
	}
	m.log.Info("skillfs reload: listing every server again")
	m.v.Refresh()
	return control.ReloadResult{Config: m.origins.Path, Added: nonNil(r.Added), Removed: nonNil(r.Removed), Changed: nonNil(r.Changed)}, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

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
			fmt.Fprintf(w, "%-8s %s\n", part.what, cell(l, 0))
		}
	}
	return nil
}
