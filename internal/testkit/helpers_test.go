package testkit

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"
)

// TestLogKeepsAndTakes: the test handler keeps every record with its
// attributes (those of With too) in the order logged; TakeWarnings takes
// Warn and Error and leaves the rest.
func TestLogKeepsAndTakes(t *testing.T) {
	l := NewLog(nil)
	lg := l.Logger().With("origin", "local")
	lg.Info("listed", "skills", 3)
	lg.Warn("server session ended", "op", "connect", "err", io.EOF)
	if got := l.Matching(slog.LevelInfo, "list"); len(got) != 1 || got[0].Attrs["skills"] != "3" {
		t.Errorf("Matching(Info, list) = %v", got)
	}
	warns := l.TakeWarnings()
	if len(warns) != 1 || warns[0].String() != "server session ended origin=local op=connect err=EOF" {
		t.Fatalf("TakeWarnings() = %v", warns)
	}
	if rest := l.Take(); len(rest) != 1 || rest[0].Msg != "listed" {
		t.Errorf("after TakeWarnings, Take() = %v, want the Info record", rest)
	}
	if rest := l.Records(); len(rest) != 0 {
		t.Errorf("after Take, Records() = %v", rest)
	}
}

// TestLogFailsOnWarnings: NewLog(t) fails the test on a warning left that
// no test took or allowed, and only on that.
func TestLogFailsOnWarnings(t *testing.T) {
	for _, tc := range []struct {
		name    string
		allowed []string
		take    bool
		fail    bool
	}{
		{"left", nil, false, true},
		{"allowed by an attribute", []string{"op=connect"}, false, false},
		{"allowed by another text", []string{"budget"}, false, true},
		{"taken", nil, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recordingTB{TB: t}
			l := NewLog(rec, tc.allowed...)
			l.Logger().Info("fine")
			l.Logger().Warn("server session ended", "op", "connect")
			if tc.take {
				l.TakeWarnings()
			}
			rec.runCleanups()
			if rec.failed != tc.fail {
				t.Errorf("failed = %v, want %v (%s)", rec.failed, tc.fail, rec.msgs.String())
			}
		})
	}
}

// recordingTB records failures and cleanups instead of acting on them.
type recordingTB struct {
	testing.TB
	failed   bool
	msgs     bytes.Buffer
	cleanups []func()
}

func (r *recordingTB) Helper()          {}
func (r *recordingTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) Errorf(f string, a ...any) {
	r.failed = true
	r.msgs.WriteString(f)
}
func (r *recordingTB) runCleanups() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// TestWaitLine: the ready line is returned, every line reaches the sink,
// and output that ends first is an error that says so.
func TestWaitLine(t *testing.T) {
	var sink bytes.Buffer
	r := strings.NewReader("starting\nskillfs: mounted /m: 1 server\nafter\n")
	line, err := WaitLine(r, &sink, "skillfs: mounted", time.Minute)
	if err != nil || line != "skillfs: mounted /m: 1 server" {
		t.Fatalf("WaitLine = %q, %v", line, err)
	}
	if _, err := WaitLine(strings.NewReader("no ready line\n"), io.Discard, "mounted", time.Minute); err == nil || !strings.Contains(err.Error(), "output ended before") {
		t.Errorf("output without the line: %v", err)
	}
	pr, pw := io.Pipe()
	defer pw.Close()
	if _, err := WaitLine(pr, io.Discard, "mounted", 10*time.Millisecond); err == nil || !strings.Contains(err.Error(), "within") {
		t.Errorf("silent output: %v", err)
	}
}

// TestPoll: Poll returns as soon as the condition holds, and false when
// the timeout passes first.
func TestPoll(t *testing.T) {
	n := 0
	if !Poll(time.Minute, func() bool { n++; return n == 3 }) || n != 3 {
		t.Errorf("Poll stopped after %d checks, want 3", n)
	}
	if Poll(10*time.Millisecond, func() bool { return false }) {
		t.Error("Poll of a condition that never holds returned true")
	}
}

// TestFDCheck: a regular file opened after the baseline is a leak; one
// closed again is not.
func TestFDCheck(t *testing.T) {
	c := FDCheck{Pid: os.Getpid(), Base: OpenFDs(os.Getpid())}
	f, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	rec := &recordingTB{TB: t}
	c.Check(rec)
	if !rec.failed || !strings.Contains(rec.msgs.String(), "new since then") {
		t.Errorf("an open file was not reported as a leak: %q", rec.msgs.String())
	}
	f.Close()
	rec = &recordingTB{TB: t}
	c.Check(rec)
	if rec.failed {
		t.Errorf("a closed file was reported as a leak: %q", rec.msgs.String())
	}
}

// TestSoakSize: SKILLFS_SOAK=1 picks the full size.
func TestSoakSize(t *testing.T) {
	t.Setenv("SKILLFS_SOAK", "")
	if got := Size(2, 23); got != 2 && !*soak {
		t.Errorf("Size(2, 23) = %d without soak", got)
	}
	t.Setenv("SKILLFS_SOAK", "1")
	if got := Size(2, 23); got != 23 {
		t.Errorf("Size(2, 23) = %d with SKILLFS_SOAK=1", got)
	}
}
