package skillserver

import (
	"errors"
	"strings"

	"github.com/skillfs/skillfs/verify"
)

// isRegName reports the ASCII bytes RFC 3986 allows unencoded in a reg-name.
func isRegName(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.IndexByte("-._~!$&'()*+,;=", c) >= 0
}

// authorityProblem says why a top-level folder name cannot be the authority
// of a skill URI, or returns "". verify would percent-encode any other ASCII
// byte, but Go's url.Parse (and with it go-sdk, which parses every resource
// URI it registers) refuses percent-encoded ASCII in a host, so such a name
// is refused rather than published under a URI clients cannot parse.
// Non-ASCII bytes are percent-encoded, which both accept.
func authorityProblem(name string) string {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x80 && !isRegName(c) {
			return "a top-level folder is a URI authority and may hold only letters, digits and -._~!$&'()*+,;= (found " + quoteByte(c) + ")"
		}
	}
	return ""
}

func quoteByte(c byte) string {
	const hex = "0123456789abcdef"
	if c > 0x20 && c < 0x7f {
		return "'" + string(rune(c)) + "'"
	}
	return "byte 0x" + string(hex[c>>4]) + string(hex[c&15])
}

// uriOf returns the skill:// URI of a path below DIR, given as names. It
// refuses every name a conforming host refuses (verify's rules: control and
// invisible characters, backslashes, invalid UTF-8, over-long names, too
// deep a path), so that nothing is published that hosts would drop.
func uriOf(segs []string) (verify.URI, error) {
	if p := authorityProblem(segs[0]); p != "" {
		return verify.URI{}, errors.New(p)
	}
	return verify.URIFromPath(strings.Join(segs, "/"))
}

// canonicalURI maps a client's spelling of a skill:// URI to the canonical
// one the catalog is keyed by; ok is false when it is no skill:// URI.
func canonicalURI(uri string) (string, bool) {
	u, err := verify.ParseURI(uri)
	if err != nil || u.Scheme != verify.SkillScheme {
		return "", false
	}
	return u.String(), true
}

// reason renders why something was refused for a Problem: verify's
// stable reason and its detail (the path is already in the Problem).
func reason(err error) string {
	var ve *verify.Error
	if errors.As(err, &ve) {
		if ve.Detail == "" {
			return string(ve.Reason)
		}
		return string(ve.Reason) + ": " + ve.Detail
	}
	return unwrapPathError(err).Error()
}
