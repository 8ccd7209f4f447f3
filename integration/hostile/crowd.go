package hostile

import (
	"strconv"
	"strings"
)

// Crowd modes: the server serves Options.Crowd generated skills
// (DefaultCrowd when 0) besides honest-a and honest-b. Each skill is
// honest and readable; only their number and shape cost a host. They are
// not in Modes(), which TestHostileServers runs side by side; each has its
// own test.
const (
	// ModeSameNameCrowd: skills skill://crowd-N/x/SKILL.md, all named x,
	// all listed.
	ModeSameNameCrowd = "same-name-crowd"
	// ModeEscapeCrowd: skills skill://esc-N/<SEG>/e-N/SKILL.md, all listed,
	// whose folder segment SEG (EscapeSegmentLength bytes) and
	// description (EscapeDescriptionLength bytes) are made of '<', '>',
	// '&' and control characters, which JSON encoders like to escape.
	ModeEscapeCrowd = "escape-crowd"
	// ModeUnlistedCrowd: skills skill://walk/w-N/SKILL.md that skills/list
	// never names; directory reads of skill://walk show them and
	// skills/get confirms each.
	ModeUnlistedCrowd = "unlisted-crowd"
)

// CrowdModes returns the crowd modes.
func CrowdModes() []string {
	return []string{ModeSameNameCrowd, ModeEscapeCrowd, ModeUnlistedCrowd}
}

// DefaultCrowd is the crowd modes' count when Options.Crowd is 0.
const DefaultCrowd = 100

// Shapes of escape-crowd's strings.
const (
	EscapeSegmentLength     = 200
	EscapeDescriptionLength = 4000
)

// escapeChars fill escape-crowd's strings: HTML-special characters (legal
// in a URI segment once percent-encoded, and in YAML and JSON strings) and
// control characters (in descriptions only).
const escapeChars = "<>&"

// EscapeDescription is the description of escape-crowd's skill N.
func EscapeDescription(n int) string {
	prefix := "esc " + strconv.Itoa(n) + " "
	var b strings.Builder
	b.WriteString(prefix)
	for i := 0; b.Len() < EscapeDescriptionLength; i++ {
		if i%4 == 3 {
			b.WriteByte(byte(1 + i%8)) // \x01..\x08: \u00XX in JSON
		} else {
			b.WriteByte(escapeChars[i%3])
		}
	}
	return b.String()
}

// escapeSegment is escape-crowd's folder segment, percent-encoded in URIs.
func escapeSegment() string {
	return strings.Repeat("%3C%3E%26", EscapeSegmentLength/9)
}

// addCrowd adds the skills of a crowd mode.
func (s *Server) addCrowd() {
	n := s.opts.Crowd
	if n <= 0 {
		n = DefaultCrowd
	}
	switch s.opts.Mode {
	case ModeSameNameCrowd:
		for i := range n {
			s.add(basic(ModeSameNameCrowd, "crowd-"+strconv.Itoa(i)+"/x", "One of many skills named x",
				"# x\n\nOne of many skills named x.\n"))
		}
	case ModeEscapeCrowd:
		seg := escapeSegment()
		for i := range n {
			name := "e-" + strconv.Itoa(i)
			s.add(basic(ModeEscapeCrowd, "esc-"+strconv.Itoa(i)+"/"+seg+"/"+name, EscapeDescription(i),
				"# "+name+"\n\nA skill whose strings need escaping.\n"))
		}
	case ModeUnlistedCrowd:
		for i := range n {
			d := basic(ModeUnlistedCrowd, "walk/w-"+strconv.Itoa(i), "An unlisted skill found by walking",
				"# w\n\nFound by a directory read, confirmed by skills/get.\n")
			s.unlisted = append(s.unlisted, d)
			s.byURI[d.uri] = d
			for _, f := range d.files {
				s.files[f.uri] = f
			}
		}
	}
}
