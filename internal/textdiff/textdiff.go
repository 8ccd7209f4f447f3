package textdiff

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// The bounds on the work of one diff (see the package doc).
const (
	// MaxLines is the most lines either text may have.
	MaxLines = 20000
	// MaxEdits is the most lines a diff may insert and delete in all.
	MaxEdits = 1000
)

// ErrTooLarge: the texts are past MaxLines or differ by more than MaxEdits
// lines; no diff is written.
var ErrTooLarge = errors.New("too large to diff")

// Context is the number of unchanged lines shown around each change, as
// diff -u shows.
const Context = 3

// Unified returns the unified diff of a and b, headed "--- oldName" and
// "+++ newName", with Context lines of context; "" when they are equal.
// A text that does not end with a newline is marked as diff -u marks it.
func Unified(oldName, newName string, a, b []byte) (string, error) {
	if bytes.Equal(a, b) {
		return "", nil
	}
	x, y := splitLines(a), splitLines(b)
	if len(x) > MaxLines || len(y) > MaxLines {
		return "", fmt.Errorf("%d and %d lines, over %d: %w", len(x), len(y), MaxLines, ErrTooLarge)
	}
	ops, err := diffLines(x, y)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldName, newName)
	writeHunks(&out, x, y, ops)
	return out.String(), nil
}

// splitLines cuts text after each newline; the last line may lack one.
func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	n := bytes.Count(b, []byte{'\n'})
	lines := make([]string, 0, n+1)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			lines = append(lines, string(b))
			break
		}
		lines = append(lines, string(b[:i+1]))
		b = b[i+1:]
	}
	return lines
}

// An op is one line of the edit script: x[i] kept as y[j], x[i] deleted
// (j < 0) or y[j] inserted (i < 0).
type op struct{ i, j int }

func (o op) kind() byte {
	switch {
	case o.j < 0:
		return '-'
	case o.i < 0:
		return '+'
	}
	return ' '
}

// diffLines is the shortest edit script from x to y (Myers), every line of
// both in order.
func diffLines(x, y []string) ([]op, error) {
	// Lines as numbers: comparisons in the inner loop are then of ints.
	ids := map[string]int32{}
	num := func(ls []string) []int32 {
		out := make([]int32, len(ls))
		for i, l := range ls {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	a, b := num(x), num(y)
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	mid, err := myers(a[pre:len(a)-suf], b[pre:len(b)-suf])
	if err != nil {
		return nil, err
	}
	ops := make([]op, 0, pre+len(mid)+suf)
	for k := 0; k < pre; k++ {
		ops = append(ops, op{k, k})
	}
	for _, o := range mid {
		if o.i >= 0 {
			o.i += pre
		}
		if o.j >= 0 {
			o.j += pre
		}
		ops = append(ops, o)
	}
	for k := suf; k > 0; k-- {
		ops = append(ops, op{len(a) - k, len(b) - k})
	}
	return ops, nil
}

// myers is the O(ND) algorithm: for each d, the furthest x reached on each
// diagonal k = x-y, kept per d (2d+1 values) to walk the path back.
func myers(a, b []int32) ([]op, error) {
	n, m := len(a), len(b)
	if abs(n-m) > MaxEdits { // the edit distance is at least |n-m|
		return nil, fmt.Errorf("%d and %d lines differ by more than %d: %w", n, m, MaxEdits, ErrTooLarge)
	}
	trace, found := forward(a, b)
	if !found {
		return nil, fmt.Errorf("%d and %d lines differ by more than %d: %w", n, m, MaxEdits, ErrTooLarge)
	}
	return walkBack(trace, n, m), nil
}

// forward runs myers's forward search, d by d up to MaxEdits, and returns
// the V of every d tried; found says whether the last one reaches (n, m),
// so the shortest script has len(trace)-1 edits.
func forward(a, b []int32) (trace [][]int32, found bool) {
	n, m := len(a), len(b)
	prev := []int32{0} // d = -1, as if: V[1] = 0
	for d := 0; d <= MaxEdits && d <= n+m; d++ {
		v := make([]int32, 2*d+1)
		for k := -d; k <= d; k += 2 {
			var x int
			switch {
			case d == 0:
				x = 0
			case k == -d || (k != d && prev[k-1+d-1] < prev[k+1+d-1]):
				x = int(prev[k+1+d-1]) // down: an insertion
			default:
				x = int(prev[k-1+d-1]) + 1 // right: a deletion
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[k+d] = int32(x)
			if x >= n && y >= m {
				found = true
				break
			}
		}
		trace = append(trace, v)
		prev = v
		if found {
			return trace, true
		}
	}
	return trace, false
}

// walkBack turns a trace that reached (n, m) into the edit script, from
// (0, 0) to (n, m).
func walkBack(trace [][]int32, n, m int) []op {
	// Walk back from (n, m): each d is a snake (kept lines) after one
	// insertion or deletion.
	var rev []op
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		pv := trace[d-1] // indexed by k + d-1
		k := x - y
		down := k == -d || (k != d && pv[k-1+d-1] < pv[k+1+d-1])
		pk := k - 1
		if down {
			pk = k + 1
		}
		px := int(pv[pk+d-1])
		py := px - pk
		mx := px + 1 // after the step
		if down {
			mx = px
		}
		for x > mx {
			x--
			y--
			rev = append(rev, op{x, y})
		}
		if down {
			rev = append(rev, op{-1, py})
		} else {
			rev = append(rev, op{px, -1})
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		x--
		y--
		rev = append(rev, op{x, y})
	}
	ops := make([]op, len(rev))
	for i, o := range rev {
		ops[len(rev)-1-i] = o
	}
	return ops
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// writeHunks writes ops as -u hunks.
func writeHunks(out *strings.Builder, x, y []string, ops []op) {
	// The changed ops, and the runs of context around them.
	for start := 0; start < len(ops); {
		for start < len(ops) && ops[start].kind() == ' ' {
			start++
		}
		if start == len(ops) {
			return
		}
		lo := max(start-Context, 0)
		// Extend over changes separated by at most 2*Context kept lines.
		hi := start
		for {
			for hi < len(ops) && ops[hi].kind() != ' ' {
				hi++
			}
			kept := 0
			for hi+kept < len(ops) && ops[hi+kept].kind() == ' ' {
				kept++
			}
			if hi+kept == len(ops) || kept > 2*Context {
				hi = min(hi+Context, len(ops))
				break
			}
			hi += kept
		}
		writeHunk(out, x, y, ops[lo:hi])
		start = hi
	}
}

func writeHunk(out *strings.Builder, x, y []string, ops []op) {
	var ai, an, bi, bn int
	ai, bi = -1, -1
	for _, o := range ops {
		if o.i >= 0 {
			if ai < 0 {
				ai = o.i
			}
			an++
		}
		if o.j >= 0 {
			if bi < 0 {
				bi = o.j
			}
			bn++
		}
	}
	// An empty side (a whole text empty: context lines would fill it
	// otherwise) is numbered 0, as diff -u numbers it.
	ai++
	bi++
	fmt.Fprintf(out, "@@ -%s +%s @@\n", span(ai, an), span(bi, bn))
	for _, o := range ops {
		var line string
		if o.i >= 0 {
			line = x[o.i]
		} else {
			line = y[o.j]
		}
		out.WriteByte(o.kind())
		out.WriteString(line)
		if !strings.HasSuffix(line, "\n") {
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

func span(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}
