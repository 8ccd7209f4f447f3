// Command skillfs shows the skills that MCP servers publish (SEP-2640) as a
// read-only, verified, lazily fetched directory tree, and serves a local
// folder of skills as a SEP-2640 server.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/skillfs/skillfs/internal/control"
	"github.com/skillfs/skillfs/internal/exitcode"
)

// The kernel hands a signal sent to the process (SIGTERM, Ctrl-C's
// SIGINT, SIGHUP) to its main thread first, and does not hand it on while
// that thread sleeps where only a fatal signal wakes it — as a read of a
// file on a FUSE mount that stopped answering does (a config or envFile
// kept there, read by a reload that gave up on it). The signal then waited
// for the next one. Keeping the main goroutine on the main thread keeps
// every other goroutine, and so every such read, off it.
func init() { runtime.LockOSThread() }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := newRootCommand().ExecuteContext(ctx)
	stop()
	if err != nil {
		// Errors carry what servers said (a reason, a message): nothing
		// of it may act on the terminal.
		fmt.Fprintf(os.Stderr, "skillfs: %s\n", control.Inert(err.Error()))
	}
	os.Exit(exitcode.Of(err))
}
