package verify

import (
	"strings"
	"unicode/utf8"
)

// Bounds on resource URIs.
const (
	// MaxURILength bounds both the URI as received and its canonical form.
	MaxURILength = 4096
	// MaxSegmentLength bounds one decoded segment (and the authority): the
	// NAME_MAX of every filesystem the tree may be copied to.
	MaxSegmentLength = 255
	// MaxDepth bounds the number of path components, the authority included.
	MaxDepth = 32
)

// SkillScheme is the scheme whose URIs map to the top of an origin's tree.
const SkillScheme = "skill"

// deniedSchemes name local files, the network or inline content. A resource
// URI with one of them is never a skill file, whatever a server claims, and
// following one would read the host's files or reach another server.
var deniedSchemes = map[string]bool{
	"file": true, "http": true, "https": true, "data": true,
	"ftp": true, "ftps": true, "sftp": true, "tftp": true, "scp": true, "ssh": true,
	"ws": true, "wss": true, "javascript": true, "vbscript": true,
	"blob": true, "jar": true, "filesystem": true, "view-source": true, "about": true,
	"gopher": true, "dict": true, "ldap": true, "ldaps": true, "smb": true, "nfs": true,
	"telnet": true, "netdoc": true, "mailto": true,
}

// URI is a parsed, validated resource URI. Authority and Segments are
// percent-decoded. A URI is only ever produced by ParseURI, URIFromPath,
// Parent and Child, so a non-zero URI is always valid.
type URI struct {
	Scheme    string   // lowercase
	Authority string   // decoded, non-empty, case preserved
	Segments  []string // decoded path segments after the authority; nil when none
}

// ParseURI parses and validates s as an absolute resource URI of the form
// scheme://authority/seg/seg... (the path may be empty).
func ParseURI(s string) (URI, error) {
	if s == "" {
		return URI{}, newError(BadURI, s, "empty URI")
	}
	if len(s) > MaxURILength {
		return URI{}, newError(TooLong, s, "URI is %d bytes, more than %d", len(s), MaxURILength)
	}
	if !utf8.ValidString(s) {
		return URI{}, newError(BadURI, s, "URI is not valid UTF-8")
	}
	colon := strings.IndexByte(s, ':')
	if colon < 0 || strings.ContainsAny(s[:colon], "/?#") {
		return URI{}, newError(BadURI, s, "relative reference, an absolute URI with a scheme is required")
	}
	scheme := s[:colon]
	if !validScheme(scheme) {
		return URI{}, newError(BadURI, s, "scheme %s is not an RFC 3986 scheme", quote(scheme))
	}
	scheme = strings.ToLower(scheme)
	if deniedSchemes[scheme] {
		return URI{}, newError(BadScheme, s, "scheme %q is not allowed for skill resources", scheme)
	}
	rest := s[colon+1:]
	if !strings.HasPrefix(rest, "//") {
		return URI{}, newError(BadURI, s, "no authority: expected %s://", scheme)
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		return URI{}, newError(BadURI, s, "query or fragment (%q) not allowed", rest[i])
	}
	rest = rest[2:]
	rawAuth, path := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		rawAuth, path = rest[:i], rest[i:]
	}
	if rawAuth == "" {
		return URI{}, newError(BadURI, s, "empty authority")
	}
	if err := checkRaw(rawAuth, false); err != nil {
		return URI{}, newError(BadURI, s, "authority: %s", err.Detail)
	}
	auth, ok := unescape(rawAuth)
	if !ok {
		return URI{}, newError(BadURI, s, "authority: bad percent-encoding")
	}
	u := URI{Scheme: scheme, Authority: auth}
	if path != "" {
		path = path[1:]
		n := strings.Count(path, "/") + 1
		if n+1 > MaxDepth {
			return URI{}, newError(TooDeep, s, "%d path components, at most %d", n+1, MaxDepth)
		}
		u.Segments = make([]string, n)
		for i := range n {
			r, rest, _ := strings.Cut(path, "/")
			path = rest
			if err := checkRaw(r, true); err != nil {
				return URI{}, newError(BadURI, s, "segment %d: %s", i+1, err.Detail)
			}
			seg, ok := unescape(r)
			if !ok {
				return URI{}, newError(BadURI, s, "segment %d: bad percent-encoding", i+1)
			}
			u.Segments[i] = seg
		}
	}
	if err := u.check(s); err != nil {
		return URI{}, err
	}
	return u, nil
}

// check validates the decoded parts; subject is what errors are about.
func (u URI) check(subject string) error {
	if err := checkSegment(u.Authority); err != nil {
		return newError(err.Reason, subject, "authority %s", err.Detail)
	}
	if u.Scheme == SkillScheme && strings.HasPrefix(u.Authority, "@") {
		return newError(ReservedName, subject, "a skill authority starting with \"@\" would shadow the @scheme directories")
	}
	if len(u.Segments)+1 > MaxDepth {
		return newError(TooDeep, subject, "%d path components, at most %d", len(u.Segments)+1, MaxDepth)
	}
	for i, seg := range u.Segments {
		if err := checkSegment(seg); err != nil {
			return newError(err.Reason, subject, "segment %d %s", i+1, err.Detail)
		}
	}
	if n := u.canonicalLen(); n > MaxURILength {
		return newError(TooLong, subject, "canonical URI is %d bytes, more than %d", n, MaxURILength)
	}
	return nil
}

// checkSegment validates one decoded segment (or authority). Its errors
// carry no subject; callers rewrap them.
func checkSegment(seg string) *Error {
	switch {
	case seg == "":
		return &Error{Reason: BadSegment, Detail: "is empty"}
	case len(seg) > MaxSegmentLength:
		return &Error{Reason: TooLong, Detail: "is longer than 255 bytes"}
	case seg == "." || seg == "..":
		return &Error{Reason: BadSegment, Detail: "is a dot segment " + quote(seg)}
	case !utf8.ValidString(seg):
		return &Error{Reason: BadSegment, Detail: "is not valid UTF-8 after decoding"}
	}
	for _, r := range seg {
		switch {
		case r == '/':
			return &Error{Reason: BadSegment, Detail: "contains an encoded \"/\""}
		case r == '\\':
			return &Error{Reason: BadSegment, Detail: "contains a backslash"}
		case r == 0:
			return &Error{Reason: BadSegment, Detail: "contains NUL"}
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			return &Error{Reason: BadSegment, Detail: "contains a control character"}
		case invisibleInName(r):
			return &Error{Reason: BadSegment, Detail: "contains an invisible or bidi formatting character"}
		}
	}
	return nil
}

func validScheme(s string) bool {
	if s == "" || !isAlpha(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isAlpha(c) && !isDigit(c) && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }

func isUnreserved(c byte) bool {
	return isAlpha(c) || isDigit(c) || c == '-' || c == '.' || c == '_' || c == '~'
}

func isSubDelim(c byte) bool { return strings.IndexByte("!$&'()*+,;=", c) >= 0 }

// allowedRaw reports the ASCII bytes RFC 3986 allows unencoded in a reg-name
// (pchar additionally allows ":" and "@").
func allowedRaw(c byte, pchar bool) bool {
	return isUnreserved(c) || isSubDelim(c) || (pchar && (c == ':' || c == '@'))
}

// checkRaw validates the raw characters of an authority or a segment.
// Non-ASCII UTF-8 is accepted (IRI-style); it is percent-encoded in the
// canonical form.
func checkRaw(s string, pchar bool) *Error {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 0x80 || allowedRaw(c, pchar) || c == '%':
		case !pchar && c == '@':
			return &Error{Reason: BadURI, Detail: "userinfo is not allowed"}
		case !pchar && c == ':':
			return &Error{Reason: BadURI, Detail: "a port is not allowed"}
		case !pchar && (c == '[' || c == ']'):
			return &Error{Reason: BadURI, Detail: "an IP literal is not allowed"}
		case c < 0x20 || c == 0x7f:
			return &Error{Reason: BadURI, Detail: "raw control character"}
		default:
			return &Error{Reason: BadURI, Detail: "raw character " + quote(string(c)) + " must be percent-encoded"}
		}
	}
	return nil
}

// unescape percent-decodes s; it fails on a "%" not followed by two hex digits.
func unescape(s string) (string, bool) {
	if strings.IndexByte(s, '%') < 0 {
		return s, true
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return "", false
		}
		b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
		i += 2
	}
	return string(b), true
}

func unhex(c byte) byte {
	if isDigit(c) {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

const upperHex = "0123456789ABCDEF"

// escape appends s to b, percent-encoding every byte not allowed raw.
func escape(b *strings.Builder, s string, pchar bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x80 && allowedRaw(c, pchar) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(upperHex[c>>4])
		b.WriteByte(upperHex[c&15])
	}
}

func escapedLen(s string, pchar bool) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < 0x80 && allowedRaw(s[i], pchar) {
			n++
		} else {
			n += 3
		}
	}
	return n
}

func (u URI) canonicalLen() int {
	n := len(u.Scheme) + 3 + escapedLen(u.Authority, false)
	for _, seg := range u.Segments {
		n += 1 + escapedLen(seg, true)
	}
	return n
}

// String returns the canonical form: lowercase scheme, authority case kept,
// every byte percent-encoded that RFC 3986 does not allow raw (uppercase
// hex) and nothing else. ParseURI(u.String()) == u. It is the identity of a
// resource: two URIs are the same resource iff their Strings are equal.
func (u URI) String() string {
	if u.Scheme == "" {
		return ""
	}
	var b strings.Builder
	b.Grow(u.canonicalLen())
	b.WriteString(u.Scheme)
	b.WriteString("://")
	escape(&b, u.Authority, false)
	for _, seg := range u.Segments {
		b.WriteByte('/')
		escape(&b, seg, true)
	}
	return b.String()
}

// canonical returns u.String() for u = ParseURI(raw), without building it
// when raw is already canonical: ASCII with no percent-encoding and a
// lowercase scheme, which ParseURI has checked holds only characters that
// stay raw.
func (u URI) canonical(raw string) string {
	if strings.HasPrefix(raw, u.Scheme) && plainASCII(raw) {
		return raw
	}
	return u.String()
}

// plainASCII reports whether s is ASCII without '%'.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 || s[i] == '%' {
			return false
		}
	}
	return true
}

// Path returns the URI's mount-relative path: skill://a/b/F → "a/b/F",
// github://o/r/F → "@github/o/r/F". Components are the decoded segments,
// which never contain "/", so the path splits back unambiguously.
func (u URI) Path() string {
	var b strings.Builder
	if u.Scheme != SkillScheme {
		b.WriteByte('@')
		b.WriteString(u.Scheme)
		b.WriteByte('/')
	}
	b.WriteString(u.Authority)
	for _, seg := range u.Segments {
		b.WriteByte('/')
		b.WriteString(seg)
	}
	return b.String()
}

// URIFromPath is the inverse of Path: URIFromPath(u.Path()) == u for every
// valid u, and Path(URIFromPath(p)) == p whenever it succeeds. A bare
// "@scheme" directory is not a URI and fails with BadURI.
func URIFromPath(p string) (URI, error) {
	if p == "" {
		return URI{}, newError(BadSegment, p, "empty path")
	}
	if !utf8.ValidString(p) {
		return URI{}, newError(BadSegment, p, "path is not valid UTF-8")
	}
	parts := strings.Split(p, "/")
	u := URI{Scheme: SkillScheme}
	if strings.HasPrefix(parts[0], "@") {
		scheme := parts[0][1:]
		switch {
		case !validScheme(scheme) || strings.ToLower(scheme) != scheme:
			return URI{}, newError(BadURI, p, "%s is not a lowercase scheme", quote(scheme))
		case scheme == SkillScheme:
			return URI{}, newError(ReservedName, p, "skill URIs map to the top of the tree, not under @skill")
		case deniedSchemes[scheme]:
			return URI{}, newError(BadScheme, p, "scheme %q is not allowed for skill resources", scheme)
		case len(parts) < 2:
			return URI{}, newError(BadURI, p, "no authority after the scheme directory")
		}
		u.Scheme, parts = scheme, parts[1:]
	}
	if len(parts) > MaxDepth {
		return URI{}, newError(TooDeep, p, "%d path components, at most %d", len(parts), MaxDepth)
	}
	u.Authority = parts[0]
	if len(parts) > 1 {
		u.Segments = parts[1:]
	}
	if err := u.check(p); err != nil {
		return URI{}, err
	}
	return u, nil
}

// Parent returns the directory containing u; false at the authority root.
func (u URI) Parent() (URI, bool) {
	if len(u.Segments) == 0 {
		return URI{}, false
	}
	p := u
	p.Segments = nil
	if n := len(u.Segments) - 1; n > 0 {
		p.Segments = append([]string(nil), u.Segments[:n]...)
	}
	return p, true
}

// Child returns the URI of name inside u, validated like any parsed URI.
func (u URI) Child(name string) (URI, error) {
	c := u
	c.Segments = append(append(make([]string, 0, len(u.Segments)+1), u.Segments...), name)
	if err := c.check(u.String() + "/" + name); err != nil {
		return URI{}, err
	}
	return c, nil
}

// Within reports whether u is strictly inside dir: same scheme and authority,
// and dir's segments a strict prefix of u's.
func (u URI) Within(dir URI) bool {
	if u.Scheme != dir.Scheme || u.Authority != dir.Authority || len(dir.Segments) >= len(u.Segments) {
		return false
	}
	for i, s := range dir.Segments {
		if u.Segments[i] != s {
			return false
		}
	}
	return true
}

// Equal reports whether u and v are the same resource.
func (u URI) Equal(v URI) bool {
	if u.Scheme != v.Scheme || u.Authority != v.Authority || len(u.Segments) != len(v.Segments) {
		return false
	}
	for i := range u.Segments {
		if u.Segments[i] != v.Segments[i] {
			return false
		}
	}
	return true
}

// Name returns the last segment, or the authority when there are no segments.
func (u URI) Name() string {
	if n := len(u.Segments); n > 0 {
		return u.Segments[n-1]
	}
	return u.Authority
}

// Depth returns the number of path components, the authority counting as one
// (so skill://a is 1 and skill://a/SKILL.md is 2); MaxDepth bounds it.
func (u URI) Depth() int { return 1 + len(u.Segments) }
