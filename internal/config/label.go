package config

import (
	"fmt"
	"strings"
)

// MaxLabelLen is the longest label accepted. Labels become directory names
// and, with a fingerprint, store directory names; 64 keeps both short.
const MaxLabelLen = 64

// ValidLabel reports whether label can name an origin's directory under the
// mount: 1–64 characters of [A-Za-z0-9._-], starting with a letter or
// digit (so never ".skillfs", which skillfs itself generates, nor any other
// hidden name) and not ending with '.', which Windows and some sync tools
// drop silently. The error says what to rename it to.
func ValidLabel(label string) error {
	if problem := labelProblem(label); problem != "" {
		return &LabelError{Label: label, Problem: problem}
	}
	return nil
}

// A LabelError is a label that cannot be a directory name.
type LabelError struct {
	Label   string
	Problem string
}

func (e *LabelError) Error() string {
	return fmt.Sprintf("label %q %s; %s", e.Label, e.Problem, e.Fix())
}

// Fix says how to rename the label.
func (e *LabelError) Fix() string {
	return fmt.Sprintf("rename the server, for example to %q (labels become directory names: 1-%d of A-Z a-z 0-9 . _ -, starting with a letter or digit, not ending with '.')",
		SuggestLabel(e.Label), MaxLabelLen)
}

func labelProblem(label string) string {
	switch {
	case label == "":
		return "is empty"
	case strings.HasPrefix(label, "."):
		return "starts with '.', which hides it and may clash with .skillfs, the directory skillfs generates"
	case len(label) > MaxLabelLen:
		return fmt.Sprintf("is %d bytes long, more than %d", len(label), MaxLabelLen)
	}
	for i, r := range label {
		if !labelChar(r) {
			return fmt.Sprintf("contains %q at byte %d", r, i)
		}
	}
	if !alnum(rune(label[0])) {
		return "does not start with a letter or digit"
	}
	if strings.HasSuffix(label, ".") {
		return "ends with '.'"
	}
	return ""
}

func alnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

func labelChar(r rune) bool { return alnum(r) || r == '.' || r == '_' || r == '-' }

// SuggestLabel turns any string into a valid label: every run of other
// characters becomes '-', and the result is trimmed to the rules.
func SuggestLabel(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		if labelChar(r) {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.TrimLeftFunc(b.String(), func(r rune) bool { return !alnum(r) })
	if len(out) > MaxLabelLen {
		out = out[:MaxLabelLen]
	}
	out = strings.TrimRight(out, ".-_")
	if out == "" {
		return "server"
	}
	return out
}
