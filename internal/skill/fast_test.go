package skill

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// fastSeeds are entries in and just outside the shape the fast path takes.
var fastSeeds = []string{
	`{"uri":"skill://a/b/SKILL.md","frontmatter":{"name":"b","description":"B"},"resources":[{"uri":"skill://a/b/SKILL.md","digest":"sha256:00","size":12},{"uri":"skill://a/b/x.md","digest":"sha256:11","size":0}]}`,
	` { "uri" : "skill://x/SKILL.md" , "frontmatter" : { "name" : "x", "n": -1.5e+3, "ok": true, "no": false, "z": null, "list": ["a", 1, {"k": "v"}], "m": {"a": {"b": []}} }, "resources" : "dynamic" } `,
	`{"frontmatter":{},"uri":"skill://x/SKILL.md"}`,
	`{"uri":"skill://x/SKILL.md","frontmatter":{"name":"x","name":"y"},"resources":null}`,
	`{"uri":"skill://x/SKILL.md","frontmatter":{"name":"x"},"resources":[{"uri":"skill://x/SKILL.md","uri":"skill://x/y","digest":null,"size":null,"extra":{"a":[1,2]},"size":7}]}`,
	`{"uri":"skill://x/SKILL.md","frontmatter":{"name":"x"},"resources":[{"URI":"skill://x/SKILL.md","Digest":"d"}]}`,
	`{"URI":"skill://x/SKILL.md","frontmatter":{"name":"x"},"resources":[]}`,
	`{"uri":"skill://x/SKILL.md","uri":"skill://y/SKILL.md","frontmatter":{"name":"x"}}`,
	`{"uri":"skill://x/SKILL.md","frontmatter":{"name":"x"},"frontmatter":{"description":"d"}}`,
	`{"uri":"skill://x/SKILL.md","frontmatter":{"name":"x\u00e9","d":"é"},"resources":"dynamic"}`,
	`{"uri":"skill://x/SKILL.md","frontmatter":null}`,
	`{"uri":"skill://x/SKILL.md","frontmatter":{"name":"x"},"resources":[{"uri":"u","size":1.0}]}`,
	`{"uri":"skill://x/SKILL.md","frontmatter":{"name":"x"},"resources":[{"uri":"u","size":"1"}]}`,
	`{"uri":"skill://x/SKILL.md","frontmatter":{"name":"x"},"resources":[{"uri":"u","size":1234567890123456789}]}`,
	`{"uri":"skill://x/SKILL.md","frontmatter":{"name":"x"},"resources":[{"uri":"u","size":-0}]}`,
	`{"uri":"skill://x/SKILL.md","frontmatter":{"name":"x"},"resources":[null]}`,
	`{"uri":"skill://x/SKILL.md","frontmatter":{"name":"x"},"resources":[1]}`,
	`{"uri":"skill://x/SKILL.md","frontmatter":{"name":"x"},"resources":"static"}`,
	`{"uri":"skill://x/SKILL.md","frontmatter":{"name":"x"},"resources":{}}`,
	`{"uri":5,"frontmatter":{"name":"x"}}`,
	`{"uri":"skill://x/SKILL.md","frontmatter":{"name":"x"}} trailing`,
	`{"uri":"skill://x/SKILL.md","frontmatter":{"name":"x"},"other":[1,{"a":"b"}]}`,
	`[]`,
	`{"uri":"skill://x/SKILL.md","frontmatter":{"n":01}}`,
	`{"uri":"skill://x/SKILL.md","frontmatter":{"n":1.}}`,
	`{"uri":"skill://x/SKILL.md","frontmatter":{"n":-}}`,
	`{"uri":"skill://x/SKILL.md","frontmatter":{"n":1e}}`,
	"{\"uri\":\"skill://x/SKILL.md\",\"frontmatter\":{\"n\":\"a\tb\"}}",
	"{\"uri\":\"skill://x/\xff.md\",\"frontmatter\":{}}",
	`{"uri":"skill://x/SKILL.md","frontmatter":{"name":"x"},"resources":[{"uri":"skill://x/SKILL.md","digest":"sha256:00","size":1},]}`,
	`{"uri":"skill://x/SKILL.md","frontmatter":{"name":"x",},}`,
}

// TestParseEntryAgreesWithEncodingJSON holds the one-pass decoder to
// encoding/json: on the seeds and on many mutations of them, ParseEntry
// gives the entry json.Unmarshal gives, or the same error, and whenever
// the fast path takes an input encoding/json decodes it to the same entry.
func TestParseEntryAgreesWithEncodingJSON(t *testing.T) {
	fastTaken := 0
	check := func(raw []byte) {
		t.Helper()
		want, werr := parseSlow(raw)
		got, gerr := ParseEntry(raw)
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Fatalf("%q: error %v, encoding/json %v", raw, gerr, werr)
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q:\n got %#v\nwant %#v", raw, got, want)
		}
		if f, ok := parseFast(raw); ok {
			fastTaken++
			if werr != nil || !reflect.DeepEqual(f, want) {
				t.Fatalf("%q: the fast path took it as %#v; encoding/json: %#v, %v", raw, f, want, werr)
			}
		}
		var viaUnmarshal Entry
		uerr := json.Unmarshal(raw, &viaUnmarshal)
		if (uerr == nil) != (werr == nil) || (werr == nil && !reflect.DeepEqual(viaUnmarshal, want)) {
			t.Fatalf("%q: json.Unmarshal into Entry gives %#v, %v; want %#v, %v", raw, viaUnmarshal, uerr, want, werr)
		}
	}
	for _, s := range fastSeeds {
		check([]byte(s))
	}
	// Mutations: JSON's significant characters and a few others, put in,
	// taken out and swapped at random places.
	const alphabet = "{}[]\":,\\ \t\n0123456789-+.eEtrufalsn/Ü\x00\x1f\xff"
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		b := []byte(fastSeeds[rng.IntN(len(fastSeeds))])
		for range 1 + rng.IntN(3) {
			at := rng.IntN(len(b) + 1)
			c := alphabet[rng.IntN(len(alphabet))]
			switch rng.IntN(3) {
			case 0:
				b = append(b[:at], append([]byte{c}, b[at:]...)...)
			case 1:
				if at < len(b) {
					b = append(b[:at], b[at+1:]...)
				}
			default:
				if at < len(b) {
					b[at] = c
				}
			}
		}
		check(b)
	}
	if fastTaken < 1000 {
		t.Errorf("the fast path took only %d inputs: the test does not exercise it", fastTaken)
	}
	t.Logf("fast path taken for %d inputs", fastTaken)
}

// The fast path shares one copy of the entry among its strings and keeps
// nothing of the caller's buffer.
func TestParseEntryKeepsNoCallerBytes(t *testing.T) {
	raw := []byte(fastSeeds[0])
	e, err := ParseEntry(raw)
	if err != nil {
		t.Fatal(err)
	}
	for i := range raw {
		raw[i] = 'X'
	}
	if e.URI != "skill://a/b/SKILL.md" || e.Resources[1].URI != "skill://a/b/x.md" || e.Name() != "b" || !strings.HasPrefix(string(e.Resources[0].Digest), "sha256:") {
		t.Errorf("entry changed with the caller's buffer: %+v", e)
	}
}
