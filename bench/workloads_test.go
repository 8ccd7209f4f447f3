//go:build linux

package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCountsNoteIsTheTotalAndTheOpcodesLargestFirst(t *testing.T) {
	total, note := countsNote(map[string]int{"GETATTR": 10, "READDIRPLUS": 20, "STATFS": 1, "LSEEK": 10})
	if total != 41 || note != "READDIRPLUS 20, GETATTR 10, LSEEK 10, STATFS 1" {
		t.Errorf("countsNote = %v, %q", total, note)
	}
	if total, note := countsNote(nil); total != 0 || note != "none" {
		t.Errorf("countsNote(nil) = %v, %q", total, note)
	}
}

func TestStabilitySaysBestOfAndSpread(t *testing.T) {
	got := stability([]float64{0.2, 0.1, 0.3}, []float64{0.05, 0.1, 0.1})
	if want := "best 100 ms vs 50.0 ms, 2.00×; spread 100% vs 50%"; got != want {
		t.Errorf("stability = %q, want %q", got, want)
	}
}

// countRequests counts only what the log gained during the operation.
func TestCountRequestsCountsTheOperationsLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), "debug.log")
	line := func(op string) string {
		return `time=2026-12-02T01:35:44.137Z level=DEBUG msg="rx 32: ` + op + ` n3 {Fh 1} p0" op=fuse` + "\n"
	}
	appendLine := func(s string) error {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = f.WriteString(s)
		return err
	}
	counts, err := countRequests(t.Context(), p,
		func() error { return appendLine(line("OPENDIR")) },
		func() error {
			return appendLine(line("LOOKUP") + line("LOOKUP") + `time=x level=DEBUG msg="tx 32:     OK" op=fuse` + "\n" + line("GETXATTR"))
		})
	if err != nil || len(counts) != 2 || counts["LOOKUP"] != 2 || counts["GETXATTR"] != 1 {
		t.Errorf("countRequests = %v, %v; want LOOKUP 2, GETXATTR 1", counts, err)
	}
}
