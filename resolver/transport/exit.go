package transport

import (
	"fmt"
	"sync"
	"syscall"
	"time"
)

// What an Exit keeps of a stdio server's stderr: its last MaxStderrLines
// lines, and of those no more than MaxStderrBytes bytes in all (each line
// counted with its newline), the oldest dropped first. The last line is
// always kept; like every line it is cut at 4 KiB.
const (
	MaxStderrLines = 20
	MaxStderrBytes = 4 << 10
)

// An Exit is a stdio server that ended on its own: it exited, or was
// killed by a signal, while skillfs was not stopping it (or after it had
// already closed its end of the connection).
type Exit struct {
	At time.Time
	// Code is the exit status; -1 when a signal ended the process.
	Code int
	// Signal is the number of the signal that ended it, 0 for an exit.
	Signal syscall.Signal
	// Stderr are the last lines the server wrote to its stderr, oldest
	// first, exactly as it wrote them: the server's own words, which a
	// caller must escape before a terminal or a model sees them. Dropped
	// counts the lines it wrote before them that were not kept.
	Stderr  []string
	Dropped int
}

// Status says how the server ended: "exit status 3", "killed by signal 9
// (killed)".
func (e Exit) Status() string {
	if e.Signal != 0 {
		return fmt.Sprintf("killed by signal %d (%v)", int(e.Signal), e.Signal)
	}
	return fmt.Sprintf("exit status %d", e.Code)
}

// stderrTail keeps the last lines of a server's stderr within the bounds
// above.
type stderrTail struct {
	mu      sync.Mutex
	lines   []string
	bytes   int
	dropped int
}

func (t *stderrTail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	t.bytes += len(line) + 1
	for len(t.lines) > 1 && (len(t.lines) > MaxStderrLines || t.bytes > MaxStderrBytes) {
		t.bytes -= len(t.lines[0]) + 1
		t.lines = t.lines[1:]
		t.dropped++
	}
}

func (t *stderrTail) snapshot() ([]string, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.lines...), t.dropped
}
