package transport

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestStderrTailBounds: the tail keeps the last MaxStderrLines lines and
// no more than MaxStderrBytes of them (a newline each), oldest dropped
// first, the last line always; each bound is tried at its edge.
func TestStderrTailBounds(t *testing.T) {
	numbered := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("line %02d", i+1))
		}
		return out
	}
	// n lines of about 200 bytes.
	long := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("%02d", i+1)+strings.Repeat("x", 200))
		}
		return out
	}
	big := strings.Repeat("y", MaxStderrBytes+3)
	for _, tc := range []struct {
		name        string
		in          []string
		keptFrom    int // index of the first line kept
		wantDropped int
	}{
		{"20 lines, all kept", numbered(20), 0, 0},
		{"21 lines, the first dropped", numbered(21), 1, 1},
		{"one line over 4 KiB, kept alone", append(numbered(3), big), 3, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tail stderrTail
			for _, l := range tc.in {
				tail.add(l)
			}
			got, dropped := tail.snapshot()
			if want := tc.in[tc.keptFrom:]; !slices.Equal(got, want) || dropped != tc.wantDropped {
				t.Errorf("kept %d lines from %q, dropped %d; want %d from %q, dropped %d", len(got), first(got), dropped, len(want), first(want), tc.wantDropped)
			}
		})
	}
	t.Run("bytes at the edge", func(t *testing.T) {
		lines := long(20)
		used := 0
		for _, l := range lines[1:] {
			used += len(l) + 1
		}
		// The first line makes the 20 exactly MaxStderrBytes: all kept.
		lines[0] = strings.Repeat("z", MaxStderrBytes-used-1)
		var tail stderrTail
		for _, l := range lines {
			tail.add(l)
		}
		if got, dropped := tail.snapshot(); len(got) != 20 || dropped != 0 {
			t.Errorf("%d bytes in 20 lines: kept %d, dropped %d", MaxStderrBytes, len(got), dropped)
		}
		// One byte more: the oldest line goes.
		lines[0] += "z"
		tail = stderrTail{}
		for _, l := range lines {
			tail.add(l)
		}
		if got, dropped := tail.snapshot(); len(got) != 19 || dropped != 1 || got[0] != lines[1] {
			t.Errorf("%d bytes in 20 lines: kept %d, dropped %d", MaxStderrBytes+1, len(got), dropped)
		}
	})
}

func first(ss []string) string {
	if len(ss) == 0 {
		return ""
	}
	return ss[0][:min(len(ss[0]), 12)]
}
