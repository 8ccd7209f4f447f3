package main

import (
	"context"
	"fmt"
	"syscall"
)

// Exit codes of a mount stopped by a signal before it went live, as shells
// report a command a signal ended: 128 + the signal's number.
const (
	exitInterrupted = 128 + int(syscall.SIGINT)  // 130: Ctrl-C
	exitTerminated  = 128 + int(syscall.SIGTERM) // 143
)

// interruptedAtStart is the error of a mount whose start-up ctx (ended by
// SIGINT or SIGTERM, see main) ended before the mount was live: it says so,
// and exits as a shell would for the signal. Nothing was mounted.
func interruptedAtStart(ctx context.Context) error {
	code, name := exitInterrupted, "interrupted (SIGINT)"
	// signal.NotifyContext's cause names the signal ("terminated signal
	// received").
	if cause := context.Cause(ctx); cause != nil && cause.Error() == syscall.SIGTERM.String()+" signal received" {
		code, name = exitTerminated, "terminated (SIGTERM)"
	}
	return &exitError{code: code, err: fmt.Errorf("%s while starting: nothing was mounted", name)}
}
