package control

import (
	"context"
	"errors"

	"github.com/skillfs/skillfs/internal/control/wire"
)

// API is what a mount answers: vfs.Consent implements it.
//
// Errors: one that Is ErrNotFound (or fs.ErrNotExist) means the path,
// URI or label names nothing, and one that Is ErrInvalid means the request
// cannot be right (a file path where a skill is wanted, say); the message
// of either is shown to the user as it is.
type API interface {
	// Status is status.json's content.
	Status() wire.Status
	// Skills is every skill of every origin, as index.json lists them.
	Skills() []wire.SkillInfo
	// Inspect describes one skill.
	Inspect(ctx context.Context, ref SkillRef) (Inspection, error)
	// ShowSkillMD returns the verified bytes of the skill's SKILL.md.
	ShowSkillMD(ctx context.Context, ref SkillRef) ([]byte, error)
	// Pending lists the skills waiting for approval, new or changed.
	Pending() []Pending
	// Approve approves the skills each as the user was shown them
	// (SkillRef.Binding); all is the label of `approve --all` (see
	// vfs.Consent.Approve). An error that Is ErrChanged means a skill
	// changed since the user looked and nothing was approved.
	Approve(refs []SkillRef, all string) ([]wire.SkillInfo, error)
	// Revoke removes approvals; the skills leave the tree at once.
	Revoke(refs []SkillRef) ([]wire.SkillInfo, error)
	// Get confirms an unlisted skill with skills/get and adds it to the tree.
	Get(ctx context.Context, label, uri string) (wire.SkillInfo, error)
}

// The endpoint's errors (package internal/control/wire): ErrNotFound (404),
// ErrInvalid (400) and ErrChanged (409).
var (
	ErrNotFound = wire.ErrNotFound
	ErrInvalid  = wire.ErrInvalid
	ErrChanged  = wire.ErrChanged
)

// ErrNoMount is what Find returns when no mount is running.
var ErrNoMount = errors.New("no skillfs mount is running (start one with `skillfs mount DIR`)")

// NotFound is an error that Is ErrNotFound with a message of its own.
func NotFound(format string, args ...any) error { return wire.NotFound(format, args...) }
