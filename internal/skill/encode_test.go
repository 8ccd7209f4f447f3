package skill

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The texts, numbers and floats the seeds and the mutations draw on: each
// of encoding/json's escaping, number and float rules, and their edges.
var (
	marshalTexts = []string{
		"", "pdf-processing", "skill://a/b/SKILL.md", "sha256:00ff", "<a & b>", "a\u2028b\u2029c",
		"\xff", "a\xe2\x80", "\x00\x1f\x7f", "\t\n\r\b\f", `"\/`, "café 中文 😀", "\ufffd", "\u2027\u202a",
	}
	// Inserted, removed and swapped in strings: every class of byte
	// encoding/json treats apart, and pieces of multi-byte UTF-8.
	textAlphabet = []string{
		"a", "Z", " ", "~", "/", "<", ">", "&", `"`, `\`, "\x00", "\b", "\t", "\n", "\x1f", "\x7f",
		"\x80", "\xe2", "\xff", "é", "中", "😀", "\u2028", "\u2029", "\ufffd",
	}
	marshalNumbers = []json.Number{
		"", "0", "-0", "1.50", "1E+3", "-1.5e-3", "123456789012345678901234567890",
		"01", "1.", ".5", "+1", "-", "1e", "1e+", " 1", "NaN", "0x10",
	}
	numberAlphabet = []string{"0", "1", "9", "-", "+", ".", "e", "E", " ", "x"}
	marshalFloats  = []float64{
		0, math.Copysign(0, -1), 1, -1.5, 0.1, 123456789.125, 1e20, 999999999999999999999.0, 1e21, -1e21,
		1e-6, 0.000001, 9.999999e-7, 1e-7, 1e-10, 5e-324, math.MaxFloat64, 1e100, -1e-300,
		math.NaN(), math.Inf(1), math.Inf(-1),
	}
	marshalSizes = []int64{0, 1, -1, 2314, 1<<53 + 1, math.MaxInt64, math.MinInt64}
	// Values outside the shape appendJSON takes, which marshalSlow
	// encodes in its own way or refuses.
	outOfShape = []any{
		3, int64(-4), uint8(5), float32(0.1), Digest("sha256:<x>"), []string{"<"}, map[string]string{"a": "b"},
		(*int)(nil), json.RawMessage(`{"a" : 1}`), struct{ A string }{"a"}, []byte("hi"), func() {}, complex(1, 2),
	}
)

// nested returns v inside n objects.
func nested(n int, v any) any {
	for range n {
		v = map[string]any{"n": v}
	}
	return v
}

// marshalSeeds are entries in and just outside the shape appendJSON takes.
func marshalSeeds() []Entry {
	digest := DigestOf([]byte("x"))
	listed := []Resource{
		{URI: "skill://a/SKILL.md", Digest: digest, Size: 12, HasSize: true},
		{URI: "skill://a/x.md", Digest: digest},
	}
	fm := map[string]any{"name": "a", "description": "A"}
	seeds := []Entry{
		{URI: "skill://a/SKILL.md", Frontmatter: fm, Manifest: Listed, Resources: listed},
		{URI: "skill://a/SKILL.md", Frontmatter: fm, Manifest: Dynamic},
		{URI: "skill://a/SKILL.md", Frontmatter: fm, Manifest: Missing},
		{URI: "skill://a/SKILL.md", Frontmatter: fm, Manifest: Manifest(7), Resources: listed},
		{URI: "skill://a/SKILL.md", Manifest: Dynamic},
		{Frontmatter: map[string]any{}, Manifest: Missing},
		{URI: "u", Manifest: Listed},
		{URI: "u", Manifest: Listed, Resources: []Resource{}},
		{URI: "u", Manifest: Listed, Resources: []Resource{{}, {HasSize: true}}},
		{URI: "<u>", Frontmatter: map[string]any{
			"metadata": map[string]any{"version": "2.1.0", "tags": []any{"a", json.Number("1"), nil, true, false, map[string]any{}, []any{}}},
			"nil map":  map[string]any(nil), "nil array": []any(nil), "b": true, "z": nil,
			"deep": nested(maxDepth-1, []any{1.5}),
		}, Manifest: Dynamic},
		// Keys sort by their bytes before escaping.
		{URI: "u", Frontmatter: map[string]any{
			"b": 1.0, "a": 2.0, "B": 3.0, "<": 4.0, "é": 5.0, "\xff": 6.0, "\ufffd": 7.0, "": 8.0, "a\u2028": 9.0, "a\x00": 10.0,
		}},
		// Deeper than the one-pass encoder goes.
		{URI: "u", Frontmatter: map[string]any{"deep": nested(maxDepth+2, "x")}},
		{URI: "u", Frontmatter: map[string]any{"deep": []any{[]any{[]any{nested(maxDepth, nil)}}}}},
	}
	for i, size := range marshalSizes {
		seeds = append(seeds, Entry{URI: "u", Manifest: Listed, Resources: []Resource{
			{URI: "skill://a/" + marshalTexts[i], Digest: Digest(marshalTexts[len(marshalTexts)-1-i]), Size: size, HasSize: true},
			{URI: "skill://a/b", Digest: digest, Size: size, HasSize: false},
		}})
	}
	for _, s := range marshalTexts {
		seeds = append(seeds, Entry{URI: s, Frontmatter: map[string]any{s: s, "list": []any{s}}, Manifest: Listed,
			Resources: []Resource{{URI: s, Digest: Digest(s), HasSize: true}}})
	}
	for _, n := range marshalNumbers {
		seeds = append(seeds, Entry{URI: "u", Frontmatter: map[string]any{"n": n}, Manifest: Missing})
	}
	for _, f := range marshalFloats {
		seeds = append(seeds, Entry{URI: "u", Frontmatter: map[string]any{"f": f, "in": []any{f}}, Manifest: Missing})
	}
	for _, v := range outOfShape {
		seeds = append(seeds, Entry{URI: "u", Frontmatter: map[string]any{"v": map[string]any{"w": v}}, Manifest: Dynamic})
	}
	return seeds
}

// TestMarshalJSONAgreesWithReference holds the one-pass encoder to
// marshalSlow: on the seeds and on many mutations of them, MarshalJSON
// gives marshalSlow's bytes or its error, and whenever appendJSON takes an
// entry it writes those same bytes and marshalSlow does not fail.
func TestMarshalJSONAgreesWithReference(t *testing.T) {
	var fastTaken, fastEscaped, slowTaken, refused int
	check := func(e Entry) {
		t.Helper()
		want, werr := e.marshalSlow()
		got, gerr := e.MarshalJSON()
		if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) || !bytes.Equal(got, want) {
			t.Fatalf("%#v:\n got %s, %v\nwant %s, %v", e, got, gerr, want, werr)
		}
		viaMarshal, merr := json.Marshal(e)
		if (merr == nil) != (werr == nil) || (werr == nil && !bytes.Equal(viaMarshal, want)) {
			t.Fatalf("%#v: json.Marshal gives %s, %v; want %s, %v", e, viaMarshal, merr, want, werr)
		}
		fast, ok := e.appendJSON([]byte("prefix"))
		switch {
		case ok && (werr != nil || string(fast) != "prefix"+string(want)):
			t.Fatalf("%#v: the one-pass encoder wrote %s; marshalSlow: %s, %v", e, fast, want, werr)
		case ok:
			fastTaken++
			if bytes.IndexByte(want, '\\') >= 0 {
				fastEscaped++
			}
		case werr != nil:
			refused++
		default:
			slowTaken++
		}
	}
	seeds := marshalSeeds()
	for _, e := range seeds {
		check(e)
	}
	cycle := map[string]any{}
	cycle["self"] = cycle
	check(Entry{URI: "u", Frontmatter: cycle})
	check(benchEntry())

	rng := rand.New(rand.NewPCG(1, 2))
	const mutations = 30000
	for range mutations {
		e := cloneEntry(seeds[rng.IntN(len(seeds))])
		for range 1 + rng.IntN(3) {
			mutateEntry(rng, &e)
		}
		check(e)
	}
	t.Logf("%d seeds and %d mutations: %d taken by the one-pass encoder (%d with escapes), %d encoded by marshalSlow, %d refused",
		len(seeds)+2, mutations, fastTaken, fastEscaped, slowTaken, refused)
	if fastTaken < mutations/2 || fastEscaped < 1000 || slowTaken < 1000 || refused < 1000 {
		t.Errorf("the mutations do not exercise every path: %d fast (%d with escapes), %d slow, %d refused",
			fastTaken, fastEscaped, slowTaken, refused)
	}
}

// mutateEntry changes one thing in e: a string, the manifest, a
// resource, or a value, key or container anywhere in the frontmatter.
func mutateEntry(rng *rand.Rand, e *Entry) {
	switch rng.IntN(8) {
	case 0:
		e.URI = mutateText(rng, e.URI, textAlphabet)
	case 1:
		e.Manifest = Manifest(rng.IntN(4)) // 3 is no manifest the package knows
	case 2, 3:
		if len(e.Resources) == 0 || rng.IntN(4) == 0 {
			e.Resources = append(e.Resources, Resource{URI: randomText(rng), Digest: Digest(randomText(rng))})
			return
		}
		r := &e.Resources[rng.IntN(len(e.Resources))]
		switch rng.IntN(5) {
		case 0:
			r.URI = mutateText(rng, r.URI, textAlphabet)
		case 1:
			r.Digest = Digest(mutateText(rng, string(r.Digest), textAlphabet))
		case 2:
			r.HasSize = !r.HasSize
		case 3:
			r.Size = marshalSizes[rng.IntN(len(marshalSizes))]
		default:
			e.Resources = slices.Delete(e.Resources, 0, 1)
		}
	case 4:
		switch rng.IntN(3) {
		case 0:
			e.Frontmatter = nil
		case 1:
			e.Frontmatter = map[string]any{}
		default:
			e.Frontmatter, _ = randomValue(rng, 0, true).(map[string]any)
		}
	default:
		if e.Frontmatter == nil {
			e.Frontmatter = map[string]any{}
		}
		mutateObject(rng, e.Frontmatter, 0)
	}
}

// mutateObject adds, removes, renames or changes one key of m, or of a
// container below it.
func mutateObject(rng *rand.Rand, m map[string]any, depth int) {
	// Sorted, so that a run depends on the seed alone and not on the
	// order of map iteration.
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) == 0 || rng.IntN(5) == 0 {
		m[randomText(rng)] = randomValue(rng, depth, true)
		return
	}
	k := keys[rng.IntN(len(keys))]
	switch rng.IntN(6) {
	case 0:
		delete(m, k)
	case 1:
		m[mutateText(rng, k, textAlphabet)] = m[k]
		delete(m, k)
	default:
		m[k] = mutateValue(rng, m[k], depth+1)
	}
}

// mutateArray adds, removes or changes one element of a, or of a
// container below it.
func mutateArray(rng *rand.Rand, a []any, depth int) []any {
	if len(a) == 0 || rng.IntN(5) == 0 {
		return append(a, randomValue(rng, depth, true))
	}
	i := rng.IntN(len(a))
	if rng.IntN(6) == 0 {
		return slices.Delete(a, i, i+1)
	}
	a[i] = mutateValue(rng, a[i], depth+1)
	return a
}

// mutateValue returns v changed a little, or something else altogether.
func mutateValue(rng *rand.Rand, v any, depth int) any {
	if rng.IntN(6) == 0 {
		return randomValue(rng, depth, true)
	}
	switch v := v.(type) {
	case string:
		return mutateText(rng, v, textAlphabet)
	case json.Number:
		return json.Number(mutateText(rng, string(v), numberAlphabet))
	case float64:
		if rng.IntN(2) == 0 {
			return v * math.Pow(10, float64(rng.IntN(41)-20))
		}
		return math.Float64frombits(math.Float64bits(v) ^ 1<<rng.IntN(64))
	case bool:
		return !v
	case map[string]any:
		if v != nil {
			mutateObject(rng, v, depth)
			return v
		}
	case []any:
		if v != nil {
			return mutateArray(rng, v, depth)
		}
	}
	return randomValue(rng, depth, true)
}

// randomValue returns a value of the JSON data model, or now and then one
// outside it when odd is true.
func randomValue(rng *rand.Rand, depth int, odd bool) any {
	n := 8
	if depth > 4 {
		n = 6 // no more containers
	}
	if odd && rng.IntN(20) == 0 {
		return outOfShape[rng.IntN(len(outOfShape))]
	}
	switch rng.IntN(n) {
	case 0:
		return nil
	case 1:
		return rng.IntN(2) == 0
	case 2, 3:
		return randomText(rng)
	case 4:
		return marshalNumbers[rng.IntN(len(marshalNumbers))]
	case 5:
		return marshalFloats[rng.IntN(len(marshalFloats))]
	case 6:
		a := []any{}
		for range rng.IntN(4) {
			a = append(a, randomValue(rng, depth+1, odd))
		}
		return a
	default:
		m := map[string]any{}
		for range rng.IntN(4) {
			m[randomText(rng)] = randomValue(rng, depth+1, odd)
		}
		return m
	}
}

func randomText(rng *rand.Rand) string {
	s := marshalTexts[rng.IntN(len(marshalTexts))]
	if rng.IntN(2) == 0 {
		s = mutateText(rng, s, textAlphabet)
	}
	return s
}

// mutateText puts pieces of alphabet into s, takes bytes out and swaps
// them, at random places, as TestParseEntryAgreesWithEncodingJSON does
// to whole entries; a piece may land inside a multi-byte character.
func mutateText(rng *rand.Rand, s string, alphabet []string) string {
	b := []byte(s)
	for range 1 + rng.IntN(3) {
		at := rng.IntN(len(b) + 1)
		c := alphabet[rng.IntN(len(alphabet))]
		switch rng.IntN(3) {
		case 0:
			b = slices.Insert(b, at, []byte(c)...)
		case 1:
			if at < len(b) {
				b = slices.Delete(b, at, at+1)
			}
		default:
			if at < len(b) {
				b[at] = c[0]
			}
		}
	}
	return string(b)
}

// cloneEntry copies e deeply enough that mutating the copy leaves e alone.
func cloneEntry(e Entry) Entry {
	e.Resources = slices.Clone(e.Resources)
	if e.Frontmatter != nil {
		e.Frontmatter = cloneValue(e.Frontmatter).(map[string]any)
	}
	return e
}

func cloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if v == nil {
			return v
		}
		c := make(map[string]any, len(v))
		for k, x := range v {
			c[k] = cloneValue(x)
		}
		return c
	case []any:
		if v == nil {
			return v
		}
		c := make([]any, len(v))
		for i, x := range v {
			c[i] = cloneValue(x)
		}
		return c
	}
	return v
}

// benchEntry is an entry as a catalog holds thousands of: a name, a
// description of 150 characters, a metadata object, and four resources
// with 60-character URIs, digests and sizes.
func benchEntry() Entry {
	const dir = "skill://docs.acme-corp.example/pdf-processing/"
	names := []string{"SKILL.md", "references/FORMS.md", "templates/invoice.md", "scripts/fill.py"}
	rs := make([]Resource, len(names))
	for i, name := range names {
		uri := dir + name
		rs[i] = Resource{URI: uri, Digest: DigestOf([]byte(uri)), Size: int64(1200 + 5321*i), HasSize: true}
	}
	return Entry{
		URI: rs[0].URI,
		Frontmatter: map[string]any{
			"name": "pdf-processing",
			"description": "Extract text and tables from PDF documents, fill in PDF forms, and merge " +
				"or split files; use it whenever the user works with PDF files or form templates.",
			"license":  "Apache-2.0",
			"metadata": map[string]any{"version": "2.1.0", "author": "acme-docs"},
		},
		Manifest:  Listed,
		Resources: rs,
	}
}

// BenchmarkMarshalEntry encodes one entry through encoding/json (the
// reference, as MarshalJSON did before) and through MarshalJSON.
func BenchmarkMarshalEntry(b *testing.B) {
	e := benchEntry()
	want, err := e.marshalSlow()
	if got, _ := e.MarshalJSON(); err != nil || !bytes.Equal(got, want) {
		b.Fatalf("MarshalJSON %s; reference %s, %v", got, want, err)
	}
	b.Logf("%d bytes: %s", len(want), want)
	b.Run("reference", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.marshalSlow(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
