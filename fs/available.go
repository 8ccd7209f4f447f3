package fs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// ErrNoFUSE is what Available's errors match: FUSE cannot be used here.
var ErrNoFUSE = errors.New("FUSE is not available")

// An UnavailableError says why FUSE cannot be used and what fixes it.
type UnavailableError struct {
	Problem string // what is missing
	Fix     string // what the user can do about it
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("%v: %s. %s", ErrNoFUSE, e.Problem, e.Fix)
}

func (e *UnavailableError) Is(target error) bool { return target == ErrNoFUSE }

// Available reports whether this machine can mount at all, before the
// mount connects to any server: the FUSE device and, for a user other than
// root, the mount helper go-fuse runs (see available for each system). It
// returns an *UnavailableError naming what is missing and the fix, rather
// than leaving it to the mount to fail on a missing file.
func Available() error {
	return available(fuseDevice, os.Geteuid() == 0, exec.LookPath)
}

// A MountError is a mount that failed past Available's checks: what the
// kernel or the helper said, what it means, and the fix.
type MountError struct {
	Mountpoint string
	Err        error  // mount(2)'s errno, or the helper's failure
	Problem    string // what failed, with the errno's name
	Fix        string
}

func (e *MountError) Error() string {
	return fmt.Sprintf("mount %s: %s. %s", e.Mountpoint, e.Problem, e.Fix)
}

func (e *MountError) Unwrap() error { return e.Err }
