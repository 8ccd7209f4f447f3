package vfs

import "github.com/skillfs/skillfs/internal/control/wire"

// The values the mount shows its user through the control endpoint are the
// endpoint's wire types (package internal/control/wire): the mount builds them under
// these names, and a client reads them without importing the mount. The
// rows and status of index.json and status.json are wire types too, under
// package render's names (generated.go).
type (
	SkillRef        = wire.SkillRef
	Inspection      = wire.Inspection
	FileState       = wire.FileState
	ApprovalState   = wire.ApprovalState
	Pending         = wire.Pending
	Binding         = wire.Binding
	ApprovalChange  = wire.ApprovalChange
	ControlEndpoint = wire.ControlEndpoint
)

// ErrChanged is what an approval gets when a skill's entry is no longer
// the one the user was shown.
var ErrChanged = wire.ErrChanged
