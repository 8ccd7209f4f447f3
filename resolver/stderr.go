package resolver

import (
	"regexp"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/verify"
)

// The bounds of Stderr.LastWarnings.
const (
	MaxStderrWarnings     = 10
	MaxStderrWarningBytes = 512
)

// Stderr is what the origin's stdio server has written to its stderr
// since the Session started, across restarts: the lines counted, the
// warnings among them counted, and the last MaxStderrWarnings warnings,
// each cut at MaxStderrWarningBytes and escaped as Exit.Stderr is. Like
// Exit, it is for the person (skillfs status), never a generated file.
//
// A server that refuses one of its own skills says so here (skillfs serve
// writes "skillfs serve: warning: skipped PATH: REASON"): the mount cannot
// know of a skill the server did not list, but the person can.
type Stderr struct {
	Lines, Warnings int
	LastWarnings    []string
}

// An output is what the origin's stdio server has said outside the
// protocol: the lines of its stderr (Stderr) and how it last ended (Exit).
// The transport's callbacks fill it in from their own goroutines, so it
// has its own lock; Status copies it out.
type output struct {
	mu     sync.Mutex
	stderr Stderr
	exit   *Exit
}

// copyTo sets s.Stderr and s.Exit.
func (out *output) copyTo(s *Status) {
	out.mu.Lock()
	defer out.mu.Unlock()
	s.Exit = out.exit
	s.Stderr = out.stderr
	s.Stderr.LastWarnings = slices.Clone(out.stderr.LastWarnings)
}

// warningLine matches a line that says it is a warning or an error: a
// slog/logfmt or JSON level, or a leading word after at most a program
// name and a colon.
var warningLine = regexp.MustCompile(`(?i)(\blevel=(warn|warning|error)\b|"level"\s*:\s*"(warn|warning|error)"|^\s*([\w./\[\]-]+( [\w./-]+)?:\s*)?\[?(warn|warning|error|fatal)\]?(:|\s|$))`)

// isWarning reports whether line, as the server wrote it, is a warning.
func isWarning(line string) bool { return warningLine.MatchString(line) }

// recordStderr counts one line of the server's stderr;
// transport.Options.OnStderr.
func (out *output) recordStderr(line string) {
	warn := isWarning(line)
	var kept string
	if warn {
		if len(line) > MaxStderrWarningBytes {
			i := MaxStderrWarningBytes
			for i > 0 && !utf8.RuneStart(line[i]) {
				i--
			}
			line = line[:i] + "…"
		}
		kept = verify.Visible(config.MaskURLs(line))
	}
	out.mu.Lock()
	defer out.mu.Unlock()
	out.stderr.Lines++
	if !warn {
		return
	}
	out.stderr.Warnings++
	w := append(out.stderr.LastWarnings, kept)
	if len(w) > MaxStderrWarnings {
		w = append([]string(nil), w[len(w)-MaxStderrWarnings:]...)
	}
	out.stderr.LastWarnings = w
}
