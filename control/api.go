package control

import (
	"context"
	"errors"
	"fmt"

	"github.com/skillfs/skillfs/vfs"
)

// API is what a mount answers: implemented over the mount's core.
//
// Errors: one that Is vfs.ErrNotExist (or fs.ErrNotExist) means the path,
// URI or label names nothing, and one that Is ErrInvalid means the request
// cannot be right (a file path where a skill is wanted, say); the message
// of either is shown to the user as it is.
type API interface {
	// Status is status.json's content.
	Status() vfs.Status
	// Skills is every skill of every origin, as index.json lists them.
	Skills() []vfs.SkillInfo
	// Inspect describes one skill.
	Inspect(ctx context.Context, ref SkillRef) (Inspection, error)
	// ShowSkillMD returns the verified bytes of the skill's SKILL.md.
	ShowSkillMD(ctx context.Context, ref SkillRef) ([]byte, error)
	// Pending lists the skills waiting for approval, new or changed.
	Pending() []Pending
	// Approve approves the skills each as the user was shown them
	// (SkillRef.Binding); all is the label of `approve --all` (see
	// vfs.Core.Approve). An error that Is vfs.ErrChanged means a skill
	// changed since the user looked and nothing was approved.
	Approve(refs []SkillRef, all string) ([]vfs.SkillInfo, error)
	// Revoke removes approvals; the skills leave the tree at once.
	Revoke(refs []SkillRef) ([]vfs.SkillInfo, error)
	// Get confirms an unlisted skill with skills/get and adds it to the tree.
	Get(ctx context.Context, label, uri string) (vfs.SkillInfo, error)
}

// ErrInvalid marks a request that cannot be right whatever the mount holds.
var ErrInvalid = errors.New("invalid request")

// ErrChanged marks an approval refused because a skill's entry is no
// longer the one the user was shown (HTTP 409).
var ErrChanged = vfs.ErrChanged

// ErrNoMount is what Find returns when no mount is running.
var ErrNoMount = errors.New("no skillfs mount is running (start one with `skillfs mount DIR`)")

// NotFound is an error that Is vfs.ErrNotExist with a message of its own
// (vfs.ErrNotExist's is the errno's "no such file or directory").
func NotFound(format string, args ...any) error {
	return &notFound{fmt.Sprintf(format, args...)}
}

type notFound struct{ msg string }

func (e *notFound) Error() string        { return e.msg }
func (e *notFound) Is(target error) bool { return target == vfs.ErrNotExist }
