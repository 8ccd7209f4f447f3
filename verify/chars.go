package verify

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
