package main

import "github.com/skillfs/skillfs/internal/exitcode"

// Exit codes (package exitcode says what each means).
const (
	exitOK          = exitcode.OK
	exitFailure     = exitcode.Failure
	exitUsage       = exitcode.Usage
	exitMount       = exitcode.Mount
	exitUnmountBusy = exitcode.UnmountBusy
	exitServers     = exitcode.Servers
)

func usageError(err error) error { return exitcode.UsageError(err) }
