package wire

import "time"

// ServerExit is how a stdio server last ended on its own, in `skillfs
// status` (ServerStatus.Exit): the exit status and the last lines of its
// stderr. It is in the control endpoint's answers only, never in
// status.json or any other generated file: the lines are the server's own
// words, which it could aim at a model reading the mount.
type ServerExit struct {
	At time.Time `json:"at"`
	// Status is "exit status 3" or "killed by signal 9 (killed)"; Code is
	// the exit status (-1 after a signal), Signal the signal's number.
	Status string `json:"status"`
	Code   int    `json:"code"`
	Signal int    `json:"signal,omitempty"`
	// Stderr are the last lines the server wrote to stderr, oldest first:
	// at most 20, and at most 4 KiB of them as written (the last line is
	// always kept, cut at 4 KiB), each escaped: every control, invisible or
	// bidi character is written <U+XXXX>, every byte that is not UTF-8
	// <0xNN>. StderrDropped counts the earlier lines not kept.
	Stderr        []string `json:"stderr"`
	StderrDropped int      `json:"stderr_dropped,omitempty"`
}

// ServerStderr is what a stdio server has written to its stderr since the
// mount started, across its restarts, in `skillfs status`
// (ServerStatus.Stderr). A line is a warning when it says so: a slog or
// logfmt level of WARN or ERROR ("level=WARN", "level":"error"), or a
// leading "warning", "warn", "error" or "fatal" word, after at most a
// program name and a colon ("skillfs serve: warning: skipped ...").
// LastWarnings are the last 10 of them, oldest first, each cut at 512
// bytes as written and escaped as ServerExit.Stderr is.
type ServerStderr struct {
	Lines        int      `json:"lines"`
	Warnings     int      `json:"warnings"`
	LastWarnings []string `json:"last_warnings,omitempty"`
}
