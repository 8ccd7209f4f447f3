package testkit

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestTerminal: a command started on the pseudo-terminal sees a terminal,
// the test reads what it writes and types its answer.
func TestTerminal(t *testing.T) {
	tm := StartOnTerminal(t, exec.Command("/bin/sh", "-c", `test -t 0 && test -t 1 && echo "is a tty"; printf "name? "; read x; echo "got [$x]"; exit 3`))
	tm.Expect(t, "name? ", time.Minute)
	tm.Type(t, "abc\n")
	code, out := tm.Wait(t, time.Minute)
	if code != 3 || !strings.Contains(out, "is a tty\n") || !strings.Contains(out, "got [abc]\n") {
		t.Errorf("exit %d, output:\n%q", code, out)
	}
}
