package resolver

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/skillfs/skillfs/verify"
)

// A server's instructions (the instructions of its initialize result) are
// text the server wrote for the model. The Final SEP-2640 text lets a
// server point to skills from them ("Pointer from Server Instructions"):
// the host confirms such a URI with skills/get before treating it as a
// skill. skillfs keeps the first MaxInstructions bytes for the mount to
// show (servers/LABEL.md, status.json) and confirms the skill:// URIs they
// name, at most MaxNamedSkills of them, on every enumeration, like the
// config's pins; they count against the listing caps with the listed
// skills, since the server chose them.

const (
	// MaxInstructions is how many bytes of a server's instructions are
	// kept and shown; the rest is only counted.
	MaxInstructions = 4096
	// MaxNamedSkills is how many distinct skill URIs named in a server's
	// instructions are asked for with skills/get; the others are not.
	MaxNamedSkills = 32
)

// namedCutNote is the truncated note of a server whose instructions name
// more than MaxNamedSkills skill URIs.
var namedCutNote = fmt.Sprintf("the server's instructions name more than %d skill URIs; only the first %d were asked for", MaxNamedSkills, MaxNamedSkills)

// ReasonNamedNotConfirmed: a skill URI the server's instructions name,
// which skills/get did not confirm.
const ReasonNamedNotConfirmed verify.Reason = "named-not-confirmed"

// namedPrefix opens a skill reference in instructions. Only skill:// URIs
// are taken as references: prose holds URLs of every other scheme that
// are not skills, and asking the server about each would be noise.
const namedPrefix = "skill://"

// namedSuffix closes one: a skill is addressed by its SKILL.md.
const namedSuffix = "/SKILL.md"

// NamedSkills returns the canonical skill:// SKILL.md URIs that text names,
// in the order they are first named, at most max of them; cut reports that
// it names at least one more. A reference runs from "skill://" (any case)
// to the first "/SKILL.md" not followed by a path character (dots that
// end a sentence aside), over URI
// characters only (RFC 3986 unreserved, sub-delims, ':', '@', '/', '%'),
// so that the punctuation and code spans of prose around it are not part
// of it. A reference verify.ParseURI refuses is not a URI and is skipped.
func NamedSkills(text string, max int) (uris []string, cut bool) {
	seen := map[string]bool{}
	for rest := text; ; {
		i := indexFold(rest, namedPrefix)
		if i < 0 {
			return uris, false
		}
		rest = rest[i:]
		end, skip := referenceEnd(rest)
		if end < 0 {
			rest = rest[skip:]
			continue
		}
		ref := rest[:end]
		rest = rest[end:]
		u, err := verify.ParseURI(ref)
		if err != nil || seen[u.String()] {
			continue
		}
		if len(uris) == max {
			return uris, true
		}
		seen[u.String()] = true
		uris = append(uris, u.String())
	}
}

// indexFold is strings.Index of an ASCII lower-case sub in s, ignoring
// ASCII case.
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

// referenceEnd is where the reference at the start of s ends (after
// "/SKILL.md"), or -1 when s holds none there; then skip is how much of s
// holds none either, so that a text is scanned in linear time: a
// reference starting inside the run of URI characters just scanned would
// end where this one failed.
func referenceEnd(s string) (end, skip int) {
	i := len(namedPrefix)
	for ; i < len(s) && i <= verify.MaxURILength; i++ {
		if strings.HasPrefix(s[i:], namedSuffix) {
			// Dots right after it end a sentence, unless a path goes on.
			end := i + len(namedSuffix)
			j := end
			for j < len(s) && s[j] == '.' {
				j++
			}
			if j == len(s) || !pathChar(s[j]) {
				return end, 0
			}
		}
		if !uriChar(s[i]) {
			break
		}
	}
	return -1, i
}

// uriChar reports a character a URI may hold unescaped, '%' included.
func uriChar(c byte) bool {
	return pathChar(c) || strings.IndexByte("!$&'()*+,;=:@/", c) >= 0
}

// pathChar reports a character that continues a path segment in prose:
// RFC 3986 unreserved, '%' and '/'.
func pathChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte("-._~%/", c) >= 0
}

// keepInstructions is what a session keeps of instructions: the first
// MaxInstructions bytes, not cutting a character in two.
func keepInstructions(s string) string {
	if len(s) <= MaxInstructions {
		return s
	}
	n := MaxInstructions
	for n > MaxInstructions-utf8.UTFMax && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// confirmNamed calls skills/get for each skill URI the server's
// instructions name that the listing did not carry, within the listing's
// caps: the one that would cross a cap is not held, and no further one is
// asked for.
func (l *lister) confirmNamed(ctx context.Context) {
	o, cat := l.o, l.cat
	named, cut := l.live.named, l.live.namedCut
	note := func(why string) {
		if cat.Truncated == "" {
			cat.Truncated = why
		}
	}
	if cut {
		// Logged once, at connect (runSession).
		note(namedCutNote)
	}
	for i, uri := range named {
		if _, ok := l.byURI[uri]; ok {
			continue
		}
		if stop := l.reached(); stop != "" {
			why := fmt.Sprintf("%s; skills named in the server's instructions not asked for: %d", stop, len(named)-i)
			o.log.Warn("skills named in the instructions not all asked for", "op", "get", "err", why)
			note(why)
			return
		}
		s, size, err := o.getSkill(ctx, uri)
		if err != nil {
			r := rejection(uri, err)
			if verify.ReasonOf(err) == "" {
				r.Reason = ReasonNamedNotConfirmed
			}
			cat.Rejected = append(cat.Rejected, r)
			o.log.Warn("skill named in the instructions not confirmed", "op", "get", "uri", uri, "err", err)
			continue
		}
		lim := o.limits
		if l.bytes+size > lim.MaxListBytes {
			o.log.Warn("skill named in the instructions not held", "op", "get", "uri", uri, "err", "max_list_bytes")
			note(fmt.Sprintf("stopped at %d bytes of entries (max_list_bytes is %d); the next skill, %s, named in the server's instructions, has %d", l.bytes, lim.MaxListBytes, uri, size))
			return
		}
		if n := len(s.Files); l.resources+n > lim.MaxListResources {
			o.log.Warn("skill named in the instructions not held", "op", "get", "uri", uri, "err", "max_list_resources")
			note(fmt.Sprintf("stopped at %d resources (max_list_resources is %d); the next skill, %s, named in the server's instructions, lists %d", l.resources, lim.MaxListResources, uri, n))
			return
		}
		l.entries++
		l.bytes += size
		delete(l.conflicted, uri) // skills/get settles a conflict
		l.add(s)
		if s.Private {
			cat.CacheScope = ScopePrivate
		}
		if cat.Named == nil {
			cat.Named = map[string]bool{}
		}
		cat.Named[uri] = true
	}
}
