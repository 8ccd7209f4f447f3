package vfs

import "github.com/skillfs/skillfs/internal/control/wire"

// Exits maps each origin whose stdio server has ended on its own to how
// it last did, with the end of its stderr, already escaped by the
// resolver (control.ExitReporter). It is the person's alone: nothing
// under .skillfs is rendered from it.
func (c *Consent) Exits() map[string]*wire.ServerExit {
	out := map[string]*wire.ServerExit{}
	for label, o := range c.all() {
		x := o.res.Status().Exit
		if x == nil {
			continue
		}
		out[label] = &wire.ServerExit{At: x.At, Status: x.Status, Code: x.Code, Signal: x.Signal,
			Stderr: x.Stderr, StderrDropped: x.Dropped}
	}
	return out
}

// Stderr maps each origin whose stdio server has written to its stderr to
// what it wrote, counted, with its last warnings (resolver.Stderr), already
// escaped. Like Exits it is the person's alone.
func (c *Consent) Stderr() map[string]*wire.ServerStderr {
	out := map[string]*wire.ServerStderr{}
	for label, o := range c.all() {
		x := o.res.Status().Stderr
		if x.Lines == 0 {
			continue
		}
		out[label] = &wire.ServerStderr{Lines: x.Lines, Warnings: x.Warnings, LastWarnings: x.LastWarnings}
	}
	return out
}
