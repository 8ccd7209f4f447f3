package testkit

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestYield: after Yield(3) every thread of the process, and a process it
// starts, runs at nice 3 (or more, if it ran at more before); Yield(1)
// afterwards raises none of them back.
func TestYield(t *testing.T) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	want := max(3, statNice(t, string(b)))
	if err := Yield(3); err != nil {
		t.Fatal(err)
	}
	if err := Yield(1); err != nil {
		t.Fatal(err)
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/stat")
		if err != nil {
			continue // the thread has exited
		}
		if n := statNice(t, string(b)); n != want {
			t.Errorf("thread %s: nice %d, want %d", task.Name(), n, want)
		}
	}
	out, err := exec.Command("cat", "/proc/self/stat").Output()
	if err != nil {
		t.Fatal(err)
	}
	if n := statNice(t, string(out)); n != want {
		t.Errorf("a child process: nice %d, want %d", n, want)
	}
}

// statNice is the nice field of a /proc/PID/stat line (proc(5): the 19th,
// the 17th after the parenthesized command name).
func statNice(t *testing.T, stat string) int {
	t.Helper()
	_, rest, ok := strings.Cut(stat, ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 17 {
		t.Fatalf("stat line %q", stat)
	}
	n, err := strconv.Atoi(f[16])
	if err != nil {
		t.Fatal(err)
	}
	return n
}
