package hostile

import (
	"io"

	"github.com/skillfs/skillfs/internal/skill"
)

// A Skill is one skill a fixture publishes, for tests to compare with what
// a host shows.
type Skill struct {
	Fixture string
	// Entry is the entry skills/list advertises (for stale: content A;
	// for name-mismatch: the name of the SKILL.md, not of the URI).
	Entry skill.Entry
	// Files are every file the server serves for the skill, listed in the
	// entry or not, SKILL.md first.
	Files []File
}

// A File is one file the server serves.
type File struct {
	URI string
	// Listed: in the entry's resources.
	Listed bool
	// Behaviour is what resources/read does for it.
	Behaviour Behaviour
	f         *file
}

// Bytes returns the file's honest bytes: for a listed file those its
// digest and size describe, for an unlisted one what is served. Big files
// are generated on each call.
func (f File) Bytes() []byte { return f.f.gen() }

// WriteTo writes the bytes Bytes returns to w: a big generated file in
// pieces, so that a test can hash it without a buffer of its size.
func (f File) WriteTo(w io.Writer) (int64, error) {
	if f.f.blocks == nil {
		n, err := w.Write(f.f.gen())
		return int64(n), err
	}
	var n int64
	var err error
	f.f.blocks(func(p []byte) {
		if err == nil {
			var k int
			k, err = w.Write(p)
			n += int64(k)
		}
	})
	return n, err
}

// Updated returns stale's content B for data.txt, nil for every other file.
func (f File) Updated() []byte {
	if f.f.alt == nil {
		return nil
	}
	return f.f.alt.gen()
}

// Describe returns the skills fixture (one of Fixtures(), HonestA or
// HonestB) publishes, given the server's Variant.
func Describe(fixture, variant string) ([]Skill, error) {
	defs, err := fixtureSkills(fixture, variant)
	if err != nil {
		return nil, err
	}
	out := make([]Skill, 0, len(defs))
	for _, d := range defs {
		sk := Skill{Fixture: fixture, Entry: d.entry("", false)}
		for _, f := range d.files {
			sk.Files = append(sk.Files, File{URI: f.uri, Listed: f.listed, Behaviour: f.read, f: f})
		}
		out = append(out, sk)
	}
	return out, nil
}

// Files returns, for every file the fixture serves (variant ""), its URI
// and honest bytes (File.Bytes). It is nil for an unknown fixture.
func Files(fixture string) map[string][]byte {
	skills, err := Describe(fixture, "")
	if err != nil {
		return nil
	}
	out := map[string][]byte{}
	for _, s := range skills {
		for _, f := range s.Files {
			if _, ok := out[f.URI]; !ok {
				out[f.URI] = f.Bytes()
			}
		}
	}
	return out
}
