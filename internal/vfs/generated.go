package vfs

import (
	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/render"
)

// The generated files' types and bounds are package render's: the files are
// pure functions of a render.Snapshot that the mount takes (snapshot).
type (
	SkillInfo    = render.SkillInfo
	Index        = render.Index
	Status       = render.Status
	OriginStatus = render.OriginStatus
	CacheStatus  = render.CacheStatus
	ReloadStatus = render.ReloadStatus
)

// MaxIndexJSONBytes bounds .skillfs/index.json (render.MaxIndexJSONBytes).
const MaxIndexJSONBytes = render.MaxIndexJSONBytes

// MaxCollisionExamples is how many other paths a row of index.json names
// in name_collisions (render.MaxCollisionExamples).
const MaxCollisionExamples = render.MaxCollisionExamples

// snapshot is what index.md, servers/LABEL.md and catalog.md are rendered
// from: the model's index and status, taken once.
func (m *generated) snapshot() *render.Snapshot {
	f := m.f
	var ic config.Index
	if f.opts.Config != nil {
		ic = f.opts.Config.Index
	}
	return &render.Snapshot{Index: m.modelIndex(), Status: m.modelStatus(), Mount: f.opts.MountPoint,
		Bound: int(ic.Bound()), AvailableSkills: ic.AvailableSkills}
}
