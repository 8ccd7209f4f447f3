package testkit

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// Yield lowers the calling test process's scheduling priority to nice
// inc (more than it has, never less), for a package whose tests start
// many processes: go test runs two packages at a time on two cores, and
// the daemons, servers and node processes of a package such as
// integration would otherwise crowd out the other package's one test
// process, whose tests then take several times their own CPU time to
// finish. Lowered, the heavy package takes what the lighter ones leave.
//
// Linux keeps a nice value per thread, and a new thread or process takes
// its creator's: Yield sets it for every thread the process has, so that
// every thread and process it starts afterwards has it too.
func Yield(inc int) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		cur, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
		if err != nil {
			continue // the thread has exited
		}
		// The raw getpriority system call returns 20 - nice.
		nice := 20 - cur
		if nice >= inc {
			continue
		}
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, inc); err != nil {
			return fmt.Errorf("nice %d for thread %d: %w", inc, tid, err)
		}
	}
	return nil
}
