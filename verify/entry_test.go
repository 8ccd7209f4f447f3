package verify

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/skillfs/skillfs/internal/skill"
)

func res(uri, content string) skill.Resource {
	return skill.Resource{URI: uri, Digest: DigestOf([]byte(content)), Size: int64(len(content)), HasSize: true}
}

// goodEntry is a valid newest-revision entry that each rejection row breaks
// in exactly one way.
func goodEntry() skill.Entry {
	return skill.Entry{
		URI: "skill://acme/billing/refunds/SKILL.md",
		Frontmatter: map[string]any{
			"name":        "refunds",
			"description": "Process customer refund requests per company policy",
			"license":     "Apache-2.0",
		},
		Manifest: skill.Listed,
		Resources: []skill.Resource{
			res("skill://acme/billing/refunds/SKILL.md", "---\nname: refunds\n---\n"),
			res("skill://acme/billing/refunds/examples/email.md", "hello"),
			res("skill://acme/billing/refunds/scripts/x.py", "print(1)"),
		},
	}
}

func TestCheckEntryAccepts(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(e *skill.Entry)
		opts   EntryOptions
		check  func(t *testing.T, s *Skill)
	}{
		{"newest revision", nil, EntryOptions{Strict: true}, func(t *testing.T, s *Skill) {
			if s.Dynamic || len(s.Files) != 3 || s.Dir.String() != "skill://acme/billing/refunds" || s.URI.Name() != "SKILL.md" {
				t.Errorf("skill = %+v", s)
			}
			for i, f := range s.Files {
				if f.URI.String() != s.Entry.Resources[i].URI || f.Resource != &s.Entry.Resources[i] {
					t.Errorf("file %d = %+v, not in manifest order", i, f)
				}
			}
		}},
		{"single-segment skill path", func(e *skill.Entry) {
			e.URI = "skill://git-workflow/SKILL.md"
			e.Frontmatter["name"] = "git-workflow"
			e.Resources = []skill.Resource{res("skill://git-workflow/SKILL.md", "x")}
		}, EntryOptions{Strict: true}, func(t *testing.T, s *Skill) {
			if s.Dir.String() != "skill://git-workflow" || s.Dir.Segments != nil {
				t.Errorf("Dir = %#v", s.Dir)
			}
		}},
		{"other scheme", func(e *skill.Entry) {
			e.URI = "github://owner/repo/skills/refunds/SKILL.md"
			e.Resources = []skill.Resource{res("github://owner/repo/skills/refunds/SKILL.md", "x"), res("github://owner/repo/skills/refunds/a/b.md", "y")}
		}, EntryOptions{}, nil},
		{"nested SKILL.md is a plain file", func(e *skill.Entry) {
			e.Resources = append(e.Resources, res("skill://acme/billing/refunds/sub/inner/SKILL.md", "z"))
		}, EntryOptions{}, nil},
		{"equivalent spelling of the entry uri", func(e *skill.Entry) {
			e.Resources[0].URI = "SKILL://acme/billing/refunds/%53KILL.md"
		}, EntryOptions{}, nil},
		{"dynamic", func(e *skill.Entry) {
			e.Manifest, e.Resources = skill.Dynamic, nil
		}, EntryOptions{Strict: true}, func(t *testing.T, s *Skill) {
			if !s.Dynamic || len(s.Files) != 0 {
				t.Errorf("skill = %+v", s)
			}
		}},
		{"no sizes, lenient", func(e *skill.Entry) {
			for i := range e.Resources {
				e.Resources[i].HasSize, e.Resources[i].Size = false, 0
			}
		}, EntryOptions{}, nil},
		{"zero-length file", func(e *skill.Entry) {
			e.Resources = append(e.Resources, res("skill://acme/billing/refunds/empty", ""))
		}, EntryOptions{Strict: true}, nil},
		{"exactly 512 resources and 16 MiB", func(e *skill.Entry) {
			e.Resources = e.Resources[:1]
			e.Resources[0].Size = DefaultMaxTotalSize - 511
			for i := 1; i < DefaultMaxResources; i++ {
				r := res(fmt.Sprintf("skill://acme/billing/refunds/f/%d", i), "x")
				e.Resources = append(e.Resources, r)
			}
		}, EntryOptions{Strict: true}, func(t *testing.T, s *Skill) {
			if len(s.Files) != 512 {
				t.Errorf("%d files", len(s.Files))
			}
		}},
		{"one file at the cap", func(e *skill.Entry) {
			e.Resources[0].Size = DefaultMaxFileSize
			e.Resources = e.Resources[:1]
		}, EntryOptions{}, nil},
		{"raised limits", func(e *skill.Entry) {
			e.Resources[1].Size = 40 << 20
		}, EntryOptions{MaxTotalSize: 64 << 20, MaxFileSize: 64 << 20}, nil},
		{"case-distinct names in different directories", func(e *skill.Entry) {
			e.Resources = append(e.Resources, res("skill://acme/billing/refunds/a/x", "1"), res("skill://acme/billing/refunds/b/X", "2"))
		}, EntryOptions{}, nil},
		{"flags from frontmatter", func(e *skill.Entry) {
			e.Frontmatter["allowed-tools"] = "Bash(*)"
			e.Frontmatter["hooks"] = map[string]any{"PostToolUse": []any{"rm -rf /"}}
		}, EntryOptions{}, func(t *testing.T, s *Skill) {
			if want := []Flag{FlagAllowedTools, FlagHooks}; !reflect.DeepEqual(s.Flags, want) {
				t.Errorf("Flags = %v, want %v", s.Flags, want)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := goodEntry()
			if tt.mutate != nil {
				tt.mutate(&e)
			}
			s, err := CheckEntry(e, tt.opts)
			if err != nil {
				t.Fatalf("CheckEntry: %v", err)
			}
			if s.URI.String() != mustParse(t, e.URI).String() {
				t.Errorf("URI = %v", s.URI)
			}
			if tt.check != nil {
				tt.check(t, s)
			}
		})
	}
}

func mustParse(t *testing.T, s string) URI {
	t.Helper()
	u, err := ParseURI(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestCheckEntryRejects(t *testing.T) {
	const dir = "skill://acme/billing/refunds/"
	add := func(rs ...skill.Resource) func(e *skill.Entry) {
		return func(e *skill.Entry) { e.Resources = append(e.Resources, rs...) }
	}
	setURI := func(uri string) func(e *skill.Entry) {
		return func(e *skill.Entry) { e.URI = uri; e.Resources[0].URI = uri }
	}
	setName := func(v any) func(e *skill.Entry) {
		return func(e *skill.Entry) { e.Frontmatter["name"] = v }
	}
	setRes := func(i int, f func(r *skill.Resource)) func(e *skill.Entry) {
		return func(e *skill.Entry) { f(&e.Resources[i]) }
	}
	many := func(n int) func(e *skill.Entry) {
		return func(e *skill.Entry) {
			for i := len(e.Resources); i < n; i++ {
				e.Resources = append(e.Resources, res(fmt.Sprintf(dir+"f/%d", i), "x"))
			}
		}
	}
	tests := []struct {
		name    string
		mutate  func(e *skill.Entry)
		opts    EntryOptions
		want    Reason
		subject string
	}{
		{"entry uri relative", setURI("refunds/SKILL.md"), EntryOptions{}, BadURI, "refunds/SKILL.md"},
		{"entry uri file", setURI("file:///acme/refunds/SKILL.md"), EntryOptions{}, BadScheme, ""},
		{"entry uri FILE no slashes", setURI("FILE:refunds/SKILL.md"), EntryOptions{}, BadScheme, ""},
		{"entry uri dot-dot", setURI("skill://acme/%2e%2e/refunds/SKILL.md"), EntryOptions{}, BadSegment, ""},
		{"entry uri reserved", setURI("skill://%40github/refunds/SKILL.md"), EntryOptions{}, ReservedName, ""},
		{"entry uri not SKILL.md", setURI(dir + "README.md"), EntryOptions{}, NotSkillMD, dir + "README.md"},
		{"entry uri lowercase skill.md", setURI(dir + "skill.md"), EntryOptions{}, NotSkillMD, ""},
		{"entry uri is the directory", setURI("skill://acme/billing/refunds"), EntryOptions{}, NotSkillMD, ""},
		{"entry uri authority only", setURI("skill://SKILL.md"), EntryOptions{}, NotSkillMD, ""},
		{"name absent", func(e *skill.Entry) { delete(e.Frontmatter, "name") }, EntryOptions{}, BadName, dir + "SKILL.md"},
		{"name not a string", setName(json.Number("7")), EntryOptions{}, BadName, ""},
		{"name null", setName(nil), EntryOptions{}, BadName, ""},
		{"name empty", setName(""), EntryOptions{}, BadName, ""},
		{"name uppercase", setName("Refunds"), EntryOptions{}, BadName, ""},
		{"name underscore", setName("re_funds"), EntryOptions{}, BadName, ""},
		{"name leading hyphen", setName("-refunds"), EntryOptions{}, BadName, ""},
		{"name trailing hyphen", setName("refunds-"), EntryOptions{}, BadName, ""},
		{"name double hyphen", setName("re--funds"), EntryOptions{}, BadName, ""},
		{"name too long", setName(strings.Repeat("a", 65)), EntryOptions{}, BadName, ""},
		{"name non-ASCII", setName("réfunds"), EntryOptions{}, BadName, ""},
		{"name mismatch", setName("payments"), EntryOptions{}, NameMismatch, dir + "SKILL.md"},
		{"name matches a prefix segment only", func(e *skill.Entry) { e.Frontmatter["name"] = "billing" }, EntryOptions{}, NameMismatch, ""},
		{"description absent", func(e *skill.Entry) { delete(e.Frontmatter, "description") }, EntryOptions{}, MissingDescription, ""},
		{"description not a string", func(e *skill.Entry) { e.Frontmatter["description"] = []any{"x"} }, EntryOptions{}, MissingDescription, ""},
		{"description empty", func(e *skill.Entry) { e.Frontmatter["description"] = "" }, EntryOptions{}, MissingDescription, ""},
		{"description blank", func(e *skill.Entry) { e.Frontmatter["description"] = " \n\t" }, EntryOptions{}, MissingDescription, ""},
		{"frontmatter nil", func(e *skill.Entry) { e.Frontmatter = nil }, EntryOptions{}, BadName, ""},
		{"missing resources strict", func(e *skill.Entry) { e.Manifest, e.Resources = skill.Missing, nil }, EntryOptions{Strict: true}, MissingResources, ""},
		// The Final text: no resources at all is invalid, not dynamic, in
		// lenient mode too.
		{"missing resources lenient", func(e *skill.Entry) { e.Manifest, e.Resources = skill.Missing, nil }, EntryOptions{}, MissingResources, ""},
		{"unknown manifest", func(e *skill.Entry) { e.Manifest = 7 }, EntryOptions{}, Malformed, ""},
		{"missing size strict", setRes(1, func(r *skill.Resource) { r.HasSize = false }), EntryOptions{Strict: true}, MissingSize, dir + "examples/email.md"},
		{"negative size", setRes(1, func(r *skill.Resource) { r.Size = -1 }), EntryOptions{}, BadSize, dir + "examples/email.md"},
		{"digest uppercase", setRes(1, func(r *skill.Resource) { r.Digest = skill.Digest(strings.ToUpper(string(r.Digest))) }), EntryOptions{}, BadDigest, dir + "examples/email.md"},
		{"digest hex uppercase", setRes(1, func(r *skill.Resource) { r.Digest = "sha256:" + skill.Digest(strings.ToUpper(string(r.Digest[7:]))) }), EntryOptions{}, BadDigest, ""},
		{"digest short", setRes(1, func(r *skill.Resource) { r.Digest = r.Digest[:70] }), EntryOptions{}, BadDigest, ""},
		{"digest empty", setRes(1, func(r *skill.Resource) { r.Digest = "" }), EntryOptions{}, BadDigest, ""},
		{"digest sha512", setRes(1, func(r *skill.Resource) { r.Digest = "sha512:" + r.Digest[7:] }), EntryOptions{}, BadDigest, ""},
		{"resource file scheme", add(res("file:///etc/passwd", "x")), EntryOptions{}, BadScheme, "file:///etc/passwd"},
		{"resource https", add(res("https://evil.example/x", "x")), EntryOptions{}, BadScheme, ""},
		{"resource relative", add(res("examples/email.md", "x")), EntryOptions{}, BadURI, ""},
		{"resource dot-dot", add(res(dir+"../../secrets/SKILL.md", "x")), EntryOptions{}, BadSegment, ""},
		{"resource encoded dot-dot", add(res(dir+"%2e%2e/x", "x")), EntryOptions{}, BadSegment, ""},
		{"resource encoded slash", add(res(dir+"a%2F..%2Fb", "x")), EntryOptions{}, BadSegment, ""},
		{"resource backslash", add(res(dir+"a%5C..%5Cb", "x")), EntryOptions{}, BadSegment, ""},
		{"resource NUL", add(res(dir+"a%00", "x")), EntryOptions{}, BadSegment, ""},
		{"resource too long", add(res(dir+strings.Repeat("n", 256), "x")), EntryOptions{}, TooLong, ""},
		{"resource too deep", add(res(dir+strings.Repeat("d/", 30)+"x", "x")), EntryOptions{}, TooDeep, ""},
		{"resource in a sibling skill", add(res("skill://acme/billing/payments/x", "x")), EntryOptions{}, OutsideSkill, "skill://acme/billing/payments/x"},
		{"resource in the parent", add(res("skill://acme/billing/x", "x")), EntryOptions{}, OutsideSkill, ""},
		{"resource is the directory", add(res("skill://acme/billing/refunds", "x")), EntryOptions{}, OutsideSkill, ""},
		{"resource prefix-named sibling", add(res("skill://acme/billing/refunds-old/x", "x")), EntryOptions{}, OutsideSkill, ""},
		{"resource other authority", add(res("skill://evil/billing/refunds/x", "x")), EntryOptions{}, OutsideSkill, ""},
		{"resource other scheme", add(res("github://acme/billing/refunds/x", "x")), EntryOptions{}, OutsideSkill, ""},
		{"resource authority case", add(res("skill://ACME/billing/refunds/x", "x")), EntryOptions{}, OutsideSkill, ""},
		{"duplicate", add(res(dir+"examples/email.md", "hello")), EntryOptions{}, DuplicateResource, ""},
		{"duplicate by encoding", add(res(dir+"examples/%65mail.md", "hello")), EntryOptions{}, DuplicateResource, ""},
		{"duplicate SKILL.md", add(res(dir+"SKILL.md", "again")), EntryOptions{}, DuplicateResource, ""},
		{"missing SKILL.md", func(e *skill.Entry) { e.Resources = e.Resources[1:] }, EntryOptions{}, MissingSkillMD, dir + "SKILL.md"},
		{"empty resources", func(e *skill.Entry) { e.Resources = []skill.Resource{} }, EntryOptions{}, MissingSkillMD, ""},
		{"513 resources", many(513), EntryOptions{}, OverLimit, dir + "SKILL.md"},
		{"custom resource cap", many(4), EntryOptions{MaxResources: 3}, OverLimit, ""},
		{"total over 16 MiB", func(e *skill.Entry) {
			e.Resources[1].Size = 8 << 20
			e.Resources[2].Size = 8 << 20
		}, EntryOptions{}, OverLimit, dir + "SKILL.md"},
		{"file over cap", setRes(1, func(r *skill.Resource) { r.Size = 16<<20 + 1 }), EntryOptions{}, OverLimit, dir + "examples/email.md"},
		{"file over custom cap", setRes(1, func(r *skill.Resource) { r.Size = 11 }), EntryOptions{MaxFileSize: 10}, OverLimit, ""},
		{"sizes that overflow int64", func(e *skill.Entry) {
			for i := range e.Resources {
				e.Resources[i].Size = 1 << 62
			}
		}, EntryOptions{MaxFileSize: 1 << 62, MaxTotalSize: 1<<63 - 1}, OverLimit, ""},
		{"case collision with SKILL.md", add(res(dir+"Skill.md", "x")), EntryOptions{}, Collision, dir + "Skill.md"},
		{"case collision in a directory", add(res(dir+"Examples/email.md", "x")), EntryOptions{}, Collision, ""},
		{"NFC/NFD collision", add(res(dir+"caf%C3%A9", "1"), res(dir+"cafe%CC%81", "2")), EntryOptions{}, Collision, dir + "cafe%CC%81"},
		{"full case folding collision", add(res(dir+"stra%C3%9Fe", "1"), res(dir+"STRASSE", "2")), EntryOptions{}, Collision, ""},
		{"Kelvin sign collision", add(res(dir+"k", "1"), res(dir+"%E2%84%AA", "2")), EntryOptions{}, Collision, ""},
		{"file is also a directory", add(res(dir+"a/b", "1"), res(dir+"a/b/c", "2")), EntryOptions{}, Collision, dir + "a/b/c"},
		{"directory is also a file", add(res(dir+"a/b/c", "1"), res(dir+"a/b", "2")), EntryOptions{}, Collision, dir + "a/b"},
		{"file is a directory after folding", add(res(dir+"A/B", "1"), res(dir+"a/b/c", "2")), EntryOptions{}, Collision, ""},
		{"SKILL.md is a directory", add(res(dir+"SKILL.md/x", "1")), EntryOptions{}, Collision, ""},
	}
	seen := map[Reason]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := goodEntry()
			tt.mutate(&e)
			s, err := CheckEntry(e, tt.opts)
			if ReasonOf(err) != tt.want {
				t.Fatalf("CheckEntry = %+v, %v; want reason %q", s, err, tt.want)
			}
			if s != nil {
				t.Errorf("CheckEntry returned a skill with an error")
			}
			if tt.subject != "" && err.(*Error).Subject != tt.subject {
				t.Errorf("Subject = %q, want %q", err.(*Error).Subject, tt.subject)
			}
			if err.(*Error).Detail == "" {
				t.Errorf("no Detail in %v", err)
			}
		})
		seen[tt.want] = true
	}
	for _, r := range []Reason{BadURI, BadScheme, BadSegment, TooLong, TooDeep, ReservedName, OutsideSkill, NotSkillMD,
		BadName, NameMismatch, MissingDescription, MissingSkillMD, DuplicateResource, BadDigest, MissingSize, BadSize,
		MissingResources, OverLimit, Collision, Malformed} {
		if !seen[r] {
			t.Errorf("no rejection row for %q", r)
		}
	}
}

func TestDecodeEntry(t *testing.T) {
	d := string(DigestOf(nil))
	good := `{"uri":"skill://pdf-processing/SKILL.md",
	  "frontmatter":{"name":"pdf-processing","description":"Extract PDFs","metadata":{"version":"2.1.0"}},
	  "resources":[{"uri":"skill://pdf-processing/SKILL.md","digest":"` + d + `","size":0},
	               {"uri":"skill://pdf-processing/templates/regional/eu-invoice.md","digest":"` + d + `","size":0}]}`
	s, err := DecodeEntry([]byte(good), EntryOptions{Strict: true})
	if err != nil {
		t.Fatalf("DecodeEntry: %v", err)
	}
	if len(s.Files) != 2 || s.Files[1].URI.Path() != "pdf-processing/templates/regional/eu-invoice.md" {
		t.Errorf("skill = %+v", s)
	}
	older := `{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},
	  "resources":[{"uri":"skill://a/SKILL.md","digest":"` + d + `"}]}`
	if _, err := DecodeEntry([]byte(older), EntryOptions{}); err != nil {
		t.Errorf("older revision, lenient: %v", err)
	}
	if _, err := DecodeEntry([]byte(older), EntryOptions{Strict: true}); ReasonOf(err) != MissingSize {
		t.Errorf("older revision, strict: %v, want missing-size", err)
	}
	dynamic := `{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":"dynamic"}`
	if s, err := DecodeEntry([]byte(dynamic), EntryOptions{Strict: true}); err != nil || !s.Dynamic {
		t.Errorf("dynamic: %+v, %v", s, err)
	}
	bad := []struct {
		raw  string
		want Reason
	}{
		{`not json`, Malformed},
		{`[]`, Malformed},
		{`{"uri":7,"frontmatter":{}}`, Malformed},
		{`{"uri":"skill://a/SKILL.md"}`, Malformed},
		{`{"uri":"skill://a/SKILL.md","frontmatter":[]}`, Malformed},
		{`{"uri":"skill://a/SKILL.md","frontmatter":{},"resources":{}}`, Malformed},
		{`{"uri":"skill://a/SKILL.md","frontmatter":{},"resources":"all"}`, Malformed},
		{`{"uri":"skill://a/SKILL.md","frontmatter":{},"resources":[{"uri":"skill://a/SKILL.md","digest":"` + d + `","size":true}]}`, Malformed},
		{`{"uri":"skill://a/SKILL.md","frontmatter":{},"resources":[{"uri":"skill://a/SKILL.md","digest":"` + d + `","size":1.5}]}`, Malformed},
		{`{"uri":"skill://a/SKILL.md","frontmatter":{},"resources":[{"uri":1}]}`, Malformed},
		{`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},"resources":[{"uri":"skill://a/SKILL.md","digest":"` + d + `","size":-5}]}`, BadSize},
		{`{"uri":"file:///etc/SKILL.md","frontmatter":{"name":"etc","description":"d"},"resources":"dynamic"}`, BadScheme},
		{`{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"}}`, MissingResources},
	}
	for _, tt := range bad {
		_, err := DecodeEntry([]byte(tt.raw), EntryOptions{Strict: true})
		if ReasonOf(err) != tt.want {
			t.Errorf("DecodeEntry(%s) = %v, want %q", tt.raw, err, tt.want)
		}
		if tt.want == MissingResources {
			if _, err := DecodeEntry([]byte(tt.raw), EntryOptions{}); ReasonOf(err) != MissingResources {
				t.Errorf("DecodeEntry(%s), lenient = %v, want %q", tt.raw, err, tt.want)
			}
		}
	}
}

func TestValidName(t *testing.T) {
	for _, ok := range []string{"a", "git-workflow", "pdf-processing", "x1", "1x", "a-b-c", strings.Repeat("a", 64)} {
		if err := ValidName(ok); err != nil {
			t.Errorf("ValidName(%q) = %v", ok, err)
		}
	}
	for _, tt := range []struct{ name, detail string }{
		{"", "empty"},
		{strings.Repeat("a", 65), "longer than 64"},
		{"A", "lowercase"},
		{"a b", "lowercase"},
		{"a.b", "lowercase"},
		{"a/b", "lowercase"},
		{"ä", "lowercase"},
		{"-a", "starts with a hyphen"},
		{"-", "starts with a hyphen"},
		{"a-", "ends with a hyphen"},
		{"a--b", "double hyphen"},
	} {
		err := ValidName(tt.name)
		if ReasonOf(err) != BadName || !strings.Contains(err.Error(), tt.detail) {
			t.Errorf("ValidName(%q) = %v, want bad-name mentioning %q", tt.name, err, tt.detail)
		}
	}
}

func TestDigests(t *testing.T) {
	const empty = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	if got := DigestOf(nil); got != empty {
		t.Errorf("DigestOf(nil) = %s", got)
	}
	if got := DigestOf([]byte("abc")); got != "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("DigestOf(abc) = %s", got)
	}
	if err := CheckDigestFormat(empty); err != nil {
		t.Errorf("CheckDigestFormat: %v", err)
	}
	for _, d := range []string{"", "sha256:", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"SHA256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"sha256:E3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b85",
		"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b8555",
		"sha256:g3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"sha256: 3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"sha1:da39a3ee5e6b4b0d3255bfef95601890afd80709"} {
		if err := CheckDigestFormat(skill.Digest(d)); ReasonOf(err) != BadDigest {
			t.Errorf("CheckDigestFormat(%q) = %v, want bad-digest", d, err)
		}
	}
}
