//go:build linux

package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// A Kind says what a row's numbers are.
type Kind int

const (
	KindTime  Kind = iota // seconds
	KindBytes             // bytes
	KindCount             // a count
)

// A TargetOp is how a row's value is held against its target.
type TargetOp int

const (
	NoTarget    TargetOp = iota
	RatioAtMost          // skillfs/baseline ≤ Limit
	ValueBelow           // value < Limit (in the row's Kind)
	ValueEquals          // value == Limit
)

// A Target is the goal for one row.
type Target struct {
	Op    TargetOp
	Limit float64
}

// A Row is one line of the table: skillfs's median against a baseline
// measured in the same run, or a single figure with no baseline.
type Row struct {
	Skills    int
	Transport string
	What      string
	Kind      Kind
	N         int     // samples behind the medians
	Value     float64 // skillfs's median, in the Kind's unit
	Note      string  // shown after the value
	Baseline  string  // what Base measures; "" when there is none
	Base      float64 // the baseline's median
	Target    Target
	Err       string // why the measurement failed; Value is then meaningless
	Skip      string // why the row was not measured (a reader is not installed)
	// Samples and BaseSamples are what the medians were taken of, in the
	// order measured. Samples of the same index were measured one right
	// after the other (abReps, rotateReps), so their ratio is free of
	// whatever the machine did between pairs.
	Samples, BaseSamples []float64
}

// measured sets the row's medians from its samples, and keeps them for
// Stability. base is nil for a row without a baseline.
func (r *Row) measured(value, base []float64) {
	r.Samples, r.BaseSamples = value, base
	r.Value = median(value)
	if base != nil {
		r.Base = median(base)
	}
}

// Stability says how far the samples behind the row spread, so that a
// ratio taken on a busy machine reads as what it is. For a row measured
// in pairs against its baseline: the middle half of the pairs' ratios
// (the 25th to the 75th percentile). Otherwise: the middle half of
// skillfs's samples, as a share of their median. "—" under three samples.
func (r Row) Stability() string {
	if len(r.Samples) < 3 || r.Err != "" || r.Skip != "" {
		return "—"
	}
	if len(r.BaseSamples) == len(r.Samples) {
		ratios := make([]float64, 0, len(r.Samples))
		for i, v := range r.Samples {
			if r.BaseSamples[i] > 0 {
				ratios = append(ratios, v/r.BaseSamples[i])
			}
		}
		if len(ratios) >= 3 {
			return fmt.Sprintf("pairs %.2f–%.2f×", quantile(ratios, 0.25), quantile(ratios, 0.75))
		}
	}
	m := median(r.Samples)
	if m <= 0 {
		return "—"
	}
	return fmt.Sprintf("±%.0f%%", 100*(quantile(r.Samples, 0.75)-quantile(r.Samples, 0.25))/2/m)
}

// quantile is the q-th quantile of xs, interpolated between neighbours.
func quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	pos := q * float64(len(s)-1)
	lo := int(pos)
	if lo+1 >= len(s) {
		return s[lo]
	}
	return s[lo] + (pos-float64(lo))*(s[lo+1]-s[lo])
}

// Ratio is skillfs's median over the baseline's.
func (r Row) Ratio() (float64, bool) {
	if r.Baseline == "" || r.Err != "" || r.Skip != "" || r.Base <= 0 {
		return 0, false
	}
	return r.Value / r.Base, true
}

// Met says whether the row meets its target: "yes", "no", or "—" when it
// has none.
func (r Row) Met() string {
	if r.Target.Op == NoTarget || r.Skip != "" {
		return "—"
	}
	if r.Err != "" {
		return "no"
	}
	ok := false
	switch r.Target.Op {
	case RatioAtMost:
		ratio, has := r.Ratio()
		ok = has && ratio <= r.Target.Limit
	case ValueBelow:
		ok = r.Value < r.Target.Limit
	case ValueEquals:
		ok = r.Value == r.Target.Limit
	}
	if ok {
		return "yes"
	}
	return "no"
}

// TargetString renders the target in the row's units.
func (r Row) TargetString() string {
	switch r.Target.Op {
	case RatioAtMost:
		return "≤ " + formatRatio(r.Target.Limit)
	case ValueBelow:
		return "< " + formatValue(r.Kind, r.Target.Limit)
	case ValueEquals:
		return "= " + formatValue(r.Kind, r.Target.Limit)
	}
	return "—"
}

// median returns the median of xs (the mean of the middle two for an even
// count) and NaN for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// seconds converts durations for median.
func seconds(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = d.Seconds()
	}
	return out
}

func formatValue(k Kind, v float64) string {
	switch k {
	case KindTime:
		return formatSeconds(v)
	case KindBytes:
		return fmt.Sprintf("%.1f MiB", v/(1<<20))
	case KindCount:
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprint(v)
}

// formatSeconds prints three significant digits in a unit that keeps the
// number between 1 and 1000.
func formatSeconds(s float64) string {
	if s == 0 {
		return "0 s" // an idle process's CPU time, in whole clock ticks
	}
	units := []struct {
		name  string
		scale float64
	}{{"s", 1}, {"ms", 1e-3}, {"µs", 1e-6}, {"ns", 1e-9}}
	for _, u := range units {
		if s >= u.scale*0.9995 || u.name == "ns" {
			return sig3(s/u.scale) + " " + u.name
		}
	}
	panic("unreachable")
}

func sig3(v float64) string {
	switch {
	case v >= 99.95:
		return fmt.Sprintf("%.0f", v)
	case v >= 9.995:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func formatRatio(r float64) string { return fmt.Sprintf("%.2f×", r) }

// formatCount writes 10000 as 10,000.
func formatCount(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Table renders rows as one Markdown table.
func Table(rows []Row) string {
	var b strings.Builder
	b.WriteString("| skills | transport | measurement | n | skillfs (median) | baseline | baseline (median) | ratio | stability (middle half) | target | met? |\n")
	b.WriteString("|---:|---|---|---:|---:|---|---:|---:|---|---|---|\n")
	for _, r := range rows {
		value := formatValue(r.Kind, r.Value)
		switch {
		case r.Skip != "":
			value = "skipped: " + r.Skip
		case r.Err != "":
			value = "failed: " + r.Err
		case r.Note != "":
			value += " (" + r.Note + ")"
		}
		base, baseVal, ratio := "—", "—", "—"
		if r.Baseline != "" {
			base = r.Baseline
			if r.Skip == "" {
				baseVal = formatValue(r.Kind, r.Base)
			}
		}
		if x, ok := r.Ratio(); ok {
			ratio = formatRatio(x)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |\n",
			formatCount(r.Skills), r.Transport, cell(r.What), r.N, cell(value), cell(base), baseVal, ratio, r.Stability(), r.TargetString(), r.Met())
	}
	return b.String()
}

// cell keeps a value from breaking the table.
func cell(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}
