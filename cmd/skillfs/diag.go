package main

import (
	"context"
	"fmt"
	"time"

	"github.com/skillfs/skillfs/internal/control"
	"github.com/skillfs/skillfs/internal/report"
)

// The daemon's own diagnostics in `skillfs status` and `skillfs list`:
// how a stdio server ended, the end of its stderr, and why a server has no
// skills to list.

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
			why += " (" + report.Plural(s.FailedStarts, "failed start") + " in a row)"
		}
		if s.LastError != "" {
			why += ": " + report.Cell(s.LastError, 0)
		}
		if s.Exit != nil {
			why += fmt.Sprintf("; it exited %s ago (%s): `skillfs status` shows the end of its stderr", time.Since(s.Exit.At).Round(time.Second), report.Cell(s.Exit.Status, 0))
		}
		return why
	}
	return fmt.Sprintf("%s: no skills", label)
}
