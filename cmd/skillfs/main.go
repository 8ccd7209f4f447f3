// Command skillfs shows the skills that MCP servers publish (SEP-2640) as a
// read-only, verified, lazily fetched directory tree, and serves a local
// folder of skills as a SEP-2640 server.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := newRootCommand().ExecuteContext(ctx)
	stop()
	if err != nil {
		// Errors carry what servers said (a reason, a message): nothing
		// of it may act on the terminal.
		fmt.Fprintf(os.Stderr, "skillfs: %s\n", inert(err.Error()))
	}
	os.Exit(exitCode(err))
}

// exitCode maps an error returned by a command to the process exit status.
func exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return exitFailure
}
