package control

import (
	"encoding/json"
	"time"

	"github.com/skillfs/skillfs/skill"
	"github.com/skillfs/skillfs/vfs"
)

// The types below mirror the approval core's (vfs/control.go) field for
// field and JSON name for JSON name, so that the wire format does not
// change when the core's own types take their place.

// SkillRef names one skill: by mount-relative skill directory
// ("acme/billing/refunds"), or by origin label and SKILL.md URI.
type SkillRef struct {
	Path   string `json:"path,omitempty"`
	Origin string `json:"origin,omitempty"`
	URI    string `json:"uri,omitempty"`
}

// String is how a message names the skill.
func (r SkillRef) String() string {
	if r.Path != "" {
		return r.Path
	}
	return r.Origin + " " + r.URI
}

// Inspection describes one skill in full.
type Inspection struct {
	Skill    vfs.SkillInfo   `json:"skill"`
	Entry    json.RawMessage `json:"entry"` // the held entry as the server sent it
	Files    []FileState     `json:"files"`
	Approval *ApprovalState  `json:"approval,omitempty"`
}

// FileState is one file of a skill's manifest.
type FileState struct {
	Path     string `json:"path"`
	URI      string `json:"uri"`
	Digest   string `json:"digest"`
	Size     int64  `json:"size"`
	Verified bool   `json:"verified"`
	Cached   bool   `json:"cached"`
}

// ApprovalState is a skill's standing under `approval: required`.
type ApprovalState struct {
	Required bool `json:"required"`
	// State: "approved", "pending", "changed", "refused" (dynamic under
	// required) or "not-required".
	State string    `json:"state"`
	At    time.Time `json:"approved_at,omitzero"`
	Bound *Binding  `json:"bound,omitempty"` // what the approval is bound to
}

// Binding is what an approval covers: the origin's identity and the
// skill's full resource set.
type Binding struct {
	Origin      string           `json:"origin"`
	Fingerprint string           `json:"fingerprint"`
	URI         string           `json:"uri"`
	Frontmatter map[string]any   `json:"frontmatter"`
	Resources   []skill.Resource `json:"resources"`
}

// Pending is a skill waiting for approval.
type Pending struct {
	Skill   vfs.SkillInfo   `json:"skill"`
	Changed *ApprovalChange `json:"changed,omitempty"` // nil for a skill never approved
}

// ApprovalChange is what changed since a skill was approved.
type ApprovalChange struct {
	Added       []string `json:"files_added,omitempty"`
	Removed     []string `json:"files_removed,omitempty"`
	Changed     []string `json:"files_changed,omitempty"`
	Frontmatter []string `json:"frontmatter_changed,omitempty"`
}

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
}

// ServerStatus is one server in a StatusReport: status.json's row plus the
// skills counted by state.
type ServerStatus struct {
	vfs.OriginStatus
	Available int `json:"available"`
	Pending   int `json:"pending"`
	Failed    int `json:"failed"`
}
