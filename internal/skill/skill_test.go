package skill

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestUnmarshalEntryShapes(t *testing.T) {
	cases := []struct {
		name, json string
		manifest   Manifest
		wantErr    string
	}{
		{"listed", `{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a"},"resources":[{"uri":"skill://a/SKILL.md","digest":"sha256:x","size":3}]}`, Listed, ""},
		{"older revision, no size", `{"uri":"skill://a/SKILL.md","frontmatter":{},"resources":[{"uri":"skill://a/SKILL.md","digest":"sha256:x"}]}`, Listed, ""},
		{"dynamic", `{"uri":"skill://a/SKILL.md","frontmatter":{},"resources":"dynamic"}`, Dynamic, ""},
		{"no resources", `{"uri":"skill://a/SKILL.md","frontmatter":{}}`, Missing, ""},
		{"null resources", `{"uri":"skill://a/SKILL.md","frontmatter":{},"resources":null}`, Missing, ""},
		{"resources another string", `{"uri":"x","frontmatter":{},"resources":"static"}`, 0, "other than"},
		{"resources a number", `{"uri":"x","frontmatter":{},"resources":3}`, 0, "neither"},
		{"uri a number", `{"uri":3,"frontmatter":{}}`, 0, "malformed"},
		{"no frontmatter", `{"uri":"x"}`, 0, "frontmatter"},
		{"frontmatter a string", `{"uri":"x","frontmatter":"a"}`, 0, "malformed"},
		{"quoted size", `{"uri":"x","frontmatter":{},"resources":[{"uri":"x","digest":"d","size":"3"}]}`, 0, "size is not a number"},
		{"fractional size", `{"uri":"x","frontmatter":{},"resources":[{"uri":"x","digest":"d","size":1.5}]}`, 0, "not an integer"},
		{"digest a number", `{"uri":"x","frontmatter":{},"resources":[{"uri":"x","digest":1}]}`, 0, "digest"},
	}
	for _, c := range cases {
		var e Entry
		err := json.Unmarshal([]byte(c.json), &e)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.wantErr)
		case c.wantErr == "" && e.Manifest != c.manifest:
			t.Errorf("%s: manifest %v, want %v", c.name, e.Manifest, c.manifest)
		}
	}
}

func TestEntryRoundTrip(t *testing.T) {
	in := `{"uri":"skill://a/SKILL.md","frontmatter":{"description":"d","n":1.50,"name":"a"},"resources":[{"uri":"skill://a/SKILL.md","digest":"sha256:x","size":3},{"uri":"skill://a/b","digest":"sha256:y"}]}`
	var e Entry
	if err := json.Unmarshal([]byte(in), &e); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("round trip:\n got %s\nwant %s", out, in)
	}
	if e.Name() != "a" || e.Description() != "d" {
		t.Errorf("Name %q Description %q", e.Name(), e.Description())
	}
	if r, ok := e.Resource("skill://a/b"); !ok || r.HasSize {
		t.Errorf("Resource(skill://a/b) = %+v, %v", r, ok)
	}
}

// The fast paths of decoding must say what encoding/json says, or leave
// the literal to it.
func TestPlainLiteralsDecodeAsJSONDoes(t *testing.T) {
	for _, raw := range []string{
		`"skill://a/b/SKILL.md"`, `""`, `"sha256:00ff"`, `"caf\u00e9"`, `"café"`, `"a\"b"`, `"a\\b"`,
		"\"\xff\"", "\"a\tb\"", `"`, `x"`, ` "a"`, `"a" `, `null`, `12`,
	} {
		var want string
		werr := json.Unmarshal([]byte(raw), &want)
		if got, ok := plainString([]byte(raw)); ok && (werr != nil || got != want) {
			t.Errorf("plainString(%q) = %q; encoding/json: %q, %v", raw, got, want, werr)
		}
	}
	for _, raw := range []string{
		`0`, `-0`, `12`, `-12`, `012`, `1.0`, `1e3`, `-`, ``, `999999999999999999`, `9999999999999999999`, `"12"`, ` 12`, `+1`,
	} {
		var n json.Number
		werr := json.Unmarshal([]byte(raw), &n)
		want, nerr := n.Int64()
		if got, ok := plainInt([]byte(raw)); ok && (werr != nil || nerr != nil || got != want) {
			t.Errorf("plainInt(%q) = %d; encoding/json: %d, %v, %v", raw, got, want, werr, nerr)
		}
	}
}
