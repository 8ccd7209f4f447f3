package mountd

import (
	"context"
	"fmt"
	"syscall"

	"github.com/skillfs/skillfs/internal/exitcode"
)

// interruptedAtStart is the error of a mount whose start-up ctx (ended by
// SIGINT or SIGTERM, see main) ended before the mount was live; nothing
// was mounted, and it says so. Ctrl-C exits 130, as a shell would. SIGTERM
// is how a service manager stops the mount, starting or not: it exits 0,
// as a stop after the mount is live does.
func interruptedAtStart(ctx context.Context) error {
	// signal.NotifyContext's cause names the signal ("terminated signal
	// received").
	if cause := context.Cause(ctx); cause != nil && cause.Error() == syscall.SIGTERM.String()+" signal received" {
		return exitcode.New(exitcode.OK, fmt.Errorf("stopped (SIGTERM) while starting: nothing was mounted"))
	}
	return exitcode.New(exitcode.Interrupted, fmt.Errorf("interrupted (SIGINT) while starting: nothing was mounted"))
}
