package verify

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// A Reason is the short, stable, kebab-case name of a rejection. It is shown
// to users in index.json, status.json, logs and CLI messages, so a Reason's
// spelling never changes once released.
type Reason string

const (
	// BadURI: unparseable, relative, no authority, query or fragment,
	// userinfo or port, bad percent-encoding, or a raw character RFC 3986
	// does not allow.
	BadURI Reason = "bad-uri"
	// BadScheme: a scheme that names a local file, the network or inline
	// content (file, http, https, data, ftp, ws, javascript, ...), judged by
	// the parsed scheme, case-insensitively.
	BadScheme Reason = "bad-scheme"
	// BadSegment: a segment (or the authority) that is empty, ".", "..", or
	// contains "/", "\", NUL, a control or invisible formatting character,
	// or invalid UTF-8 — after percent-decoding.
	BadSegment Reason = "bad-segment"
	// TooLong: a decoded segment over MaxSegmentLength bytes or a URI over
	// MaxURILength bytes.
	TooLong Reason = "too-long"
	// TooDeep: more than MaxDepth segments, the authority counting as one.
	TooDeep Reason = "too-deep"
	// ReservedName: a path that would land in the "@scheme" namespace the
	// mount reserves for schemes other than skill.
	ReservedName Reason = "reserved-name"
	// OutsideSkill: a resource that is neither the skill's SKILL.md nor
	// inside the skill's directory.
	OutsideSkill Reason = "outside-skill"
	// NotSkillMD: the entry's uri does not end in "/SKILL.md".
	NotSkillMD Reason = "not-skill-md"
	// BadName: frontmatter.name is absent, not a string, or breaks the
	// Agent Skills naming rules.
	BadName Reason = "bad-name"
	// NameMismatch: the last skill-path segment differs from frontmatter.name.
	NameMismatch Reason = "name-mismatch"
	// MissingDescription: frontmatter.description is absent, not a string,
	// or blank.
	MissingDescription Reason = "missing-description"
	// MissingSkillMD: resources lacks the entry's own uri.
	MissingSkillMD Reason = "missing-skill-md"
	// DuplicateResource: the same canonical uri twice in resources.
	DuplicateResource Reason = "duplicate-resource"
	// BadDigest: a digest that is not "sha256:" + 64 lowercase hex.
	BadDigest Reason = "bad-digest"
	// MissingSize: a resource without size, in strict mode.
	MissingSize Reason = "missing-size"
	// BadSize: a negative size.
	BadSize Reason = "bad-size"
	// MissingResources: an entry without resources.
	MissingResources Reason = "missing-resources"
	// OverLimit: too many resources, too large a declared total, or one
	// declared size above the per-file cap.
	OverLimit Reason = "over-limit"
	// Collision: two resources that are one path after NFC and case
	// folding, or a file whose path is also a directory of another resource.
	Collision Reason = "collision"
	// Malformed: the entry's JSON types are wrong.
	Malformed Reason = "malformed"
	// SizeMismatch: the content's length differs from the declared size.
	SizeMismatch Reason = "size-mismatch"
	// DigestMismatch: the content's sha256 differs from the declared digest.
	DigestMismatch Reason = "digest-mismatch"
	// FrontmatterMismatch: SKILL.md's frontmatter differs from the entry's.
	FrontmatterMismatch Reason = "frontmatter-mismatch"
	// FrontmatterInvalid: SKILL.md has no leading --- block, or its YAML
	// does not parse, has duplicate or complex keys, expands too far, ...
	FrontmatterInvalid Reason = "frontmatter-invalid"
)

// Error is the one error type of the package. Every rejection is an *Error,
// so that callers can show its Reason without parsing messages.
type Error struct {
	Reason Reason
	// Subject is the URI (or field) the check was about. Subjects come from
	// servers, so the package escapes control, invisible and bidi
	// characters and shortens long ones before storing them: a Subject is
	// safe to print to a terminal.
	Subject string
	// Detail is one short human sentence: what was expected, what was found.
	Detail string
}

// Error renders "<reason>: <subject>: <detail>", leaving out empty parts.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(string(e.Reason))
	if e.Subject != "" {
		b.WriteString(": ")
		b.WriteString(e.Subject)
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Is reports whether target is an *Error with the same Reason, so that
// errors.Is(err, &verify.Error{Reason: verify.DigestMismatch}) works through
// any wrapping. The target's Subject and Detail are ignored.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t != nil && t.Reason == e.Reason
}

// ReasonOf returns the Reason of the first *Error in err's chain, or "" when
// err is nil or not a verify error.
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) && e != nil {
		return e.Reason
	}
	return ""
}

// WithSubject returns err with the Subject of its verify error replaced, for
// callers that know the subject better than the check did (CompareFrontmatter
// only sees bytes; the caller knows the URI). Other errors pass through.
func WithSubject(err error, subject string) error {
	var e *Error
	if !errors.As(err, &e) || e == nil {
		return err
	}
	c := *e
	c.Subject = sanitize(subject)
	return &c
}

func newError(r Reason, subject, format string, args ...any) *Error {
	return &Error{Reason: r, Subject: sanitize(subject), Detail: fmt.Sprintf(format, args...)}
}

// maxSubject bounds what a hostile server can make us print or store per error.
const maxSubject = 256

// sanitize makes untrusted text safe to print: control, invisible and bidi
// characters and invalid UTF-8 are escaped, and long text is cut. Valid URIs
// and ordinary names pass through unchanged.
func sanitize(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if b.Len() >= maxSubject {
			b.WriteString("…")
			break
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20 || r == 0x7f || r == '\\':
			fmt.Fprintf(&b, `\x%02x`, r)
		case (r >= 0x80 && r <= 0x9f) || invisible(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// quote renders an untrusted value for a Detail sentence.
func quote(s string) string {
	return `"` + sanitize(s) + `"`
}
