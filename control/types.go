package control

import (
	"time"

	"github.com/skillfs/skillfs/vfs"
)

// The core's own types (vfs/control.go) are the wire format.
type (
	SkillRef       = vfs.SkillRef
	Inspection     = vfs.Inspection
	FileState      = vfs.FileState
	ApprovalState  = vfs.ApprovalState
	Binding        = vfs.Binding
	Pending        = vfs.Pending
	ApprovalChange = vfs.ApprovalChange
)

// MountInfo describes the mount a server answers for.
type MountInfo struct {
	Path     string    `json:"path"`
	PID      int       `json:"pid"`
	Started  time.Time `json:"started"`
	CacheDir string    `json:"cache_dir"`
}

// StatusReport is the answer to `skillfs status`.
type StatusReport struct {
	Mount      MountInfo       `json:"mount"`
	Uptime     string          `json:"uptime"`
	CacheBytes int64           `json:"cache_bytes"`
	Version    string          `json:"version"`
	Servers    []ServerStatus  `json:"servers"`
	Cache      vfs.CacheStatus `json:"cache"`
	// Reload is set while the last reload of the config failed.
	Reload *vfs.ReloadStatus `json:"reload,omitempty"`
}

// ServerStatus is one server in a StatusReport: status.json's row plus the
// skills counted by state.
type ServerStatus struct {
	vfs.OriginStatus
	Available int `json:"available"`
	Pending   int `json:"pending"`
	Failed    int `json:"failed"`
}
