package control

import "github.com/skillfs/skillfs/internal/control/wire"

// ExitReporter is an API that also knows how each stdio server last ended
// on its own (vfs.Consent does). `skillfs status` shows it; status.json,
// the API's Status, never holds it (wire.ServerExit says why).
type ExitReporter interface {
	// Exits maps the label of every server that has ended on its own to
	// its last exit.
	Exits() map[string]*wire.ServerExit
}

// StderrReporter is an API that also counts what each stdio server wrote
// to its stderr (vfs.Consent does); like exits, for `skillfs status` only.
type StderrReporter interface {
	Stderr() map[string]*wire.ServerStderr
}

// addExits fills each row's Exit and Stderr when api reports them.
func addExits(api API, rows []ServerStatus) {
	if er, ok := api.(ExitReporter); ok {
		exits := er.Exits()
		for i := range rows {
			rows[i].Exit = exits[rows[i].Label]
		}
	}
	if sr, ok := api.(StderrReporter); ok {
		stderr := sr.Stderr()
		for i := range rows {
			rows[i].Stderr = stderr[rows[i].Label]
		}
	}
}
