package testkit

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// PollInterval is how often WaitFor checks its condition.
const PollInterval = 50 * time.Millisecond

// WaitFor polls cond every PollInterval until it holds, and fails the test
// when timeout passes first. The timeout only catches a hang: make it
// generous, since a shared machine may be slow.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(timeout, cond) {
		t.Fatalf("timed out after %v waiting for %s", timeout, what)
	}
}

// Poll polls cond every PollInterval until it holds (true) or timeout
// passes (false), for callers that report the failure themselves.
func Poll(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(PollInterval)
	}
	return true
}

// WaitLine reads r line by line until a line contains want, and returns
// that line: a daemon's ready line ("skillfs: mounted …", "serving …").
// Every line read, before and after, is copied to sink (io.Discard for
// none) until r ends, so the process never blocks on a full pipe. It fails
// with the reason when r ends first or timeout passes.
func WaitLine(r io.Reader, sink io.Writer, want string, timeout time.Duration) (string, error) {
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(sink, line)
			if !sent && strings.Contains(line, want) {
				found <- line
				sent = true
			}
		}
		if !sent {
			close(found)
		}
	}()
	select {
	case line, ok := <-found:
		if !ok {
			return "", fmt.Errorf("output ended before %q", want)
		}
		return line, nil
	case <-time.After(timeout):
		return "", fmt.Errorf("no %q within %v", want, timeout)
	}
}
