package verify

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Character classes shared by URI checks, content flags and error subjects.

// isTagChar reports Unicode tag characters, which render as nothing and have
// been used to hide instructions from human reviewers.
func isTagChar(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }

// isBidi reports the bidirectional formatting characters RFC 3987 §4.1
// forbids in IRIs; they can make text display in an order other than the one
// a model reads.
func isBidi(r rune) bool {
	switch {
	case r == 0x061C, r == 0x200E, r == 0x200F:
		return true
	case r >= 0x202A && r <= 0x202E:
		return true
	case r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// isZeroWidth reports characters that occupy no space when rendered.
// ZWJ and ZWNJ are included although some scripts and emoji sequences use
// them, because this class only flags content; URI segments reject only the
// narrower invisibleInName set.
func isZeroWidth(r rune) bool {
	switch r {
	case 0x00AD, 0x034F, 0x180E, 0x200B, 0x200C, 0x200D, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF:
		return true
	}
	return false
}

// invisibleInName reports characters a path segment must not contain because
// `ls` would show the name as something it is not: bidi controls, tag
// characters and the zero-width characters with no orthographic use. ZWJ and
// ZWNJ are allowed, as Persian and Indic names need them.
func invisibleInName(r rune) bool {
	if isBidi(r) || isTagChar(r) {
		return true
	}
	switch r {
	case 0x200B, 0x2060, 0xFEFF, 0x180E:
		return true
	}
	return false
}

// invisible is the union used when escaping text for display.
func invisible(r rune) bool { return isBidi(r) || isTagChar(r) || isZeroWidth(r) }

// Hidden reports characters that text shown to a person or a model must
// render as an escape rather than as themselves: C0 and C1 controls and DEL,
// the invisible classes above (tag characters, bidi controls, zero-width
// characters), every other format character (Unicode category Cf), line and
// paragraph separators, variation selectors (which can carry a hidden byte
// each) and the Hangul fillers that display as blank.
func Hidden(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case invisible(r), unicode.Is(unicode.Cf, r):
		return true
	case r == 0x2028, r == 0x2029:
		return true
	case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF:
		return true
	case r == 0x115F, r == 0x1160, r == 0x3164, r == 0xFFA0:
		return true
	}
	return false
}

// Visible writes every character of s that Hidden reports as <U+XXXX>, and
// bytes that are not UTF-8 as <0xNN> (the notation `skillfs inspect`
// uses); everything else is written as it is.
func Visible(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, "<0x%02X>", s[i])
		case Hidden(r):
			fmt.Fprintf(&b, "<U+%04X>", r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
