package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/skillfs/skillfs/internal/control"
	"github.com/skillfs/skillfs/internal/mountd"
)

// The daemon's own diagnostics in `skillfs status` and `skillfs list`:
// how a stdio server ended, the end of its stderr, and why a server has no
// skills to list.

// printExits writes, below the status table, each server that failed to
// start or ended on its own: how many starts failed in a row, its exit
// status and the last lines of its stderr. The lines come escaped from
// the mount (and are escaped again here, which changes nothing in them);
// each is indented behind "  | ", so none can pass for a line of skillfs's
// own.
func printExits(w io.Writer, st control.StatusReport) {
	for _, s := range st.Servers {
		if s.Exit == nil && s.FailedStarts == 0 {
			continue
		}
		var what []string
		if x := s.Exit; x != nil {
			what = append(what, fmt.Sprintf("exited %s ago (%s)", time.Since(x.At).Round(time.Second), cell(x.Status, 0)))
		}
		if s.FailedStarts > 0 {
			what = append(what, mountd.Plural(s.FailedStarts, "failed start")+" in a row")
		} else if s.State == "connected" || s.State == "no-skills" {
			what = append(what, "connected again since")
		}
		fmt.Fprintf(w, "\n%s  %s\n", s.Label, strings.Join(what, "; "))
		x := s.Exit
		if x == nil {
			continue
		}
		if len(x.Stderr) == 0 {
			fmt.Fprintln(w, "  it wrote nothing to stderr")
			continue
		}
		note := ""
		if x.StderrDropped > 0 {
			note = fmt.Sprintf("; %d earlier not kept", x.StderrDropped)
		}
		fmt.Fprintf(w, "  the last %s of its stderr (the server's own output, escaped%s):\n", mountd.Plural(len(x.Stderr), "line"), note)
		for _, line := range x.Stderr {
			fmt.Fprintf(w, "  | %s\n", cell(line, 0))
		}
	}
}

// printStderrWarnings writes, below the status table, each server whose
// stderr held warnings (wire.ServerStderr says which lines are): how many
// of how many lines, and the last of them, escaped and indented as in
// printExits. A skill the server itself refused is only ever named here:
// the server did not list it, so the mount has nothing to show.
func printStderrWarnings(w io.Writer, st control.StatusReport) {
	for _, s := range st.Servers {
		e := s.Stderr
		if e == nil || e.Warnings == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s  %s on stderr, of %s\n", s.Label, mountd.Plural(e.Warnings, "warning"), mountd.Plural(e.Lines, "line"))
		fmt.Fprintf(w, "  the last %s (the server's own output, escaped):\n", mountd.Plural(len(e.LastWarnings), "warning"))
		for _, line := range e.LastWarnings {
			fmt.Fprintf(w, "  | %s\n", cell(line, 0))
		}
	}
}

// emptyListNote says why `skillfs list LABEL` has no skills to show: the
// server's state and its last error, rather than a bare empty table.
func emptyListNote(ctx context.Context, c *control.Client, label string) string {
	st, err := c.Status(ctx)
	if err != nil {
		return fmt.Sprintf("%s: no skills", label)
	}
	for _, s := range st.Servers {
		if s.Label != label {
			continue
		}
		switch {
		case s.State == "connected" && s.LastError == "":
			return fmt.Sprintf("%s: no skills: the server is connected and lists none", label)
		case s.State == "no-skills":
			return fmt.Sprintf("%s: no skills: the server does not declare the skills extension", label)
		}
		why := fmt.Sprintf("%s: no skills: the server is %s", label, s.State)
		if s.FailedStarts > 0 {
			why += " (" + mountd.Plural(s.FailedStarts, "failed start") + " in a row)"
		}
		if s.LastError != "" {
			why += ": " + cell(s.LastError, 0)
		}
		if s.Exit != nil {
			why += fmt.Sprintf("; it exited %s ago (%s): `skillfs status` shows the end of its stderr", time.Since(s.Exit.At).Round(time.Second), cell(s.Exit.Status, 0))
		}
		return why
	}
	return fmt.Sprintf("%s: no skills", label)
}
