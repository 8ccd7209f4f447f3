package textdiff

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestUnified(t *testing.T) {
	for _, tc := range []struct {
		name, a, b, want string
	}{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"from empty", "", "a\nb\n", "--- old\n+++ new\n@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"to empty", "a\n", "", "--- old\n+++ new\n@@ -1 +0,0 @@\n-a\n"},
		{"one line changed", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n",
			"--- old\n+++ new\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"},
		{"no newline at end", "a\nb", "a\nc",
			"--- old\n+++ new\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{"two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "x\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\ny\n",
			"--- old\n+++ new\n@@ -1,4 +1,4 @@\n-1\n+x\n 2\n 3\n 4\n@@ -9,4 +9,4 @@\n 9\n 10\n 11\n-12\n+y\n"},
		{"close changes share a hunk", "1\n2\n3\n4\n5\n6\n7\n8\n", "x\n2\n3\n4\n5\n6\n7\ny\n",
			"--- old\n+++ new\n@@ -1,8 +1,8 @@\n-1\n+x\n 2\n 3\n 4\n 5\n 6\n 7\n-8\n+y\n"},
		{"insert in the middle", "a\nb\nc\nd\n", "a\nb\nnew\nc\nd\n",
			"--- old\n+++ new\n@@ -1,4 +1,5 @@\n a\n b\n+new\n c\n d\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Unified("old", "new", []byte(tc.a), []byte(tc.b))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("Unified:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// TestShortestScript: on random texts the script turns a into b and is as
// short as the longest common subsequence allows.
func TestShortestScript(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 500; n++ {
		x := randLines(r, r.IntN(30))
		y := randLines(r, r.IntN(30))
		ops, err := diffLines(x, y)
		if err != nil {
			t.Fatal(err)
		}
		var gotA, gotB []string
		edits := 0
		for _, o := range ops {
			if o.i >= 0 {
				gotA = append(gotA, x[o.i])
			}
			if o.j >= 0 {
				gotB = append(gotB, y[o.j])
			}
			if o.i >= 0 && o.j >= 0 && x[o.i] != y[o.j] {
				t.Fatalf("kept %q as %q", x[o.i], y[o.j])
			}
			if o.kind() != ' ' {
				edits++
			}
		}
		if strings.Join(gotA, "") != strings.Join(x, "") || strings.Join(gotB, "") != strings.Join(y, "") {
			t.Fatalf("script does not cover both texts in order: %v %v", x, y)
		}
		if want := len(x) + len(y) - 2*lcs(x, y); edits != want {
			t.Fatalf("%d edits, want %d: %q -> %q", edits, want, x, y)
		}
	}
}

func randLines(r *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%c\n", 'a'+r.IntN(4))
	}
	return out
}

func lcs(x, y []string) int {
	dp := make([][]int, len(x)+1)
	for i := range dp {
		dp[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

// TestHostileSizes: a 1 MiB file of 100k lines, and texts within MaxLines
// that differ everywhere, are refused as too large instead of costing
// quadratic time or memory; an edit at the bound still diffs.
func TestHostileSizes(t *testing.T) {
	var big strings.Builder
	for i := 0; big.Len() < 1<<20; i++ {
		fmt.Fprintf(&big, "l%d\n", i)
	}
	if n := strings.Count(big.String(), "\n"); n < 100000 {
		t.Fatalf("%d lines", n)
	}
	if _, err := Unified("a", "b", []byte(big.String()), []byte(big.String()+"x\n")); !errors.Is(err, ErrTooLarge) {
		t.Errorf("1 MiB of 100k lines: %v, want ErrTooLarge", err)
	}
	var a, b strings.Builder
	for i := 0; i < MaxLines; i++ {
		fmt.Fprintf(&a, "a%d\n", i)
		fmt.Fprintf(&b, "b%d\n", i)
	}
	if _, err := Unified("a", "b", []byte(a.String()), []byte(b.String())); !errors.Is(err, ErrTooLarge) {
		t.Errorf("%d lines all different: %v, want ErrTooLarge", MaxLines, err)
	}
	// Exactly MaxEdits edits: diffed. One more: refused.
	base := strings.Split(strings.TrimSuffix(a.String(), "\n"), "\n")
	edit := func(n int) string {
		ls := append([]string(nil), base...)
		for i := 0; i < n/2; i++ {
			ls[i*7] = "changed"
		}
		return strings.Join(ls, "\n") + "\n"
	}
	if _, err := Unified("a", "b", []byte(a.String()), []byte(edit(MaxEdits))); err != nil {
		t.Errorf("%d edits: %v", MaxEdits, err)
	}
	if _, err := Unified("a", "b", []byte(a.String()), []byte(edit(MaxEdits+2))); !errors.Is(err, ErrTooLarge) {
		t.Errorf("%d edits: %v, want ErrTooLarge", MaxEdits+2, err)
	}
	over := strings.Repeat("x\n", MaxLines+1)
	if _, err := Unified("a", "b", []byte("x\n"), []byte(over)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("%d lines: %v, want ErrTooLarge", MaxLines+1, err)
	}
}
