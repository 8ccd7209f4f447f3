package skill

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// The SEP's own examples (from the 2026-08-21 draft; the Final text,
// specification/stable/skills.mdx in modelcontextprotocol/ext-skills,
// keeps their shapes and adds ttlMs and cacheScope to skills/get), as the
// "result" member of each response. The skills/list result also carries
// the 2026-07-28 list-caching attributes the SEP asks for there.
const (
	sepListResult = `{
    "resultType": "complete",
    "skills": [
      {
        "uri": "skill://git-workflow/SKILL.md",
        "frontmatter": {
          "name": "git-workflow",
          "description": "Follow this team's Git conventions for branching and commits"
        },
        "resources": [
          {"uri": "skill://git-workflow/SKILL.md", "digest": "sha256:a1b2c3d4...", "size": 2314}
        ]
      },
      {
        "uri": "skill://pdf-processing/SKILL.md",
        "frontmatter": {
          "name": "pdf-processing",
          "description": "Extract, fill, and assemble PDF documents",
          "metadata": { "version": "2.1.0" }
        },
        "resources": [
          {"uri": "skill://pdf-processing/SKILL.md", "digest": "sha256:d5e6f7a8...", "size": 5120},
          {"uri": "skill://pdf-processing/references/FORMS.md", "digest": "sha256:e6f7a8b9...", "size": 18433}
        ]
      }
    ],
    "nextCursor": "page-2",
    "ttlMs": 60000,
    "cacheScope": "public"
  }`
	sepGetResult = `{
    "resultType": "complete",
    "skill": {
      "uri": "skill://pdf-processing/SKILL.md",
      "frontmatter": {
        "name": "pdf-processing",
        "description": "Extract, fill, and assemble PDF documents",
        "metadata": { "version": "2.1.0" }
      },
      "resources": [
        {"uri": "skill://pdf-processing/SKILL.md", "digest": "sha256:d5e6f7a8...", "size": 5120},
        {"uri": "skill://pdf-processing/templates/invoice.md", "digest": "sha256:a8b9c0d1...", "size": 1210}
      ]
    }
  }`
	sepReadDirResult = `{
    "resultType": "complete",
    "resources": [
      {"uri": "skill://pdf-processing/templates/invoice.md", "name": "invoice.md", "mimeType": "text/markdown"},
      {"uri": "skill://pdf-processing/templates/purchase-order.md", "name": "purchase-order.md", "mimeType": "text/markdown"},
      {"uri": "skill://pdf-processing/templates/regional", "name": "regional", "mimeType": "inode/directory"}
    ]
  }`
)

// sameJSON reports whether two documents hold the same JSON value,
// whatever their key order and spacing.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	for _, x := range []struct {
		b []byte
		v *any
	}{{a, &va}, {b, &vb}} {
		dec := json.NewDecoder(bytes.NewReader(x.b))
		dec.UseNumber()
		if err := dec.Decode(x.v); err != nil {
			t.Fatalf("%s: %v", x.b, err)
		}
	}
	return reflect.DeepEqual(va, vb)
}

// roundTrip decodes doc into a new T and encodes it again; the result
// must be the same JSON value.
func roundTrip[T any](t *testing.T, name, doc string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("%s: decode: %v", name, err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s: encode: %v", name, err)
	}
	if !sameJSON(t, out, []byte(doc)) {
		t.Errorf("%s: round trip changed the value:\n got %s\nwant %s", name, out, doc)
	}
	return v
}

func TestSEPExamplesRoundTrip(t *testing.T) {
	// Both forms of each result: what a server sends, and the raw form a
	// client decodes.
	l := roundTrip[ListResult[Entry]](t, "skills/list", sepListResult)
	if l.ResultType != ResultComplete || len(l.Skills) != 2 || l.NextCursor != "page-2" ||
		l.TTLMs == nil || *l.TTLMs != 60000 || l.CacheScope != ScopePublic {
		t.Errorf("skills/list decoded as %+v", l)
	}
	if r, ok := l.Skills[1].Resource("skill://pdf-processing/references/FORMS.md"); !ok || r.Size != 18433 || !r.HasSize {
		t.Errorf("skills/list: FORMS.md is %+v, %v", r, ok)
	}
	raw := roundTrip[ListResult[json.RawMessage]](t, "skills/list raw", sepListResult)
	if len(raw.Skills) != 2 || *raw.TTLMs != 60000 {
		t.Errorf("skills/list raw decoded as %+v", raw)
	}
	for i, r := range raw.Skills {
		var e Entry
		if err := json.Unmarshal(r, &e); err != nil || !e.Equal(l.Skills[i]) {
			t.Errorf("raw entry %d decodes to %+v (%v), want %+v", i, e, err, l.Skills[i])
		}
	}

	g := roundTrip[GetResult[Entry]](t, "skills/get", sepGetResult)
	if g.ResultType != ResultComplete || g.Skill.URI != "skill://pdf-processing/SKILL.md" || len(g.Skill.Resources) != 2 {
		t.Errorf("skills/get decoded as %+v", g)
	}
	roundTrip[GetResult[json.RawMessage]](t, "skills/get raw", sepGetResult)

	d := roundTrip[ReadDirResult[DirChild]](t, "directory read", sepReadDirResult)
	want := []DirChild{
		{URI: "skill://pdf-processing/templates/invoice.md", Name: "invoice.md", MIMEType: "text/markdown"},
		{URI: "skill://pdf-processing/templates/purchase-order.md", Name: "purchase-order.md", MIMEType: "text/markdown"},
		{URI: "skill://pdf-processing/templates/regional", Name: "regional", MIMEType: MIMEDirectory},
	}
	if !reflect.DeepEqual(d.Resources, want) || d.NextCursor != "" || d.TTLMs != nil {
		t.Errorf("directory read decoded as %+v", d)
	}
	roundTrip[ReadDirResult[json.RawMessage]](t, "directory read raw", sepReadDirResult)
}

// The exact bytes a server sends: field names, which fields are left out
// when empty, and that an empty page is [] rather than null.
func TestResultEncoding(t *testing.T) {
	zero := int64(0)
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"list, older protocol", ListResult[Entry]{Skills: []Entry{}}, `{"skills":[]}`},
		{"list, 2026-07-28", ListResult[Entry]{ResultType: ResultComplete, Skills: []Entry{}, NextCursor: "c", TTLMs: &zero, CacheScope: ScopePrivate},
			`{"resultType":"complete","skills":[],"nextCursor":"c","ttlMs":0,"cacheScope":"private"}`},
		{"get", GetResult[Entry]{Skill: Entry{URI: "skill://a/SKILL.md", Manifest: Dynamic}},
			`{"skill":{"uri":"skill://a/SKILL.md","frontmatter":{},"resources":"dynamic"}}`},
		{"directory read", ReadDirResult[DirChild]{Resources: []DirChild{{URI: "skill://a/x.md", Name: "x.md", MIMEType: "text/markdown", Size: 3}, {URI: "skill://a/b", Name: "b", MIMEType: MIMEDirectory}}},
			`{"resources":[{"uri":"skill://a/x.md","name":"x.md","mimeType":"text/markdown","size":3},{"uri":"skill://a/b","name":"b","mimeType":"inode/directory"}]}`},
		{"list params", ListParams{}, `{}`},
		{"get params", GetParams{URI: "skill://a/SKILL.md"}, `{"uri":"skill://a/SKILL.md"}`},
		{"directory read params", ReadDirParams{URI: "skill://a", Cursor: "c"}, `{"uri":"skill://a","cursor":"c"}`},
		{"settings", Settings{DirectoryRead: true}, `{"directoryRead":true}`},
		{"settings, no optional features", Settings{}, `{}`},
	}
	for _, c := range cases {
		got, err := json.Marshal(c.v)
		if err != nil || string(got) != c.want {
			t.Errorf("%s: %s (%v), want %s", c.name, got, err, c.want)
		}
	}
}

// Each side embeds a shape beside go-sdk's _meta; that works only while
// the shapes have no JSON methods of their own, which would be promoted
// and replace the wrapper's encoding.
func TestShapesEmbed(t *testing.T) {
	for _, v := range []any{ListParams{}, ListResult[Entry]{}, ListResult[json.RawMessage]{}, GetParams{},
		GetResult[Entry]{}, GetResult[json.RawMessage]{}, ReadDirParams{}, ReadDirResult[DirChild]{},
		ReadDirResult[json.RawMessage]{}, DirChild{}, Settings{}} {
		if _, ok := v.(json.Marshaler); ok {
			t.Errorf("%T has MarshalJSON", v)
		}
		if reflect.PointerTo(reflect.TypeOf(v)).Implements(reflect.TypeFor[json.Unmarshaler]()) {
			t.Errorf("%T has UnmarshalJSON", v)
		}
	}
	type base struct {
		Meta map[string]any `json:"_meta,omitempty"`
	}
	type wrapped struct {
		base
		ReadDirParams
	}
	w := wrapped{base{map[string]any{"k": "v"}}, ReadDirParams{URI: "skill://a", Cursor: "c"}}
	b, err := json.Marshal(w)
	if want := `{"_meta":{"k":"v"},"uri":"skill://a","cursor":"c"}`; err != nil || string(b) != want {
		t.Errorf("wrapped params: %s (%v), want %s", b, err, want)
	}
	var back wrapped
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, w) {
		t.Errorf("wrapped params decode to %+v (%v)", back, err)
	}
}

func TestSettingsOf(t *testing.T) {
	cases := []struct {
		name string
		v    any
		want bool
	}{
		{"directoryRead true", map[string]any{"directoryRead": true}, true},
		{"directoryRead false", map[string]any{"directoryRead": false}, false},
		{"empty object", map[string]any{}, false},
		{"not a boolean", map[string]any{"directoryRead": "true"}, false},
		{"another spelling", map[string]any{"DirectoryRead": true}, false},
		{"not an object", true, false},
		{"null", nil, false},
	}
	for _, c := range cases {
		if got := SettingsOf(c.v).DirectoryRead; got != c.want {
			t.Errorf("%s: directoryRead %v, want %v", c.name, got, c.want)
		}
	}
	// What a client receives from a server that declared Settings.
	b, _ := json.Marshal(map[string]any{ExtensionID: Settings{DirectoryRead: true}})
	var caps map[string]any
	if err := json.Unmarshal(b, &caps); err != nil || !SettingsOf(caps[ExtensionID]).DirectoryRead {
		t.Errorf("declared settings %s read back as %+v (%v)", b, SettingsOf(caps[ExtensionID]), err)
	}
}

func TestEntryEqual(t *testing.T) {
	decode := func(s string) Entry {
		t.Helper()
		var e Entry
		if err := json.Unmarshal([]byte(s), &e); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		return e
	}
	base := `{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","n":1},"resources":[{"uri":"skill://a/SKILL.md","digest":"sha256:x","size":3}]}`
	cases := []struct {
		name string
		a, b Entry
		want bool
	}{
		{"same", decode(base), decode(base), true},
		{"other key order and spacing", decode(base), decode(`{ "resources":[{"size":3,"digest":"sha256:x","uri":"skill://a/SKILL.md"}], "frontmatter":{"n":1,"name":"a"}, "uri":"skill://a/SKILL.md"}`), true},
		{"no frontmatter and an empty one", Entry{URI: "u", Manifest: Missing}, Entry{URI: "u", Frontmatter: map[string]any{}, Manifest: Missing}, true},
		{"nil and empty manifest", Entry{URI: "u"}, Entry{URI: "u", Resources: []Resource{}}, true},
		{"another size", decode(base), decode(strings.Replace(base, `"size":3`, `"size":4`, 1)), false},
		{"size given and not", decode(base), decode(strings.Replace(base, `,"size":3`, ``, 1)), false},
		{"another digest", decode(base), decode(strings.Replace(base, `sha256:x`, `sha256:y`, 1)), false},
		{"a number spelled otherwise", decode(base), decode(strings.Replace(base, `"n":1`, `"n":1.0`, 1)), false},
		{"another uri", decode(base), decode(strings.Replace(base, `"uri":"skill://a/SKILL.md","frontmatter"`, `"uri":"skill://b/SKILL.md","frontmatter"`, 1)), false},
		{"dynamic and missing", Entry{URI: "u", Manifest: Dynamic}, Entry{URI: "u", Manifest: Missing}, false},
		{"listed and missing", Entry{URI: "u", Manifest: Listed}, Entry{URI: "u", Manifest: Missing}, false},
		{"unencodable", Entry{URI: "u", Frontmatter: map[string]any{"f": func() {}}}, Entry{URI: "u", Frontmatter: map[string]any{"f": func() {}}}, false},
	}
	for _, c := range cases {
		if got := c.a.Equal(c.b); got != c.want {
			t.Errorf("%s: Equal %v, want %v", c.name, got, c.want)
		}
		if got := c.b.Equal(c.a); got != c.want {
			t.Errorf("%s, swapped: Equal %v, want %v", c.name, got, c.want)
		}
	}
}

func TestDigest(t *testing.T) {
	// sha256("abc"), FIPS 180-2 appendix B.1.
	const abc = Digest("sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
	if got := DigestOf([]byte("abc")); got != abc {
		t.Errorf("DigestOf(abc) = %s, want %s", got, abc)
	}
	if got := DigestOf(nil); got != "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("DigestOf(nil) = %s", got)
	}
	sum, err := ParseDigest(abc)
	if err != nil || FormatDigest(sum) != abc || sum[0] != 0xba || sum[31] != 0xad {
		t.Errorf("ParseDigest(%s) = %x, %v", abc, sum, err)
	}
	hex64 := string(abc)[len("sha256:"):]
	for _, bad := range []string{
		"",
		"sha256:",
		hex64,
		"SHA256:" + hex64,
		"sha512:" + hex64,
		"sha256:" + strings.ToUpper(hex64),
		"sha256:" + hex64[:63],
		"sha256:" + hex64 + "0",
		"sha256:" + hex64[:63] + "g",
		"sha256: " + hex64[1:],
		"sha256:" + hex64[:62] + "\x00a",
		" sha256:" + hex64,
	} {
		if sum, err := ParseDigest(Digest(bad)); err == nil {
			t.Errorf("ParseDigest(%q) = %x, want an error", bad, sum)
		}
	}
	// Every byte at every position: accepted exactly when it is a
	// lowercase hex digit, with encoding/hex's value.
	for i := range hex64 {
		for c := range 256 {
			h := hex64[:i] + string([]byte{byte(c)}) + hex64[i+1:]
			sum, err := ParseDigest(Digest("sha256:" + h))
			want, herr := hex.DecodeString(h)
			lower := '0' <= c && c <= '9' || 'a' <= c && c <= 'f'
			if (err == nil) != lower || err == nil && (herr != nil || !bytes.Equal(sum[:], want)) {
				t.Fatalf("ParseDigest with %q at %d = %x, %v; hex gives %x, %v", byte(c), i, sum, err, want, herr)
			}
		}
	}
}
