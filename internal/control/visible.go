package control

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/skillfs/skillfs/verify"
)

// Visible returns a document with every hidden character (verify.Hidden)
// written as <U+XXXX> and every byte that is not UTF-8 as <0xNN>, the
// notation index.md uses, so that a person reads all of what an agent
// would. Newlines and tabs stay as they are; a carriage return, an escape
// sequence or a bidi control cannot rearrange the terminal.
func Visible(b []byte) string {
	var s strings.Builder
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&s, "<0x%02X>", b[i])
		case r == '\n' || r == '\t':
			s.WriteRune(r)
		case verify.Hidden(r):
			fmt.Fprintf(&s, "<U+%04X>", r)
		default:
			s.Write(b[i : i+n])
		}
		i += n
	}
	return s.String()
}

// Inert renders text that may come from a server (an error, a reason) for
// the terminal: every control or invisible character — escape sequences
// (ESC, CSI, OSC), BEL, C1, carriage returns, tabs, bidi overrides and
// other format characters (verify.Hidden) — in the <U+XXXX> notation and
// bytes that are not UTF-8 as <0xNN>, so that nothing it holds can move
// the cursor, rewrite the screen or the title, or reorder what is shown.
// Newlines stay: a message of several lines keeps them.
func Inert(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\n') || c >= 0x7f {
			return strings.ReplaceAll(Visible([]byte(s)), "\t", "<U+0009>")
		}
	}
	return s
}
