package verify

import "testing"

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, é and 漢字":      "plain text, é and 漢字",
		"a\x1b[31mred\x1b[0m":       "a<U+001B>[31mred<U+001B>[0m",
		"tab\there\nline":           "tab<U+0009>here<U+000A>line",
		"bidi \u202eevil":           "bidi <U+202E>evil",
		"bad \xff byte":             "bad <0xFF> byte",
		"zero\u200bwidth\U000e0041": "zero<U+200B>width<U+E0041>",
	} {
		if got := Visible(in); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
	}
}
