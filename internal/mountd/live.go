package mountd

import (
	"fmt"
	"strings"

	"github.com/skillfs/skillfs/internal/control"
	"github.com/skillfs/skillfs/internal/exitcode"
	"github.com/skillfs/skillfs/internal/report"
	"github.com/skillfs/skillfs/internal/vfs"
	"github.com/skillfs/skillfs/resolver"
)

// LiveSummary is the rest of the ready line, after "skillfs: mounted DIR: ":
// how many servers are in each state once the startup wait is over, how
// many skills the connected ones list, and why each failed or offline one
// is not connected.
//
//	3 servers, 2 connected (41 skills), 1 failed: acme: command "acme-mcp" not found
func LiveSummary(st vfs.Status) string {
	var (
		connected, skills    int
		noSkills, connecting int
		failed, offline      []string
	)
	for _, o := range st.Origins {
		switch state := resolver.State(o.State); {
		case state == resolver.StateConnecting && o.FailedStarts > 0:
			// Between two attempts: it failed to start, and is retried.
			failed = append(failed, o.Label+": "+shortReason(o.LastError))
		case state == resolver.StateConnected:
			connected++
			skills += o.Skills
		case state == resolver.StateNoSkills:
			noSkills++
		case state == resolver.StateGaveUp:
			why, _, _ := strings.Cut(o.LastError, gaveUpNote)
			failed = append(failed, fmt.Sprintf("%s: gave up after %d failed starts (SIGHUP tries again): %s", o.Label, o.FailedStarts, shortReason(why)))
		case state == resolver.StateFailed:
			failed = append(failed, o.Label+": "+shortReason(o.LastError))
		case state == resolver.StateOffline:
			offline = append(offline, o.Label+": "+shortReason(o.LastError))
		default:
			connecting++
		}
	}
	parts := []string{report.Plural(len(st.Origins), "server")}
	switch {
	case connected > 0:
		parts = append(parts, fmt.Sprintf("%d connected (%s)", connected, report.Plural(skills, "skill")))
	case noSkills == 0:
		parts = append(parts, "none connected")
	}
	if noSkills > 0 {
		parts = append(parts, fmt.Sprintf("%d without the skills extension", noSkills))
	}
	if connecting > 0 {
		parts = append(parts, fmt.Sprintf("%d still connecting", connecting))
	}
	if len(offline) > 0 {
		parts = append(parts, fmt.Sprintf("%d offline: %s", len(offline), strings.Join(offline, "; ")))
	}
	if len(failed) > 0 {
		parts = append(parts, fmt.Sprintf("%d failed: %s", len(failed), strings.Join(failed, "; ")))
	}
	return strings.Join(parts, ", ")
}

// requireAll is --require-all: an error naming every server that failed to
// start, or went offline before it ever listed, during the startup wait.
func requireAll(opts Options, st vfs.Status) error {
	if !opts.RequireAll {
		return nil
	}
	var bad []string
	for _, o := range st.Origins {
		s := resolver.State(o.State)
		if s == resolver.StateFailed || s == resolver.StateGaveUp || o.FailedStarts > 0 || s == resolver.StateOffline && o.ListedAt.IsZero() {
			bad = append(bad, o.Label+": "+shortReason(o.LastError))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return exitcode.New(exitcode.Servers, fmt.Errorf("--require-all: %d of %s did not start: %s",
		len(bad), report.Plural(len(st.Origins), "server"), strings.Join(bad, "; ")))
}

// maxReason bounds a reason on the ready line; status.json has it whole.
const maxReason = 120

// gaveUpNote starts what the resolver adds to the error of a server that
// gave up; the ready line says it in fewer words.
const gaveUpNote = " (failed to start "

// shortReason is a server's last error fit for one line: its first line,
// without the supervisor's wrapping, control and invisible characters
// made visible (inert), cut at maxReason characters.
func shortReason(lastError string) string {
	r, _, _ := strings.Cut(lastError, "\n")
	for _, p := range []string{"session: ", "could not start a session: ", "connect: "} {
		r = strings.TrimPrefix(r, p)
	}
	r = strings.TrimSpace(r)
	if r == "" {
		return "no reason given"
	}
	// The reason is a server's words: it is printed inert.
	r = control.Inert(r)
	if rs := []rune(r); len(rs) > maxReason {
		r = string(rs[:maxReason-1]) + "…"
	}
	return r
}
