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
