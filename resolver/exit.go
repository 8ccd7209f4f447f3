package resolver

import (
	"time"

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
func (out *output) recordExit(e transport.Exit) {
	x := &Exit{At: e.At, Status: e.Status(), Code: e.Code, Signal: int(e.Signal), Dropped: e.Dropped}
	for _, line := range e.Stderr {
		// A URL's secrets are masked here as everywhere a Session's
		// text goes (doc.go); anything else in the lines is the
		// server's own output, shown to its user as it wrote it.
		x.Stderr = append(x.Stderr, verify.Visible(config.MaskURLs(line)))
	}
	out.mu.Lock()
	out.exit = x
	out.mu.Unlock()
}
