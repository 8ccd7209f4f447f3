//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{9, 9, 1, 1, 5}, 5},
	} {
		in := append([]float64(nil), tc.in...)
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
		if fmt.Sprint(in) != fmt.Sprint(tc.in) {
			t.Errorf("median reordered its input: %v", tc.in)
		}
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median of nothing is not NaN")
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		k    Kind
		v    float64
		want string
	}{
		{KindTime, 3, "3.00 s"},
		{KindTime, 0.0306, "30.6 ms"},
		{KindTime, 0.000764, "764 µs"},
		{KindTime, 1.91e-6, "1.91 µs"},
		{KindTime, 850e-9, "850 ns"},
		{KindTime, 0.9999, "1.00 s"},
		{KindTime, 123.4, "123 s"},
		{KindBytes, 100 << 20, "100.0 MiB"},
		{KindBytes, 1.5 * (1 << 20), "1.5 MiB"},
		{KindCount, 1, "1"},
	} {
		if got := formatValue(tc.k, tc.v); got != tc.want {
			t.Errorf("formatValue(%v, %v) = %q, want %q", tc.k, tc.v, got, tc.want)
		}
	}
	for n, want := range map[int]string{100: "100", 1000: "1,000", 10000: "10,000", 1234567: "1,234,567"} {
		if got := formatCount(n); got != want {
			t.Errorf("formatCount(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestMet(t *testing.T) {
	ratio := func(v, base, limit float64) Row {
		return Row{Kind: KindTime, Value: v, Baseline: "tmpfs", Base: base, Target: Target{Op: RatioAtMost, Limit: limit}}
	}
	for _, tc := range []struct {
		name string
		row  Row
		want string
	}{
		{"ratio under", ratio(1.4, 1, 1.5), "yes"},
		{"ratio at", ratio(3, 2, 1.5), "yes"},
		{"ratio over", ratio(1.6, 1, 1.5), "no"},
		{"ratio with no baseline value", ratio(1, 0, 1.5), "no"},
		{"failed", Row{Err: "boom", Target: Target{Op: RatioAtMost, Limit: 2}, Baseline: "tmpfs", Base: 1, Value: 1}, "no"},
		{"below", Row{Kind: KindTime, Value: 2.9, Target: Target{Op: ValueBelow, Limit: 3}}, "yes"},
		{"not below", Row{Kind: KindTime, Value: 3, Target: Target{Op: ValueBelow, Limit: 3}}, "no"},
		{"equals", Row{Kind: KindCount, Value: 1, Target: Target{Op: ValueEquals, Limit: 1}}, "yes"},
		{"two requests", Row{Kind: KindCount, Value: 2, Target: Target{Op: ValueEquals, Limit: 1}}, "no"},
		{"no target", Row{Kind: KindTime, Value: 99}, "—"},
	} {
		if got := tc.row.Met(); got != tc.want {
			t.Errorf("%s: Met() = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestTable(t *testing.T) {
	rows := []Row{
		{Skills: 1000, Transport: "http", What: "warm stat (per file)", Kind: KindTime, N: 9, Value: 1.8e-6, Baseline: "tmpfs", Base: 1.2e-6, Target: Target{Op: RatioAtMost, Limit: 1.5}},
		{Skills: 10000, Transport: "http", What: "daemon RSS after mount", Kind: KindBytes, N: 1, Value: 40 << 20, Note: "peak 41.0 MiB", Target: Target{Op: ValueBelow, Limit: 100 << 20}},
		{Skills: 100, Transport: "stdio", What: "a | b", Kind: KindCount, N: 1, Err: "read x: EIO", Target: Target{Op: ValueEquals, Limit: 1}},
		{Skills: 100, Transport: "http", What: "ls -R", Kind: KindTime, N: 3, Value: 0.02, Baseline: "tmpfs", Base: 0.01,
			Samples: []float64{0.02, 0.018, 0.03}, BaseSamples: []float64{0.01, 0.01, 0.01}},
		{Skills: 100, Transport: "http", What: "rg", Kind: KindTime, N: 3, Baseline: "tmpfs", Skip: "rg is not installed"},
	}
	want := `| skills | transport | measurement | n | skillfs (median) | baseline | baseline (median) | ratio | stability (middle half) | target | met? |
|---:|---|---|---:|---:|---|---:|---:|---|---|---|
| 1,000 | http | warm stat (per file) | 9 | 1.80 µs | tmpfs | 1.20 µs | 1.50× | — | ≤ 1.50× | yes |
| 10,000 | http | daemon RSS after mount | 1 | 40.0 MiB (peak 41.0 MiB) | — | — | — | — | < 100.0 MiB | yes |
| 100 | stdio | a \| b | 1 | failed: read x: EIO | — | — | — | — | = 1 | no |
| 100 | http | ls -R | 3 | 20.0 ms | tmpfs | 10.0 ms | 2.00× | pairs 1.90–2.50× | — | — |
| 100 | http | rg | 3 | skipped: rg is not installed | tmpfs | — | — | — | — | — |
`
	if got := Table(rows); got != want {
		t.Errorf("Table:\n%s\nwant:\n%s", got, want)
	}
	rep := &Report{Command: "go run ./bench", Machine: Machine{CPUs: 2, Model: "cpu", Memory: 24 << 30, Kernel: "Linux 6", Go: "go1.26"},
		Started: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC), Elapsed: 90 * time.Second, Rows: rows, Notes: []string{"a note"}}
	md := rep.Markdown()
	for _, s := range []string{"2 CPUs (cpu), 24.0 GiB memory, Linux 6, go1.26", "took 1m30s", want, "- a note\n"} {
		if !strings.Contains(md, s) {
			t.Errorf("report lacks %q:\n%s", s, md)
		}
	}
}

// rotateReps rotates which side goes first and still returns each side's
// own times.
func TestRotateReps(t *testing.T) {
	var order []string
	side := func(name string, base time.Duration) func() (time.Duration, error) {
		n := 0
		return func() (time.Duration, error) {
			order = append(order, name)
			n++
			return base + time.Duration(n), nil
		}
	}
	ds, err := rotateReps(context.Background(), 3, side("a", 100), side("b", 200), side("c", 300))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(order, " "), "a b c b c a c a b"; got != want {
		t.Errorf("order %q, want %q", got, want)
	}
	if got := fmt.Sprint(ds); got != "[[101ns 102ns 103ns] [201ns 202ns 203ns] [301ns 302ns 303ns]]" {
		t.Errorf("times %v", got)
	}
}

// abReps alternates which side goes first and still returns each side's
// own times.
func TestABReps(t *testing.T) {
	var order []string
	side := func(name string, base time.Duration) func(int) (time.Duration, error) {
		return func(rep int) (time.Duration, error) {
			order = append(order, fmt.Sprintf("%s%d", name, rep))
			return base + time.Duration(rep), nil
		}
	}
	as, bs, err := abReps(context.Background(), 4, side("a", 100), side("b", 200))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(order, " "), "a0 b0 b1 a1 a2 b2 b3 a3"; got != want {
		t.Errorf("order %q, want %q", got, want)
	}
	if fmt.Sprint(as) != "[100ns 101ns 102ns 103ns]" || fmt.Sprint(bs) != "[200ns 201ns 202ns 203ns]" {
		t.Errorf("a %v, b %v", as, bs)
	}

	boom := errors.New("boom")
	_, _, err = abReps(context.Background(), 3, side("a", 0), func(rep int) (time.Duration, error) {
		if rep == 1 {
			return 0, boom
		}
		return 1, nil
	})
	if !errors.Is(err, boom) {
		t.Errorf("abReps error %v, want boom", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := abReps(ctx, 3, side("a", 0), side("b", 0)); !errors.Is(err, context.Canceled) {
		t.Errorf("abReps on a canceled context: %v", err)
	}
}

func TestSpread(t *testing.T) {
	for _, tc := range []struct {
		n, k int
		want string
	}{
		{10, 3, "[0 3 6]"},
		{4, 10, "[0 1 2 3]"},
		{1, 1, "[0]"},
		{0, 5, "[]"},
	} {
		if got := fmt.Sprint(spread(tc.n, tc.k)); got != tc.want {
			t.Errorf("spread(%d, %d) = %s, want %s", tc.n, tc.k, got, tc.want)
		}
	}
}

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // an error substring, or the sizes/reps/stdio/walkers parsed
	}{
		{nil, "[100 1000 10000] 9 1000 [1 4 16]"},
		{[]string{"-sizes", "100, 2000", "-reps", "3", "-stdio", "0", "-walkers", "1, 64"}, "[100 2000] 3 0 [1 64]"},
		{[]string{"-walkers", "0"}, "not a number of walkers"},
		{[]string{"-walkers", "65"}, "not a number of walkers"},
		{[]string{"-walkers", "4,x"}, "not a number of walkers"},
		{[]string{"-sizes", "5"}, "not a tree size"},
		{[]string{"-sizes", "x"}, "not a tree size"},
		{[]string{"-reps", "0"}, "at least 1"},
		{[]string{"-stdio", "3"}, "not a tree size"},
		{[]string{"extra"}, "unexpected arguments"},
	} {
		var sink strings.Builder
		o, err := parseFlags(tc.args, &sink)
		got := fmt.Sprintf("%v %d %d %v", o.Sizes, o.Reps, o.StdioSize, o.Walkers)
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("parseFlags(%q) = %s, want %s", tc.args, got, tc.want)
		}
	}
}

// Stability: a paired row gives the middle half of its pairs' ratios,
// whatever the medians' ratio; an unpaired one its samples' middle half
// around their median; under three samples there is nothing to say.
func TestStability(t *testing.T) {
	cases := []struct {
		name string
		r    Row
		want string
	}{
		{"paired", Row{Samples: []float64{2, 3, 4, 10, 6}, BaseSamples: []float64{2, 2, 2, 2, 2}}, "pairs 1.50–3.00×"},
		// The pairs are steady even though the machine slowed down for
		// the last two of them.
		{"paired drift", Row{Samples: []float64{1.2, 1.2, 2.4, 2.4}, BaseSamples: []float64{1, 1, 2, 2}}, "pairs 1.20–1.20×"},
		{"unpaired", Row{Samples: []float64{90, 100, 110, 100, 100}}, "±0%"},
		{"unpaired spread", Row{Samples: []float64{80, 100, 120}}, "±10%"},
		{"too few", Row{Samples: []float64{1, 2}, BaseSamples: []float64{1, 1}}, "—"},
		{"failed", Row{Samples: []float64{1, 2, 3}, Err: "x"}, "—"},
	}
	for _, c := range cases {
		if got := c.r.Stability(); got != c.want {
			t.Errorf("%s: Stability() = %q, want %q", c.name, got, c.want)
		}
	}
	var r Row
	r.measured([]float64{3, 1, 2}, []float64{2, 2, 5})
	if r.Value != 2 || r.Base != 2 || len(r.Samples) != 3 {
		t.Errorf("measured: value %v, base %v, %d samples; want 2, 2, 3", r.Value, r.Base, len(r.Samples))
	}
}
