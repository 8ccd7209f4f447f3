// Package report is what conformhost (the host under test of the MCP
// conformance suite's client scenarios) saw through the mount, as the JSON
// it writes for integration/conformance_test.go.
package report

// A Report is what conformhost saw.
type Report struct {
	Scenario string `json:"scenario"`
	URL      string `json:"url"`
	// Tree: every file under the server's folder (slash paths relative to
	// it) with the size stat(2) gave.
	Tree map[string]int64 `json:"tree"`
	// Reads: every file read, in order, with its outcome.
	Reads []Read `json:"reads"`
	// Protocol is the protocol version status.json shows for the server.
	Protocol string `json:"protocol"`
	// Ready: the mount printed its ready line.
	Ready bool `json:"ready"`
	// MountExit is the mount's exit code: after SIGTERM, or when it exited
	// before it was ready (3: FUSE cannot be mounted here).
	MountExit int `json:"mount_exit"`
	// Unmounted: the mount point was no longer mounted after the exit.
	Unmounted bool `json:"unmounted"`
	// Log is the mount's stderr.
	Log string `json:"log"`
}

// A Read is one file read to its end.
type Read struct {
	Path  string `json:"path"`
	Bytes string `json:"bytes,omitempty"`
	Errno string `json:"errno,omitempty"` // "EIO", …; empty when the read succeeded
	Err   string `json:"err,omitempty"`
}
