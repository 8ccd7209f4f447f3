package control

import "github.com/skillfs/skillfs/internal/control/wire"

// The endpoint's wire types (package internal/control/wire), under the names the
// commands use. The mount side builds the same types, so neither side
// imports the other.
type (
	SkillRef       = wire.SkillRef
	Inspection     = wire.Inspection
	FileState      = wire.FileState
	ApprovalState  = wire.ApprovalState
	Binding        = wire.Binding
	Pending        = wire.Pending
	ApprovalChange = wire.ApprovalChange
	MountInfo      = wire.MountInfo
	StatusReport   = wire.StatusReport
	ServerStatus   = wire.ServerStatus
	SkillInfo      = wire.SkillInfo
	// Endpoint is <mount>/.skillfs/control.json: where the mount's control
	// endpoint is, written by the process serving the mount.
	Endpoint = wire.ControlEndpoint
)
