package verify

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/skillfs/skillfs/internal/skill"
)

// Seeds run in every `go test`; `go test -fuzz=FuzzX ./verify` explores.

var uriSeeds = []string{
	"skill://git-workflow/SKILL.md",
	"skill://acme/billing/refunds/examples/email.md",
	"skill://a",
	"SKILL://A/%78/caf%C3%A9/caf\u00e9",
	"github://owner/repo/skills/refunds/SKILL.md",
	"github://%40o/r",
	"skill://%40github/x",
	"file:///etc/passwd", "file:/etc/passwd", "FILE:x", "http://h/x", "data:,x",
	"skill:x", "skill:///x", "skill://u@h:1/x", "skill://[::1]/x", "skill://a/b?q#f",
	"skill://a/%2e%2e/b", "skill://a/x%2Fy", "skill://a/x%5Cy", "skill://a/%00", "skill://a/%C2%85",
	"skill://a/\u202e", "skill://a//b", "skill://a/", "skill://a/%zz", "skill://a/b c",
	"skill://a/" + strings.Repeat("x", 256),
	"skill://a" + strings.Repeat("/d", 32),
	"a/b", "", ":", "x:", "//a",
}

func FuzzParseURI(f *testing.F) {
	for _, s := range uriSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseURI(s)
		if err != nil {
			if ReasonOf(err) == "" || !reflect.DeepEqual(u, URI{}) {
				t.Fatalf("ParseURI(%q) = %#v, %v", s, u, err)
			}
			return
		}
		checkValidURI(t, u)
	})
}

// checkValidURI asserts everything a valid URI promises.
func checkValidURI(t *testing.T, u URI) {
	t.Helper()
	if !validScheme(u.Scheme) || strings.ToLower(u.Scheme) != u.Scheme || deniedSchemes[u.Scheme] {
		t.Fatalf("bad scheme in %#v", u)
	}
	if u.Depth() > MaxDepth || u.Depth() != len(u.Segments)+1 {
		t.Fatalf("depth %d in %#v", u.Depth(), u)
	}
	if u.Segments != nil && len(u.Segments) == 0 {
		t.Fatalf("empty non-nil Segments in %#v", u)
	}
	for _, seg := range append([]string{u.Authority}, u.Segments...) {
		if err := checkSegment(seg); err != nil {
			t.Fatalf("invalid component %q in %#v: %v", seg, u, err)
		}
	}
	if u.Scheme == SkillScheme && strings.HasPrefix(u.Authority, "@") {
		t.Fatalf("reserved authority in %#v", u)
	}
	c := u.String()
	if len(c) > MaxURILength {
		t.Fatalf("canonical form is %d bytes", len(c))
	}
	again, err := ParseURI(c)
	if err != nil || !reflect.DeepEqual(again, u) || again.String() != c {
		t.Fatalf("ParseURI(%q) = %#v, %v; want %#v", c, again, err, u)
	}
	p := u.Path()
	back, err := URIFromPath(p)
	if err != nil || !reflect.DeepEqual(back, u) {
		t.Fatalf("URIFromPath(%q) = %#v, %v; want %#v", p, back, err, u)
	}
	parts := strings.Split(p, "/")
	if u.Scheme != SkillScheme {
		if parts[0] != "@"+u.Scheme {
			t.Fatalf("path %q of %#v lacks its @scheme", p, u)
		}
		parts = parts[1:]
	} else if strings.HasPrefix(p, "@") {
		t.Fatalf("skill path %q in the @ namespace", p)
	}
	if len(parts) != u.Depth() {
		t.Fatalf("path %q has %d components, depth %d", p, len(parts), u.Depth())
	}
	if parent, ok := u.Parent(); ok {
		if !u.Within(parent) || parent.Within(u) || parent.Depth() != u.Depth()-1 {
			t.Fatalf("parent %#v of %#v", parent, u)
		}
		child, err := parent.Child(u.Name())
		if err != nil || !child.Equal(u) {
			t.Fatalf("parent.Child(%q) = %#v, %v", u.Name(), child, err)
		}
	} else if len(u.Segments) != 0 || u.Name() != u.Authority {
		t.Fatalf("no parent for %#v", u)
	}
}

func FuzzURIFromPath(f *testing.F) {
	for _, s := range []string{"a", "a/b/SKILL.md", "@github/o/r", "@skill/a", "@file/x", "@github", "a//b", "../x", "a/\x00", "a/caf\u00e9", "@Git/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		u, err := URIFromPath(p)
		if err != nil {
			if ReasonOf(err) == "" {
				t.Fatalf("URIFromPath(%q): untyped error %v", p, err)
			}
			return
		}
		if u.Path() != p {
			t.Fatalf("URIFromPath(%q).Path() = %q", p, u.Path())
		}
		checkValidURI(t, u)
	})
}

func entrySeeds() []string {
	d := string(DigestOf([]byte("x")))
	return []string{
		`{"uri":"skill://git-workflow/SKILL.md","frontmatter":{"name":"git-workflow","description":"Follow conventions"},"resources":[{"uri":"skill://git-workflow/SKILL.md","digest":"` + d + `","size":1}]}`,
		`{"uri":"skill://acme/billing/refunds/SKILL.md","frontmatter":{"name":"refunds","description":"d","license":"Apache-2.0"},"resources":[{"uri":"skill://acme/billing/refunds/SKILL.md","digest":"` + d + `","size":3871},{"uri":"skill://acme/billing/refunds/examples/email.md","digest":"` + d + `","size":962}]}`,
		`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":"dynamic"}`,
		`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"}}`,
		`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":[{"uri":"skill://a/SKILL.md","digest":"` + d + `"}]}`,
		`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":[{"uri":"skill://a/SKILL.md","digest":"` + d + `","size":1},{"uri":"skill://a/Skill.md","digest":"` + d + `","size":1}]}`,
		`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":[{"uri":"skill://a/SKILL.md","digest":"` + d + `","size":1},{"uri":"file:///etc/passwd","digest":"` + d + `","size":1}]}`,
		`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":[{"uri":"skill://a/SKILL.md","digest":"` + d + `","size":-1}]}`,
		`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"b","description":"d"},"resources":"dynamic"}`,
		`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d","allowed-tools":"Bash"},"resources":[{"uri":"skill://a/SKILL.md","digest":"` + d + `","size":1},{"uri":"skill://a/x","digest":"` + d + `","size":1},{"uri":"skill://a/x/y","digest":"` + d + `","size":1}]}`,
		`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":[{"uri":"skill://a/SKILL.md","digest":"` + d + `","size":1},{"uri":"skill://a/%53KILL.md","digest":"` + d + `","size":1}]}`,
		`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":[{"uri":"skill://a/SKILL.md","digest":"` + d + `","size":16777217}]}`,
		`{"uri":"skill://a/SKILL.md","frontmatter":[],"resources":"dynamic"}`,
		`null`, `{}`, `[]`, `{"uri":1}`,
	}
}

func FuzzDecodeEntry(f *testing.F) {
	for _, s := range entrySeeds() {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, raw []byte, strict bool) {
		opts := EntryOptions{Strict: strict}
		s, err := DecodeEntry(raw, opts)
		if err != nil {
			if ReasonOf(err) == "" || s != nil {
				t.Fatalf("DecodeEntry = %+v, %v", s, err)
			}
			return
		}
		checkSkill(t, s, opts)
	})
}

// checkSkill asserts everything a checked Skill promises.
func checkSkill(t *testing.T, s *Skill, opts EntryOptions) {
	t.Helper()
	checkValidURI(t, s.URI)
	if s.URI.Name() != "SKILL.md" || !s.URI.Within(s.Dir) || len(s.Dir.Segments)+1 != len(s.URI.Segments) {
		t.Fatalf("URI %v, Dir %v", s.URI, s.Dir)
	}
	name := s.Entry.Name()
	if ValidName(name) != nil || s.Dir.Name() != name || strings.TrimSpace(s.Entry.Description()) == "" {
		t.Fatalf("name %q, dir %v, description %q", name, s.Dir, s.Entry.Description())
	}
	if !slices.IsSorted(s.Flags) {
		t.Fatalf("flags not sorted: %v", s.Flags)
	}
	if s.Dynamic {
		if len(s.Files) != 0 || s.Entry.Manifest != skill.Dynamic {
			t.Fatalf("dynamic skill %+v", s)
		}
		return
	}
	if len(s.Files) != len(s.Entry.Resources) || len(s.Files) > DefaultMaxResources {
		t.Fatalf("%d files for %d resources", len(s.Files), len(s.Entry.Resources))
	}
	seen := map[string]bool{}
	self := 0
	var total int64
	for i, f := range s.Files {
		checkValidURI(t, f.URI)
		if !f.URI.Within(s.Dir) || seen[f.URI.String()] || f.Resource != &s.Entry.Resources[i] {
			t.Fatalf("file %d %+v", i, f)
		}
		seen[f.URI.String()] = true
		if f.URI.Equal(s.URI) {
			self++
		}
		if CheckDigestFormat(f.Resource.Digest) != nil || f.Resource.Size < 0 || (opts.Strict && !f.Resource.HasSize) {
			t.Fatalf("file %d resource %+v", i, f.Resource)
		}
		total += f.Resource.Size
	}
	if self != 1 || total > DefaultMaxTotalSize {
		t.Fatalf("SKILL.md listed %d times, total %d", self, total)
	}
}

var frontmatterSeeds = []string{
	"---\nname: refunds\ndescription: Process refunds\n---\n# Body\n",
	"---\r\nname: a\r\ndescription: |\r\n  x\r\n  y\r\n---\r\n",
	"\uFEFF---\nname: a\n...\n",
	"---\nn: [1, 1.0, 0x1F, 0o17, 0777, 1_000, .5, -0.0, 1e3, 123456789012345678901234567890]\n---\n",
	"---\nd: 2024-01-02\nt: 2001-12-14T21:59:43.10-05:00\nq: \"2024-01-02\"\n---\n",
	"---\nx: ~\ny:\nz: null\nb: [true, False, yes]\n---\n",
	"---\nbase: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\nl: [*b, *b]\n---\n",
	"---\n1: one\ntrue: t\n~: n\n---\n",
	"---\nbin: !!binary aGVsbG8=\nref: !Ref x\nf: !!float 3\n---\n",
	"---\nn: .inf\nm: .nan\n---\n",
	"---\nx: 1\nx: 2\n---\n",
	"---\n? [a]\n: x\n---\n",
	"---\na: &x [*x]\n---\n",
	"---\na: [\n---\n",
	"---\na: 1\n--- \nb: 2\n---\n",
	"---\n- a\n---\n",
	"no frontmatter\n",
	"---\nhooks: {Stop: x}\nallowed-tools: Bash\n---\n<!-- hi -->\n!`id`\n",
}

func FuzzCompareFrontmatter(f *testing.F) {
	wants := []string{`{"name":"refunds","description":"Process refunds"}`, `{"n":[1,1,31,15,511,1000,0.5,0,1000,123456789012345678901234567890]}`, `{}`, `{"d":"2024-01-02T00:00:00Z"}`, `null`}
	for i, s := range frontmatterSeeds {
		f.Add([]byte(s), []byte(wants[i%len(wants)]))
	}
	f.Fuzz(func(t *testing.T, content, wantJSON []byte) {
		fm, body, perr := ParseFrontmatter(content)
		if perr != nil {
			if ReasonOf(perr) != FrontmatterInvalid {
				t.Fatalf("ParseFrontmatter: %v", perr)
			}
		} else {
			if !bytes.HasSuffix(content, body) {
				t.Fatalf("body %q is not a suffix of the content", body)
			}
			checkRendered(t, content)
		}
		dec := json.NewDecoder(bytes.NewReader(wantJSON))
		dec.UseNumber()
		var want map[string]any
		if dec.Decode(&want) != nil {
			return
		}
		cerr := CompareFrontmatter(content, want)
		switch r := ReasonOf(cerr); {
		case cerr == nil:
			if perr != nil {
				t.Fatalf("Compare accepted what ParseFrontmatter rejects: %v", perr)
			}
			// Equal to want means want renders the same as ParseFrontmatter.
			if err := CompareFrontmatter(content, fm); err != nil {
				t.Fatalf("Compare(content, ParseFrontmatter) = %v", err)
			}
		case r != FrontmatterMismatch && r != FrontmatterInvalid:
			t.Fatalf("CompareFrontmatter: %v", cerr)
		}
	})
}

func FuzzChecker(f *testing.F) {
	f.Add([]byte("hello"), []byte("hello"), uint8(1), true)
	f.Add([]byte("hello"), []byte("hellO"), uint8(2), true)
	f.Add([]byte("hello"), []byte("hello!"), uint8(3), true)
	f.Add([]byte("hello"), []byte("hell"), uint8(0), false)
	f.Add([]byte{}, []byte{}, uint8(7), true)
	f.Fuzz(func(t *testing.T, declared, got []byte, chunk uint8, hasSize bool) {
		r := res("skill://a/f", string(declared))
		if !hasSize {
			r.HasSize, r.Size = false, 0
		}
		whole := CheckContent(r, got)
		c := NewChecker(r)
		step := int(chunk) + 1
		var werr error
		for i := 0; i < len(got) && werr == nil; i += step {
			_, werr = c.Write(got[i:min(i+step, len(got))])
		}
		streamed := c.Finish()
		if ReasonOf(whole) != ReasonOf(streamed) {
			t.Fatalf("CheckContent = %v, Checker = %v", whole, streamed)
		}
		if (whole == nil) != bytes.Equal(declared, got) {
			t.Fatalf("CheckContent(%q declared, %q got) = %v", declared, got, whole)
		}
		if hasSize && c.Written() > int64(len(declared)) {
			t.Fatalf("Checker accepted %d bytes of %d declared", c.Written(), len(declared))
		}
	})
}

func FuzzContentFlags(f *testing.F) {
	for _, s := range frontmatterSeeds {
		f.Add([]byte(s), true)
	}
	f.Add([]byte("a\u202eb\u200b\U000E0041"), false)
	f.Fuzz(func(t *testing.T, content []byte, isSkillMD bool) {
		flags := ContentFlags(content, isSkillMD)
		if !slices.IsSorted(flags) || len(slices.Compact(slices.Clone(flags))) != len(flags) {
			t.Fatalf("flags %v not sorted and unique", flags)
		}
		if !isSkillMD && slices.ContainsFunc(flags, func(f Flag) bool { return f == FlagHTMLComment || f == FlagCommandExpansion }) {
			t.Fatalf("SKILL.md-only flag on another file: %v", flags)
		}
	})
}
