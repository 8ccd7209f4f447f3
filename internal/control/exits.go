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

// addExits fills each row's Exit when api reports them.
func addExits(api API, rows []ServerStatus) {
	er, ok := api.(ExitReporter)
	if !ok {
		return
	}
	exits := er.Exits()
	for i := range rows {
		rows[i].Exit = exits[rows[i].Label]
	}
}
