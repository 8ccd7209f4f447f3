//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseStatus(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       string
		rss, hwm int64
		err      string
	}{
		{"real", "Name:\tskillfs\nVmPeak:\t 1 kB\nVmHWM:\t   51200 kB\nVmRSS:\t   40960 kB\nThreads:\t9\n", 40 << 20, 50 << 20, ""},
		{"no rss", "VmHWM:\t1 kB\n", 0, 0, "no VmRSS"},
		{"odd unit", "VmRSS:\t1 MB\nVmHWM:\t1 kB\n", 0, 0, "odd VmRSS"},
		{"not a number", "VmRSS:\tx kB\nVmHWM:\t1 kB\n", 0, 0, "VmRSS"},
		{"empty", "", 0, 0, "no VmRSS"},
	} {
		rss, hwm, err := parseStatus(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: err %v, want one about %q", tc.name, err, tc.err)
		case tc.err == "" && (err != nil || rss != tc.rss || hwm != tc.hwm):
			t.Errorf("%s: %d %d %v, want %d %d", tc.name, rss, hwm, err, tc.rss, tc.hwm)
		}
	}
	// Our own status parses, with a resident set of more than nothing.
	rss, hwm, err := procMemory(os.Getpid())
	if err != nil || rss <= 0 || hwm < rss {
		t.Errorf("procMemory(self) = %d %d %v", rss, hwm, err)
	}
}

func FuzzParseStatus(f *testing.F) {
	f.Add("VmHWM:\t   51200 kB\nVmRSS:\t   40960 kB\n")
	f.Add("VmRSS: 1 kB\nVmHWM: 1 kB")
	f.Add("VmRSS:\t-1 kB\nVmHWM:\t99999999999999999999 kB\n")
	f.Add("VmRSS\nVmHWM:")
	f.Fuzz(func(t *testing.T, s string) {
		rss, hwm, err := parseStatus(s)
		if err == nil && (rss%1024 != 0 || hwm%1024 != 0) {
			t.Errorf("parseStatus(%q) = %d, %d: not whole kB", s, rss, hwm)
		}
		if err != nil && (rss != 0 || hwm != 0) {
			t.Errorf("parseStatus(%q) failed but returned %d, %d", s, rss, hwm)
		}
	})
}

func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/a":            "/tmp/a",
		`/tmp/a\040b`:       "/tmp/a b",
		`/tmp/tab\011x`:     "/tmp/tab\tx",
		`/tmp/back\134`:     `/tmp/back\`,
		`/tmp/short\04`:     `/tmp/short\04`,
		`/tmp/notoctal\9ab`: `/tmp/notoctal\9ab`,
	} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzUnescapeMount(f *testing.F) {
	for _, s := range []string{"/a", `/a\040b`, `\`, `\0`, `\04`, `\777`, `\\\\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := unescapeMount(s)
		if !strings.Contains(s, `\`) && got != s {
			t.Errorf("unescapeMount(%q) = %q changed a string with no escapes", s, got)
		}
		if len(got) > len(s) {
			t.Errorf("unescapeMount(%q) = %q grew", s, got)
		}
	})
}

func TestCountReads(t *testing.T) {
	p := filepath.Join(t.TempDir(), "access.log")
	head := "initialize\nresources/read skill://a/SKILL.md\n"
	os.WriteFile(p, []byte(head+
		"skills/list cursor=x\nresources/read skill://a/SKILL.md\nresources/read skill://a/SKILL.md.bak\n"+
		"resources/read skill://b/SKILL.md\nresources/read skill://a/SKILL.md\n"), 0o600)
	for _, tc := range []struct {
		from int64
		uri  string
		want int
	}{
		{0, "skill://a/SKILL.md", 3},
		{int64(len(head)), "skill://a/SKILL.md", 2},
		{int64(len(head)), "skill://b/SKILL.md", 1},
		{0, "skill://c/SKILL.md", 0},
	} {
		n, err := countReads(p, tc.from, tc.uri)
		if err != nil || n != tc.want {
			t.Errorf("countReads(from %d, %s) = %d, %v; want %d", tc.from, tc.uri, n, err, tc.want)
		}
	}
	if _, err := countReads(filepath.Join(t.TempDir(), "none"), 0, "x"); err == nil {
		t.Error("countReads of a missing log succeeded")
	}
}

func TestCleaner(t *testing.T) {
	var got []string
	c := &cleaner{}
	c.add(func() { got = append(got, "work dir") })
	stopServer := c.add(func() { got = append(got, "server") })
	c.add(func() { got = append(got, "mount") })
	stopServer()
	stopServer()
	c.run()
	if s := strings.Join(got, ", "); s != "server, mount, work dir" {
		t.Errorf("cleanup order: %s", s)
	}
	c.run()
	if len(got) != 3 {
		t.Errorf("a second run ran %d more", len(got)-3)
	}
	late := c.add(func() { got = append(got, "late") })
	if len(got) != 4 || got[3] != "late" {
		t.Errorf("a cleanup added after run did not run at once: %v", got)
	}
	late()
	if len(got) != 4 {
		t.Errorf("the late cleanup ran twice: %v", got)
	}
}

// A run that finds nothing left to do still waits for a cleanup another
// run is in the middle of.
func TestCleanerRunWaitsForOtherRun(t *testing.T) {
	c := &cleaner{}
	inside, release := make(chan struct{}), make(chan struct{})
	var finished atomic.Bool
	c.add(func() {
		close(inside)
		<-release
		finished.Store(true)
	})
	go c.run()
	<-inside
	second := make(chan struct{})
	go func() { c.run(); close(second) }()
	select {
	case <-second:
		t.Fatal("the second run returned while the first was inside a cleanup")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	<-second
	if !finished.Load() {
		t.Error("the cleanup had not finished when the second run returned")
	}
}

func TestParseStat(t *testing.T) {
	// The command name may hold spaces and parentheses.
	line := "4242 (skillfs (x) y) S 1 4242 4242 0 -1 4194560 1234 0 0 0 37 13 0 0 20 0 9 0 100 1000 200 18446744073709551615\n"
	got, err := parseStat(line)
	if err != nil || got != 500*time.Millisecond {
		t.Errorf("parseStat = %v, %v; want 500ms (37+13 ticks)", got, err)
	}
	for _, bad := range []string{"", "4242 skillfs S 1", "4242 (skillfs) S 1 2 3", "4242 (s) S 1 4242 4242 0 -1 4194560 1234 0 0 0 x 13 0"} {
		if _, err := parseStat(bad); err == nil {
			t.Errorf("parseStat(%q): no error", bad)
		}
	}
	if _, err := procCPU(os.Getpid()); err != nil {
		t.Errorf("procCPU(self): %v", err)
	}
}
