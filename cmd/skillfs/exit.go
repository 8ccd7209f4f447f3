package main

// Exit codes. They are part of the command-line interface: scripts may test
// them, so a code keeps its meaning once released.
const (
	// exitOK: the command did what was asked (for mount: it was unmounted
	// cleanly after a signal or `skillfs unmount`).
	exitOK = 0
	// exitFailure: a runtime failure not covered below.
	exitFailure = 1
	// exitUsage: the command line or the config file is wrong; the message
	// says what to change.
	exitUsage = 2
	// exitMount: the filesystem could not be mounted (FUSE unavailable,
	// mountpoint refused, permission denied).
	exitMount = 3
	// exitUnmountBusy: the mount was still in use at shutdown and was detached
	// lazily; it disappears once the last user lets go.
	exitUnmountBusy = 4
	// exitServers: mount --require-all, and a server failed to start (or
	// went offline before it ever listed) within --startup-timeout; nothing
	// was mounted.
	exitServers = 5
)

// An exitError carries an exit code up to main along with its message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageError(err error) error { return &exitError{code: exitUsage, err: err} }
