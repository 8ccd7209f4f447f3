package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/skillfs/skillfs/internal/control"
)

func Status(w io.Writer, st control.StatusReport) error {
	fmt.Fprintf(w, "mount    %s (pid %d, up %s)\n", st.Mount.Path, st.Mount.PID, st.Uptime)
	fmt.Fprintf(w, "cache    %s (%s)\n", st.Mount.CacheDir, HumanBytes(st.CacheBytes))
	if c := st.Cache; c.HeldOverMaxSize > 0 {
		fmt.Fprintf(w, "         over cache.max_size %s: the files mounts and approvals hold take %s and are kept\n", HumanBytes(c.MaxSize), HumanBytes(c.HeldOverMaxSize))
	}
	fmt.Fprintf(w, "version  %s\n", st.Version)
	if st.State == control.MountStarting {
		fmt.Fprintf(w, "state    %s\n", StartingLine(st))
	}
	if r := st.Reload; r != nil {
		fmt.Fprintf(w, "reload   FAILED %s ago, serving the servers as they were: %s\n", time.Since(r.At).Round(time.Second), Cell(r.Error, 0))
	}
	fmt.Fprintln(w)
	tw := NewTable(w)
	fmt.Fprintln(tw, "SERVER\tSTATE\tPROTOCOL\tAVAILABLE\tPENDING\tFAILED\tREJECTED\tFETCHED/BUDGET\tLAST ERROR")
	for _, s := range st.Servers {
		budget := "unlimited"
		if s.Budget > 0 {
			budget = HumanBytes(s.Budget)
		}
		lastErr := "-"
		if s.LastError != "" {
			lastErr = fmt.Sprintf("%s ago: %s", time.Since(s.LastErrorAt).Round(time.Second), Cell(s.LastError, 100))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s / %s\t%s\n", s.Label, s.State, Cell(s.Protocol, 0),
			s.Available, s.Pending, s.Failed, s.Rejected, HumanBytes(s.BytesFetched), budget, lastErr)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	Exits(w, st)
	StderrWarnings(w, st)
	return PendingWhy(w, st.Servers)
}

// StartingLine is status's line for a mount that is starting: how many
// servers have listed, and the skills so far.
func StartingLine(st control.StatusReport) string {
	listed, skills := 0, 0
	for _, s := range st.Servers {
		if s.State != "connecting" {
			listed++
		}
		skills += s.Skills
	}
	return fmt.Sprintf("starting: %d of %d servers listed (%d skills so far); the tree is mounted once every server has listed or --startup-timeout passes", listed, len(st.Servers), skills)
}

// Exits writes, below the status table, each server that failed to
// start or ended on its own: how many starts failed in a row, its exit
// status and the last lines of its stderr. The lines come escaped from
// the mount (and are escaped again here, which changes nothing in them);
// each is indented behind "  | ", so none can pass for a line of skillfs's
// own.
func Exits(w io.Writer, st control.StatusReport) {
	for _, s := range st.Servers {
		if s.Exit == nil && s.FailedStarts == 0 {
			continue
		}
		var what []string
		if x := s.Exit; x != nil {
			what = append(what, fmt.Sprintf("exited %s ago (%s)", time.Since(x.At).Round(time.Second), Cell(x.Status, 0)))
		}
		if s.FailedStarts > 0 {
			what = append(what, Plural(s.FailedStarts, "failed start")+" in a row")
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
		fmt.Fprintf(w, "  the last %s of its stderr (the server's own output, escaped%s):\n", Plural(len(x.Stderr), "line"), note)
		for _, line := range x.Stderr {
			fmt.Fprintf(w, "  | %s\n", Cell(line, 0))
		}
	}
}

// StderrWarnings writes, below the status table, each server whose
// stderr held warnings (wire.ServerStderr says which lines are): how many
// of how many lines, and the last of them, escaped and indented as in
// Exits. A skill the server itself refused is only ever named here:
// the server did not list it, so the mount has nothing to show.
func StderrWarnings(w io.Writer, st control.StatusReport) {
	for _, s := range st.Servers {
		e := s.Stderr
		if e == nil || e.Warnings == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s  %s on stderr, of %s\n", s.Label, Plural(e.Warnings, "warning"), Plural(e.Lines, "line"))
		fmt.Fprintf(w, "  the last %s (the server's own output, escaped):\n", Plural(len(e.LastWarnings), "warning"))
		for _, line := range e.LastWarnings {
			fmt.Fprintf(w, "  | %s\n", Cell(line, 0))
		}
	}
}

// PendingWhy writes, under status's table, why each server's pending
// skills wait.
func PendingWhy(w io.Writer, servers []control.ServerStatus) error {
	order := []struct{ why, text string }{
		{control.WhyNew, "new"},
		{control.WhyContent, "content changed"},
		{control.WhyFrontmatter, "frontmatter changed"},
		{control.WhyServerEntry, "server entry changed"},
	}
	for _, s := range servers {
		if len(s.PendingWhy) == 0 {
			continue
		}
		var parts []string
		for _, o := range order {
			if n := s.PendingWhy[o.why]; n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, o.text))
			}
		}
		fmt.Fprintf(w, "\npending  %s: %s (see `skillfs pending`)", s.Label, strings.Join(parts, ", "))
		if s.PendingWhy[control.WhyServerEntry] > 0 {
			fmt.Fprintf(w, "; %s", ServerEntryChanged)
		}
		fmt.Fprintln(w)
	}
	return nil
}
