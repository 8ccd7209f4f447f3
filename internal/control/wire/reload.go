package wire

// ReloadResult is the answer to `skillfs reload`: the config file re-read
// and the servers, by label, that it added, removed or changed (a changed
// server kept its label but not its entry, and was started again).
type ReloadResult struct {
	Config  string   `json:"config"`
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
	Changed []string `json:"changed"`
}

// A mount's states in StatusReport.State.
const (
	MountStarting = "starting"
	MountLive     = "live"
)
