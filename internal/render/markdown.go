package render

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/skillfs/skillfs/internal/control/wire"
	"github.com/skillfs/skillfs/verify"
)

// index.md is read by models, so every string a server controls (paths,
// names, descriptions, flags, details) is written in a form that cannot
// change the document's structure and cannot hide anything:
//
//   - In running text (mdText) the string becomes one line: runs of line
//     breaks and other ASCII white space collapse to one space, and every
//     character Markdown gives a meaning inline is backslash-escaped. A
//     server's text therefore never starts a line, so it cannot open a
//     heading, list, quote, table or HTML block, and cannot open emphasis,
//     a link, an image, a code span, raw HTML or an entity reference.
//   - In a code span (mdCode) the fence is one backtick longer than the
//     longest backtick run inside, and the content is padded with a space
//     when it starts or ends with a backtick or a space (CommonMark strips
//     exactly one), so the span ends where skillfs ends it.
//   - In both, every verify.Hidden character (controls, tag characters,
//     bidi controls, zero-width and other format characters, variation
//     selectors) is written visibly as <U+XXXX>, and a byte that is not
//     UTF-8 as <0xNN>. The notation is not Markdown (no scheme, no tag
//     name), so it shows as written; in running text a server's own "<"
//     is escaped as "\<", so the notation cannot be forged there.
//
// indexNotation is the sentence index.md carries to say so; index.json keeps
// every string as the server sent it.

const indexNotation = "Text from servers is escaped so that it cannot change this page: `<U+XXXX>` stands for an invisible, formatting or control character (code point XXXX), `<0xNN>` for a byte that is not UTF-8, and a backslash before punctuation is Markdown escaping. index.json has the exact strings.\n"

// mdTextMax bounds how much of one description index.md shows, in runes
// before escaping.
const mdTextMax = 300

// mdSpecial are the characters escaped in running text: those that open an
// inline construct in CommonMark or GitHub Flavored Markdown (emphasis,
// strikethrough, code, links and images, raw HTML and autolinks, entity
// references, table cells, math in some renderers), the backslash itself,
// and "#" so that no server text reads as a heading marker.
const mdSpecial = "\\`*_[]<>#|!&~$"

// mdText renders untrusted text for a Markdown line, cut to mdTextMax runes.
func mdText(s string) string { return mdTextN(s, mdTextMax) }

// mdTextN is mdText cut to max runes.
func mdTextN(s string, max int) string {
	return escapeText(s, true, max, func(b *strings.Builder, r rune) bool {
		if r < utf8.RuneSelf && strings.IndexByte(mdSpecial, byte(r)) >= 0 {
			b.WriteByte('\\')
			b.WriteByte(byte(r))
			return true
		}
		return false
	}, "<", ">")
}

// escapeText is the walk mdText and xmlText share. With oneLine, runs of
// collapsible white space become one space (none leading) and the text is
// cut to max runes with "…"; otherwise nothing is collapsed or cut. A byte
// that is not UTF-8 is written <0xNN> and a verify.Hidden character
// <U+XXXX>, the angle brackets being lt and gt; every other rune is written
// by esc when it returns true, else as it is.
func escapeText(s string, oneLine bool, max int, esc func(b *strings.Builder, r rune) bool, lt, gt string) string {
	var b strings.Builder
	runes := 0
	space := false
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if oneLine && isCollapsible(r) {
			space = true
			i += n
			continue
		}
		if oneLine && runes == max {
			b.WriteString("…")
			break
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		runes++
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, "%s0x%02X%s", lt, s[i], gt)
		case verify.Hidden(r):
			fmt.Fprintf(&b, "%sU+%04X%s", lt, r, gt)
		case esc(&b, r):
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// isCollapsible reports the white space mdText turns into one space: ASCII
// white space and the line separators NEL, LS and PS.
func isCollapsible(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// mdCode renders untrusted text as one CommonMark code span.
func mdCode(s string) string {
	c := verify.Visible(s)
	if c == "" {
		return "(empty)"
	}
	longest, run := 0, 0
	for i := 0; i < len(c); i++ {
		if c[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	first, last := c[0], c[len(c)-1]
	if first == '`' || last == '`' || (first == ' ' && last == ' ' && strings.Trim(c, " ") != "") {
		c = " " + c + " "
	}
	return fence + c + fence
}

// skillLine renders one skill of index.md as a list item, newline included.
func skillLine(s SkillInfo) string {
	// The name is a code span inside the strong emphasis: backticks on both
	// sides make the emphasis open and close where the name starts and
	// ends, whatever characters it holds.
	name := "(no name)"
	if s.Name != "" {
		name = "**" + mdCode(s.Name) + "**"
	}
	var notes []string
	if s.State != wire.SkillAvailable {
		st := mdText(string(s.State))
		if s.Reason != "" {
			st += ": " + mdText(s.Reason)
		}
		if s.State == wire.SkillFailed && s.Detail != "" {
			st += " — " + mdTextN(s.Detail, 160)
		}
		notes = append(notes, st)
	}
	if len(s.Flags) > 0 {
		fl := make([]string, len(s.Flags))
		for i, x := range s.Flags {
			fl[i] = mdText(x)
		}
		notes = append(notes, "flags: "+strings.Join(fl, ", "))
	}
	if len(s.Collisions) > 0 {
		// A few are enough to warn; index.json counts them all.
		const shown = 3
		cs := make([]string, 0, shown+1)
		for i, p := range s.Collisions {
			if i == shown {
				break
			}
			cs = append(cs, mdCode(p))
		}
		if more := max(s.CollisionCount, len(s.Collisions)) - len(cs); more > 0 {
			cs = append(cs, fmt.Sprintf("%d more", more))
		}
		notes = append(notes, "same name as "+strings.Join(cs, ", "))
	}
	line := fmt.Sprintf("- %s (%s, from server %s): %s", name, mdCode(s.Path+"/SKILL.md"), mdCode(s.Origin), mdText(s.Description))
	if len(notes) > 0 {
		// Parentheses, not brackets: "[…]" right after other text may read
		// as a link to a renderer.
		line += " (" + strings.Join(notes, "; ") + ")"
	}
	return line + "\n"
}

// The <available_skills> block (index_available_skills) is XML, so a
// server's string there is written as XML character data that cannot end
// an element or open one: "&", "<", ">" and both quotes become entity
// references, and every hidden character and invalid byte is written in
// index.md's notation, itself escaped (&lt;U+XXXX&gt;, &lt;0xNN&gt;), so
// that no control character reaches the XML either. The block sits in a
// fenced code block, whose lines all start with "<": a Markdown renderer
// shows it as written.

// xmlText renders untrusted text as XML character data. oneLine collapses
// white space as mdText does and cuts the text to mdTextMax runes; without
// it (a path) nothing is collapsed or cut.
func xmlText(s string, oneLine bool) string { return xmlTextN(s, oneLine, mdTextMax) }

// xmlTextN is xmlText cut to max runes.
func xmlTextN(s string, oneLine bool, max int) string {
	return escapeText(s, oneLine, max, func(b *strings.Builder, r rune) bool {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&apos;")
		default:
			return false
		}
		return true
	}, "&lt;", "&gt;")
}
