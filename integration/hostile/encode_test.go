package hostile

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestContentsAsMarshal holds contents and contentsBlocks to contentsMap,
// json.Marshal of a map, and yamlQuote to json.Marshal: the same bytes
// for every text, whether or not they write it themselves, and however
// contentsBlocks gets it in pieces.
func TestContentsAsMarshal(t *testing.T) {
	inputs := []string{
		"", "a", "\n", `"`, `\`, "<>&", "a\u2028b", "\u2029", "é ✓ 🙂", "\x7f", "\xff", "a\xc3", "tab\there\r\n",
		string(filler("a label", 5000)),
		string(skillMD("name", `a "quoted" \ description`, "", "# body\n")),
		TerminalEscapes, MarkdownSteeringDescription,
	}
	for c := range 256 {
		inputs = append(inputs, string([]byte{byte(c)}), "x"+string([]byte{byte(c)})+"y")
	}
	// Random texts over an alphabet of what takes each path.
	alphabet := []string{"a", "Z", "0", " ", "~", "\x7f", "\n", "\r", "\t", `"`, `\`, "<", ">", "&", "\x00", "\x1f", "\b", "\f", "é", "\u2028", "\u2029", "🙂", "\xff", "\xc3"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(40) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		inputs = append(inputs, b.String())
	}
	fast := 0
	for _, in := range inputs {
		for _, uri := range []string{"skill://x/a.md", "skill://x/<b>&.bin"} {
			got, want := contents(uri, []byte(in)), contentsMap(uri, []byte(in))
			if !bytes.Equal(got, want) {
				t.Fatalf("contents(%q, %q):\n got %s\nwant %s", uri, in, got, want)
			}
			var pieces []string
			for rest := in; len(rest) > 0; {
				k := 1 + rng.IntN(len(rest))
				pieces, rest = append(pieces, rest[:k]), rest[k:]
			}
			blocks := func(fn func([]byte)) {
				for _, p := range pieces {
					fn([]byte(p))
				}
			}
			if got := contentsBlocks(uri, blocks, func() []byte { return []byte(in) }); !bytes.Equal(got, want) {
				t.Fatalf("contentsBlocks(%q, %q):\n got %s\nwant %s", uri, pieces, got, want)
			}
		}
		if _, ok := textLength([]byte(in)); ok {
			fast++
		}
		if want, _ := json.Marshal(in); yamlQuote(in) != string(want) {
			t.Fatalf("yamlQuote(%q) = %s, want %s", in, yamlQuote(in), want)
		}
	}
	if fast < len(inputs)/10 {
		t.Errorf("contents wrote only %d of %d texts itself", fast, len(inputs))
	}
}

// TestMarshalEntryAsMarshal holds marshalEntry to json.Marshal for the
// entries of every fixture and mode. The fixtures of big files are left
// out: their entries are of the others' shape, and hashing their MiBs
// would be most of the test's cost.
func TestMarshalEntryAsMarshal(t *testing.T) {
	big := []string{OversizeSkillMD, DeclaredTotalOver, Budget1, Budget2, Budget3}
	var defs []*skillDef
	for _, mode := range append([]string{""}, CrowdModes()...) {
		fixtures := []string{}
		if mode == "" {
			fixtures = slices.DeleteFunc(Fixtures(), func(f string) bool { return slices.Contains(big, f) })
		}
		s, err := New(Options{Fixtures: fixtures, Mode: mode, Crowd: 3})
		if err != nil {
			t.Fatal(err)
		}
		defs = append(append(defs, s.skills...), s.unlisted...)
	}
	defs = append(defs, escapesSkills()...)
	for n := range 3 {
		defs = append(defs, generatedSkill("endless", n), generatedSkill("bulk", n), heavySkill(Heavy{Resources: 4}.withDefaults(), n))
	}
	for _, d := range defs {
		for _, phase := range []string{"a", "c", "new"} {
			for _, get := range []bool{false, true} {
				e := d.entry(phase, get)
				want, err := json.Marshal(e)
				if err != nil {
					t.Fatal(err)
				}
				if got := marshalEntry(e); !bytes.Equal(got, want) {
					t.Fatalf("%s:\n got %s\nwant %s", d.uri, got, want)
				}
			}
		}
	}
}
