package control

// Clients returns a client for every running mount registered in dirs
// (Dirs) that Find would trust, and what it skipped: for a command that
// asks each mount about itself (skillfs cache rm asking which servers a
// mount uses).
func Clients(dirs []string) ([]*Client, []Skip) {
	live, skips := running(dirs)
	out := make([]*Client, 0, len(live))
	for _, r := range live {
		out = append(out, newClient(r, skips))
	}
	return out, skips
}
