package hostile

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// filler returns exactly n bytes of deterministic ASCII text: numbered
// 1 KiB lines naming label, so that a mismatch in a test's diff says where
// the bytes came from and at which offset. Lines are copied from one
// template, which keeps 16 MiB cheap even under the race detector.
func filler(label string, n int) []byte { return appendFiller(nil, label, n) }

// appendFiller appends filler(label, n) to b, growing b once: a big file
// with a head of its own (oversize-skillmd) is then built in one buffer.
func appendFiller(b []byte, label string, n int) []byte {
	start := len(b)
	b = slices.Grow(b, n)
	fillerBlocks(label, n, func(p []byte) { b = append(b, p...) })
	return b[: start+n : start+n]
}

// fillerBlocks passes filler(label, n) to fn in order, in blocks of at
// most 64 KiB of one buffer that fn must not keep: a big file is hashed
// or sent without a buffer of its size, which a test's machine may be
// slow to provide (each fresh page is a fault).
func fillerBlocks(label string, n int, fn func([]byte)) {
	const lineLen = 1 << 10
	const blockLen = 64 * lineLen
	tmpl := make([]byte, lineLen)
	for i := range tmpl {
		tmpl[i] = '.'
	}
	// The line number goes after the label, or at the end of a line that
	// the label fills.
	at := min(copy(tmpl, label+" line "), lineLen-9)
	tmpl[lineLen-1] = '\n'
	block := make([]byte, blockLen)
	var num [8]byte
	for off, line := 0, 0; off < n; {
		k := min(blockLen, n-off)
		// Whole lines, the last one cut at k.
		for j := 0; j < k; j, line = j+lineLen, line+1 {
			copy(block[j:], tmpl)
			copy(block[j+at:], appendPadded(num[:0], line, 8))
		}
		fn(block[:k])
		off += k
	}
}

// appendPadded appends i in decimal, zero-padded to width digits.
func appendPadded(b []byte, i, width int) []byte {
	s := strconv.Itoa(i)
	for range width - len(s) {
		b = append(b, '0')
	}
	return append(b, s...)
}

// yamlQuote renders s as a YAML double-quoted scalar. JSON string syntax is
// a subset of YAML's double-quoted style, so the YAML reader gets back
// exactly s.
func yamlQuote(s string) string { return string(appendYAMLQuote(nil, s)) }

// appendYAMLQuote appends yamlQuote(s) to b: json.Marshal's bytes for s,
// written without it when s needs no escaping, as nearly every name and
// description does (huge-list-page renders 27,000 of them a page).
func appendYAMLQuote(b []byte, s string) []byte {
	if !jsonVerbatim(s) {
		q, _ := json.Marshal(s) // a string always encodes
		return append(b, q...)
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// jsonVerbatim reports whether json.Marshal writes s between quotes as
// it is: valid UTF-8 with no ASCII byte textEscape escapes, and neither
// U+2028 nor U+2029.
func jsonVerbatim(s string) bool {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if textEscape[c] != 0 {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += size
	}
	return true
}

// skillMD renders a SKILL.md: frontmatter with name and description, then
// extraYAML (whole lines, already formatted), then body.
func skillMD(name, description, extraYAML, body string) []byte {
	b := make([]byte, 0, len("---\nname: \"\"\ndescription: \"\"\n---\n")+len(name)+len(description)+len(extraYAML)+len(body))
	b = append(b, "---\nname: "...)
	b = appendYAMLQuote(b, name)
	b = append(b, "\ndescription: "...)
	b = appendYAMLQuote(b, description)
	b = append(b, '\n')
	b = append(b, extraYAML...)
	b = append(b, "---\n"...)
	return append(b, body...)
}

// frontmatter is the JSON rendering of the frontmatter skillMD writes,
// with extra holding what extraYAML says.
func frontmatter(name, description string, extra map[string]any) map[string]any {
	fm := map[string]any{"name": name, "description": description}
	for k, v := range extra {
		fm[k] = v
	}
	return fm
}

// tagEncode hides s in Unicode tag characters (U+E0000 + the ASCII code),
// which render as nothing in most editors and terminals.
func tagEncode(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 {
			b.WriteRune(0xE0000 + r)
		}
	}
	return b.String()
}
