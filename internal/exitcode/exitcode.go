// Package exitcode holds skillfs's exit codes and the error that carries
// one up to main. The codes are part of the command-line interface:
// scripts may test them, so a code keeps its meaning once released.
package exitcode

import (
	"errors"
	"syscall"
)

const (
	// OK: the command did what was asked (for mount: it was unmounted
	// cleanly after a signal or `skillfs unmount`).
	OK = 0
	// Failure: a runtime failure not covered below.
	Failure = 1
	// Usage: the command line or the config file is wrong; the message
	// says what to change.
	Usage = 2
	// Mount: the filesystem could not be mounted (FUSE unavailable,
	// mountpoint refused, permission denied).
	Mount = 3
	// UnmountBusy: the mount was still in use at shutdown and was detached
	// lazily; it disappears once the last user lets go.
	UnmountBusy = 4
	// Servers: mount --require-all, and a server failed to start (or went
	// offline before it ever listed) within --startup-timeout; nothing was
	// mounted.
	Servers = 5
	// Interrupted: SIGINT while a mount was starting (nothing was
	// mounted), as a shell reports a process SIGINT ended.
	Interrupted = 128 + int(syscall.SIGINT)
)

// An Error carries an exit code up to main along with its message.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// New is err with exit code code.
func New(code int, err error) error { return &Error{Code: code, Err: err} }

// UsageError is err as a usage error (exit code 2).
func UsageError(err error) error { return &Error{Code: Usage, Err: err} }

// Of is the exit status for err: 0 for nil, the code an Error carries,
// else Failure.
func Of(err error) int {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Failure
}
