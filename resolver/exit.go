package resolver

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/resolver/transport"
	"github.com/skillfs/skillfs/verify"
)

// An Exit is how the origin's stdio server last ended on its own, and the
// last lines of its stderr (transport.MaxStderrLines, at most
// transport.MaxStderrBytes as written). It is for the person (skillfs
// status), never for a generated file: the lines are the server's own
// words, and a server could aim them at a model reading the mount. They
// are escaped here, before anything else sees them.
type Exit struct {
	At time.Time
	// Status is "exit status 3" or "killed by signal 9 (killed)"; Code is
	// the exit status (-1 after a signal) and Signal the signal's number.
	Status string
	Code   int
	Signal int
	// Stderr are the lines, oldest first, each with every control,
	// invisible or bidi character written <U+XXXX> and every byte that is
	// not UTF-8 <0xNN>; Dropped counts the earlier lines not kept.
	Stderr  []string
	Dropped int
}

// recordExit keeps e as the origin's last exit; transport.Options.OnExit.
func (o *Session) recordExit(e transport.Exit) {
	x := &Exit{At: e.At, Status: e.Status(), Code: e.Code, Signal: int(e.Signal), Dropped: e.Dropped}
	for _, line := range e.Stderr {
		// A URL's secrets are masked here as everywhere a Session's
		// text goes (doc.go); anything else in the lines is the
		// server's own output, shown to its user as it wrote it.
		x.Stderr = append(x.Stderr, visibleLine(config.MaskURLs(line)))
	}
	o.mu.Lock()
	o.status.Exit = x
	o.mu.Unlock()
}

// visibleLine writes every character of s that would act on a terminal or
// hide from a reader (verify.Hidden: controls, tabs, escapes, bidi and
// zero-width characters) as <U+XXXX>, and bytes that are not UTF-8 as
// <0xNN>, the notation `skillfs inspect` uses.
func visibleLine(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, "<0x%02X>", s[i])
		case verify.Hidden(r):
			fmt.Fprintf(&b, "<U+%04X>", r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
