package report

import "testing"

func TestCellMakesServerTextOneLine(t *testing.T) {
	if got := Cell("a\tb\nc\u202e", 0); got != "a<U+0009>b<U+000A>c<U+202E>" {
		t.Errorf("cell = %q", got)
	}
	if got := Cell("", 0); got != "-" {
		t.Errorf("empty cell = %q", got)
	}
}

// TestHumanBytes: the sizes the commands print.
func TestHumanBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 30: "5.0 GiB"} {
		if got := HumanBytes(n); got != want {
			t.Errorf("HumanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestShellJoin: a word that is not plain (a space, a quote, a $) is shown
// quoted, so the command line reads unambiguously.
func TestShellJoin(t *testing.T) {
	if got, want := ShellJoin([]string{"npx", "-y", "@acme/mcp", "my dir", "$HOME"}), `npx -y @acme/mcp "my dir" "$HOME"`; got != want {
		t.Errorf("ShellJoin = %s, want %s", got, want)
	}
}
