package verify

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// A Flag marks content a user should know about before letting a model act
// on it. Flags are reported (index.json, xattrs), never enforced here: the
// mount already ignores every permission a skill asks for.
type Flag string

const (
	// FlagTagChars: Unicode tag characters U+E0000–U+E007F, invisible when
	// rendered, known to hide instructions.
	FlagTagChars Flag = "unicode-tag-chars"
	// FlagBidi: bidirectional formatting characters, which make text display
	// in another order than the one a model reads.
	FlagBidi Flag = "bidi-controls"
	// FlagZeroWidth: zero-width characters (ZWSP, ZWNJ, ZWJ, word joiner,
	// invisible operators, soft hyphen, CGJ, BOM other than a leading one).
	// ZWJ inside emoji sequences flags too.
	FlagZeroWidth Flag = "zero-width-chars"
	// FlagHTMLComment: "<!--" in a SKILL.md, hidden when rendered, read by
	// the model.
	FlagHTMLComment Flag = "html-comment"
	// FlagAllowedTools: a non-empty allowed-tools field in the frontmatter.
	FlagAllowedTools Flag = "allowed-tools"
	// FlagHooks: a non-empty hooks field in the frontmatter.
	FlagHooks Flag = "hooks"
	// FlagPermissions: another frontmatter field that grants tools or runs
	// commands; permissionFields lists them.
	FlagPermissions Flag = "permission-fields"
	// FlagCommandExpansion: a !`cmd` pre-prompt expansion (or a ```! block)
	// in a SKILL.md body, which some hosts run before the model sees the text.
	FlagCommandExpansion Flag = "command-expansion"
)

// permissionFields are the top-level frontmatter fields, besides
// allowed-tools and hooks, that some host or agent runtime reads as a grant
// of tools, servers or permissions, or as a command to run. Keys are
// compared after lowercasing and dropping "-", "_" and spaces, so
// permission-mode, permissionMode and permission_mode are one field.
var permissionFields = map[string]bool{
	"permissions": true, "permissionmode": true, "tools": true, "mcpservers": true,
	"allowedcommands": true, "allowedpaths": true, "allowedhosts": true,
	"command": true, "commands": true, "run": true, "exec": true, "execute": true,
	"shell": true, "script": true, "scripts": true, "entrypoint": true,
	"setup": true, "install": true, "preinstall": true, "postinstall": true,
}

func normalizeField(k string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '-', '_', ' ':
			return -1
		}
		return r
	}, strings.ToLower(k))
}

// FrontmatterFlags reports permission-widening fields at the top level of fm
// and invisible or bidi characters in any of its keys or strings. A field
// whose value is null, false, "" or an empty list or object requests nothing
// and is not flagged. The result is sorted and deduplicated.
func FrontmatterFlags(fm map[string]any) []Flag {
	set := map[Flag]bool{}
	for k, v := range fm {
		if isEmptyValue(v) {
			continue
		}
		switch f := normalizeField(k); {
		case f == "allowedtools":
			set[FlagAllowedTools] = true
		case f == "hooks":
			set[FlagHooks] = true
		case permissionFields[f]:
			set[FlagPermissions] = true
		}
	}
	scanValue(fm, set, 0)
	return sortedFlags(set)
}

func isEmptyValue(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return strings.TrimSpace(x) == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// scanValue looks for hidden characters in keys and strings; depth guards
// against a hand-built cyclic or absurdly deep value.
func scanValue(v any, set map[Flag]bool, depth int) {
	if depth > MaxFrontmatterDepth {
		return
	}
	switch x := v.(type) {
	case string:
		scanText(x, set)
	case json.Number:
		scanText(string(x), set)
	case []any:
		for _, e := range x {
			scanValue(e, set, depth+1)
		}
	case map[string]any:
		for k, e := range x {
			scanText(k, set)
			scanValue(e, set, depth+1)
		}
	}
}

func scanText(s string, set map[Flag]bool) {
	for _, r := range s {
		addRuneFlag(r, set)
	}
}

func addRuneFlag(r rune, set map[Flag]bool) {
	switch {
	case isTagChar(r):
		set[FlagTagChars] = true
	case isBidi(r):
		set[FlagBidi] = true
	case isZeroWidth(r):
		set[FlagZeroWidth] = true
	}
}

// hasCommandExpansion says b holds an inline !`cmd` or a line opening a
// ```! block: what the regexp "!`[^`\n]+`|(?m)^[ \t]*```!" matches
// (TestCommandExpansionIsTheRegexp holds the two equal). Both forms hold a
// '!', so only the bytes around each '!' are looked at; the regexp was
// most of the CPU of a SKILL.md's first serve.
func hasCommandExpansion(b []byte) bool {
	for i := 0; ; i++ {
		k := bytes.IndexByte(b[i:], '!')
		if k < 0 {
			return false
		}
		i += k
		if inlineCommand(b[i+1:]) || opensCommandBlock(b[:i]) {
			return true
		}
	}
}

// inlineCommand says rest (what follows a '!') is `cmd`: a backquote, at
// least one byte that is neither a backquote nor a newline, a backquote.
func inlineCommand(rest []byte) bool {
	if len(rest) < 3 || rest[0] != '`' {
		return false
	}
	end := bytes.IndexAny(rest[1:], "`\n")
	return end > 0 && rest[1+end] == '`'
}

// opensCommandBlock says before (what precedes a '!') ends a line's start
// of spaces and tabs followed by ```.
func opensCommandBlock(before []byte) bool {
	fence, ok := bytes.CutSuffix(before, []byte("```"))
	if !ok {
		return false
	}
	line := fence[bytes.LastIndexByte(fence, '\n')+1:]
	return len(bytes.Trim(line, " \t")) == 0
}

// ContentFlags reports hidden characters in content and, when it is a
// SKILL.md, HTML comments, command expansions in the body and the
// frontmatter's own flags (when the frontmatter parses). A leading byte
// order mark is not a zero-width character. Invalid UTF-8 is skipped, so
// binary files flag only where they happen to hold these characters.
// The result is sorted and deduplicated.
func ContentFlags(content []byte, isSkillMD bool) []Flag {
	set := map[Flag]bool{}
	b := bytes.TrimPrefix(content, bom)
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++ // ASCII flags nothing
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r >= 0x80 {
			addRuneFlag(r, set)
		}
		i += n
	}
	if isSkillMD {
		if bytes.Contains(content, []byte("<!--")) {
			set[FlagHTMLComment] = true
		}
		body := content
		if fm, rest, err := parseFrontmatter(content); err == nil {
			body = rest
			for _, f := range FrontmatterFlags(fm) {
				set[f] = true
			}
		}
		if hasCommandExpansion(body) {
			set[FlagCommandExpansion] = true
		}
	}
	return sortedFlags(set)
}

func sortedFlags(set map[Flag]bool) []Flag {
	if len(set) == 0 {
		return nil
	}
	out := make([]Flag, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}
