package mountd

import (
	"fmt"
	"os"
	"time"

	"github.com/skillfs/skillfs/internal/report"
	"github.com/skillfs/skillfs/internal/term"
	"github.com/skillfs/skillfs/internal/vfs"
	"github.com/skillfs/skillfs/resolver"
)

// progressEvery is how often the startup progress line is redrawn.
const progressEvery = time.Second

// startupProgress shows, when the ready line goes to a terminal, one line
// of the startup wait's progress, redrawn in place, that the ready line
// replaces: the returned func erases it. It is short, so that it never
// wraps (a carriage return redraws only the last row).
func startupProgress(opts Options, v *vfs.Core) func() {
	f, ok := opts.Ready.(*os.File)
	if !ok || opts.ReadyPipe != nil || !term.IsTerminal(f) {
		return func() {}
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			fmt.Fprint(f, "\r\x1b[K"+progressLine(v.Consent().Status()))
			select {
			case <-stop:
				fmt.Fprint(f, "\r\x1b[K")
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(stop); <-done }
}

// progressLine: "skillfs: starting: 1 of 2 servers answered, 41 skills listed".
func progressLine(st vfs.Status) string {
	answered, skills := 0, 0
	for _, o := range st.Origins {
		if resolver.State(o.State) != resolver.StateConnecting {
			answered++
		}
		skills += o.Skills
	}
	return fmt.Sprintf("skillfs: starting: %d of %s answered, %s listed", answered, report.Plural(len(st.Origins), "server"), report.Plural(skills, "skill"))
}
