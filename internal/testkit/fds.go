package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// OpenFDs maps a process's open descriptors to what they point at
// ("socket:[123]", "pipe:[9]", a path), or nil when the process is gone.
func OpenFDs(pid int) map[string]string {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	out := make(map[string]string, len(ents))
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // closed while we looked
		}
		out[e.Name()] = target
	}
	return out
}

// CountFDs counts sockets, pipes and process handles (channels), and every
// other descriptor but /dev/null (others). A process handle (pidfd, which
// os/exec holds for each child it starts) belongs with the pipes to that
// child: a daemon that went live on its saved catalog starts a server's
// process after the baseline was taken.
func CountFDs(fds map[string]string) (channels, others int) {
	for _, target := range fds {
		switch {
		case strings.HasPrefix(target, "socket:"), strings.HasPrefix(target, "pipe:"), target == "anon_inode:[pidfd]":
			channels++
		case target == "/dev/null":
		default:
			others++
		}
	}
	return channels, others
}

// A FDCheck is the fd-leak check: the descriptors of process Pid at a
// baseline (Base, from OpenFDs) against those it holds later.
type FDCheck struct {
	Pid  int
	Base map[string]string
	// Allowance is how many more sockets, pipes and process handles than
	// at the baseline the process may hold (idle connections, pipe pools,
	// servers' processes); any other new descriptor is a leak.
	Allowance int
	// Settle is how long Check waits for descriptors still in use to be
	// closed before it judges.
	Settle time.Duration
	// Own, when set, reports descriptors that are the process's state, not
	// leaks: a daemon holds its store's directory and lock file for each
	// server it uses, and a reload may add a server.
	Own func(target string) bool
}

// without returns fds less those c.Own claims.
func (c FDCheck) without(fds map[string]string) map[string]string {
	if c.Own == nil || fds == nil {
		return fds
	}
	out := make(map[string]string, len(fds))
	for fd, target := range fds {
		if !c.Own(target) {
			out[fd] = target
		}
	}
	return out
}

// Check fails the test when the process holds more descriptors than at the
// baseline, beyond the allowance, listing the new ones. A process that is
// gone passes. It returns what the process holds (nil when gone).
func (c FDCheck) Check(t testing.TB) map[string]string {
	t.Helper()
	if c.Base == nil {
		return nil
	}
	channels0, others0 := CountFDs(c.without(c.Base))
	var now map[string]string
	for deadline := time.Now().Add(c.Settle); ; time.Sleep(PollInterval) {
		if now = c.without(OpenFDs(c.Pid)); now == nil {
			return nil
		}
		channels, others := CountFDs(now)
		if (channels-channels0 <= c.Allowance && others <= others0) || time.Now().After(deadline) {
			break
		}
	}
	var added []string
	for fd, target := range now {
		if c.Base[fd] != target {
			added = append(added, fd+" -> "+target)
		}
	}
	slices.Sort(added)
	channels, others := CountFDs(now)
	if channels-channels0 > c.Allowance || others > others0 {
		t.Errorf("process %d holds %d sockets and pipes and %d other descriptors, %d and %d at the baseline (allowance: %d more sockets and pipes); new since then:\n%s",
			c.Pid, channels, others, channels0, others0, c.Allowance, strings.Join(added, "\n"))
	} else if len(now) > len(c.Base) {
		t.Logf("process %d holds %d more descriptors than at the baseline: %s", c.Pid, len(now)-len(c.Base), strings.Join(added, ", "))
	}
	return now
}

// NoFDLeak checks, when the test ends, that this process holds no regular
// file or other non-channel descriptor it did not hold when NoFDLeak was
// called, and at most allowance more sockets and pipes. Tests that check
// leaks in-process must not run in parallel with others, whose
// descriptors would count.
func NoFDLeak(t testing.TB, allowance int) {
	t.Helper()
	c := FDCheck{Pid: os.Getpid(), Base: OpenFDs(os.Getpid()), Allowance: allowance, Settle: 3 * time.Second}
	t.Cleanup(func() { c.Check(t) })
}
