package hostile

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"syscall"
)

// Process-level modes, not in Modes(): the server crashes as a process,
// before it reads anything, every time it is started — until the state
// file (Options.StateFile) holds phase "up", from when on it starts and
// serves as an honest server.
const (
	// ModeCrashExit writes CrashStderr to stderr and exits with status
	// ExitDied (3).
	ModeCrashExit = "crash-exit"
	// ModeCrashSignal writes CrashStderr to stderr and kills itself with
	// SIGKILL.
	ModeCrashSignal = "crash-signal"
)

// CrashLines is how many lines CrashStderr has.
const CrashLines = 25

// CrashStderr is what the crash modes write to stderr, one string a line
// (each ends with a newline): CrashLines lines, numbered "crash line NN of
// 25", the next to last with a byte that is not UTF-8 (0xFF), the last
// "fatal: " and TerminalEscapes.
func CrashStderr() []string {
	var out []string
	for i := 1; i < CrashLines-1; i++ {
		out = append(out, fmt.Sprintf("crash line %02d of %d\n", i, CrashLines))
	}
	out = append(out, fmt.Sprintf("crash line %02d of %d: a bad byte \xff here\n", CrashLines-1, CrashLines))
	return append(out, "fatal: "+TerminalEscapes+"\n")
}

func crashMode(mode string) bool { return mode == ModeCrashExit || mode == ModeCrashSignal }

// crash ends the process as its mode says, unless the state file is at
// phase "up"; it returns only then.
func crash(opts Options, stderr io.Writer) {
	if opts.StateFile != "" {
		var st State
		if b, err := os.ReadFile(opts.StateFile); err == nil && json.Unmarshal(b, &st) == nil && st.Phase == "up" {
			return
		}
	}
	for _, line := range CrashStderr() {
		io.WriteString(stderr, line)
	}
	if opts.Mode == ModeCrashSignal {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
	os.Exit(ExitDied)
}
