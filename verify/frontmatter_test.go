package verify

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func skillMD(yaml string) []byte { return []byte("---\n" + yaml + "---\n# Body\n") }

func decodeJSON(t testing.TB, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return m
}

func TestSplitFrontmatter(t *testing.T) {
	tests := []struct {
		name, content string
		want          map[string]any
		body          string
		err           bool
	}{
		{"plain", "---\nname: a\n---\nbody\n", map[string]any{"name": "a"}, "body\n", false},
		{"CRLF", "---\r\nname: a\r\ndescription: b\r\n---\r\nbody\r\n", map[string]any{"name": "a", "description": "b"}, "body\r\n", false},
		{"BOM", "\xEF\xBB\xBF---\nname: a\n---\nbody", map[string]any{"name": "a"}, "body", false},
		{"dots close", "---\nname: a\n...\nbody", map[string]any{"name": "a"}, "body", false},
		{"close at EOF", "---\nname: a\n---", map[string]any{"name": "a"}, "", false},
		{"empty block", "---\n---\nbody", map[string]any{}, "body", false},
		{"comment only", "---\n# nothing\n---\n", map[string]any{}, "", false},
		{"later --- is body", "---\nname: a\n---\nx\n---\ny\n", map[string]any{"name": "a"}, "x\n---\ny\n", false},
		{"indented --- stays in YAML", "---\nd: |\n  ---\n---\n", map[string]any{"d": "---\n"}, "", false},
		{"no opener", "name: a\n---\n", nil, "", true},
		{"opener with trailing space", "--- \nname: a\n---\n", nil, "", true},
		{"opener not first", "\n---\nname: a\n---\n", nil, "", true},
		{"four dashes", "----\nname: a\n----\n", nil, "", true},
		{"no closer", "---\nname: a\n", nil, "", true},
		{"closer with trailing text", "---\nname: a\n--- x\n", nil, "", true},
		{"opener alone", "---\n", nil, "", true},
		{"empty", "", nil, "", true},
		{"two BOMs", "\xEF\xBB\xBF\xEF\xBB\xBF---\nname: a\n---\n", nil, "", true},
		{"lone CR lines", "---\rname: a\r---\r", nil, "", true},
	}
	for _, tt := range tests {
		got, body, err := ParseFrontmatter([]byte(tt.content))
		if tt.err {
			if ReasonOf(err) != FrontmatterInvalid {
				t.Errorf("%s: ParseFrontmatter = %v, %v; want frontmatter-invalid", tt.name, got, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) || string(body) != tt.body {
			t.Errorf("%s: ParseFrontmatter = %#v, %q, %v; want %#v, %q", tt.name, got, body, err, tt.want, tt.body)
		}
	}
}

func TestParseFrontmatterModel(t *testing.T) {
	yaml := `name: a
int: 12
neg: -3
hex: 0x1F
oct: 0o17
legacy-oct: 0777
under: 1_000
big: 123456789012345678901234567890
float: 1.50
exp: 1e3
dot: .5
plus: +7
bool: True
yes: yes
null1: ~
null2:
null3: null
date: 2024-01-02
stamp: 2001-12-14t21:59:43.10-05:00
quoted-date: "2024-01-02"
bin: !!binary aGVsbG8=
ref: !Ref other
str-int: !!str 12
float-int: !!float 3
1: one
true: t
list: [a, 1, null]
nested: {a: {b: [x]}}
`
	got, _, err := ParseFrontmatter(skillMD(yaml))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"name": "a", "int": json.Number("12"), "neg": json.Number("-3"), "hex": json.Number("31"),
		"oct": json.Number("15"), "legacy-oct": json.Number("777"), "under": "1_000",
		"big": json.Number("123456789012345678901234567890"), "float": json.Number("1.50"),
		"exp": json.Number("1e3"), "dot": json.Number("0.5"), "plus": json.Number("7"),
		"bool": true, "yes": "yes", "null1": nil, "null2": nil, "null3": nil,
		"date": "2024-01-02", "stamp": "2001-12-14t21:59:43.10-05:00", "quoted-date": "2024-01-02",
		"bin": "aGVsbG8=", "ref": "other", "str-int": "12", "float-int": json.Number("3"),
		"1": "one", "true": "t",
		"list":   []any{"a", json.Number("1"), nil},
		"nested": map[string]any{"a": map[string]any{"b": []any{"x"}}},
	}
	if !reflect.DeepEqual(got, want) {
		for k := range want {
			if !reflect.DeepEqual(got[k], want[k]) {
				t.Errorf("%s = %#v, want %#v", k, got[k], want[k])
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("unexpected key %q", k)
			}
		}
	}
	// Every number is a valid JSON spelling, so serve can render it.
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	if err := CompareFrontmatter(skillMD(yaml), decodeJSON(t, string(b))); err != nil {
		t.Errorf("rendered listing does not compare equal: %v\n%s", err, b)
	}
}

func TestDecimalSpelling(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"0", "0"}, {"-0", "0"}, {"0.000", "0"}, {"1", "1"}, {"10", "10"}, {"1e3", "1000"}, {"1.5", "1.5"},
		{"-1.25e1", "-12.5"}, {".5", "0.5"}, {"0.001", "0.001"}, {"1e-7", "1e-7"}, {"123e-9", "1.23e-7"},
		{"1e20", "100000000000000000000"}, {"1e21", "1e21"}, {"12.5e30", "1.25e31"}, {"+3.", "3"},
		{"000120", "120"},
	} {
		d, ok := parseDecimal(tt.in)
		if !ok || d.String() != tt.want {
			t.Errorf("parseDecimal(%q).String() = %q, %v; want %q", tt.in, d.String(), ok, tt.want)
		}
		if !jsonNumber.MatchString(d.String()) {
			t.Errorf("%q is not a JSON number", d.String())
		}
		back, _ := parseDecimal(d.String())
		if back != d {
			t.Errorf("%q round-trips to %+v, want %+v", tt.in, back, d)
		}
	}
	for _, bad := range []string{"", "-", "e5", "1e", "1.2.3", "0x10", "1e99999999", "inf", "NaN", " 1"} {
		if _, ok := parseDecimal(bad); ok {
			t.Errorf("parseDecimal(%q) accepted", bad)
		}
	}
}

func TestCompareFrontmatter(t *testing.T) {
	const base = "name: refunds\ndescription: Process refunds\n"
	const baseJSON = `"name":"refunds","description":"Process refunds"`
	tests := []struct {
		name string
		yaml string
		json string // the object's body, after baseJSON
		want Reason
		path string // expected at the start of Detail
	}{
		{"identical", "license: Apache-2.0\nmetadata:\n  version: \"2.1.0\"\n", `"license":"Apache-2.0","metadata":{"version":"2.1.0"}`, "", ""},
		{"key order is irrelevant", "b: 1\na: 2\n", `"a":2,"b":1`, "", ""},
		{"changed description", "", "", FrontmatterMismatch, "description"},
		{"string vs number", "metadata:\n  version: 2.1\n", `"metadata":{"version":"2.1"}`, FrontmatterMismatch, "metadata.version"},
		{"nested string differs", "metadata:\n  version: \"2.1.0\"\n", `"metadata":{"version":"2.1.1"}`, FrontmatterMismatch, "metadata.version"},
		{"extra field in SKILL.md", "allowed-tools: Bash\n", ``, FrontmatterMismatch, "allowed-tools"},
		{"extra field in entry", "", `"allowed-tools":"Bash"`, FrontmatterMismatch, "allowed-tools"},
		{"first differing path in sorted order", "a: 1\nz: 1\n", `"a":2,"z":2`, FrontmatterMismatch, "a"},
		{"list length", "tags: [a, b]\n", `"tags":["a"]`, FrontmatterMismatch, "tags"},
		{"list item", "tags: [a, b]\n", `"tags":["a","c"]`, FrontmatterMismatch, "tags[1]"},
		{"list vs string", "tags: [a]\n", `"tags":"a"`, FrontmatterMismatch, "tags"},
		{"object vs list", "m: {a: 1}\n", `"m":[1]`, FrontmatterMismatch, "m"},
		{"odd key", "m:\n  a.b: 1\n", `"m":{"a.b":2}`, FrontmatterMismatch, `m["a.b"]`},
		{"trailing space in value", "x: 'a '\n", `"x":"a"`, FrontmatterMismatch, "x"},
		{"NFC vs NFD string", "x: \"caf\u00e9\"\n", `"x":"cafe\u0301"`, FrontmatterMismatch, "x"},
		// Numbers by exact value.
		{"int vs JSON int", "n: 1\n", `"n":1`, "", ""},
		{"int vs JSON 1.0", "n: 1\n", `"n":1.0`, "", ""},
		{"float 1.0 vs JSON 1", "n: 1.0\n", `"n":1`, "", ""},
		{"int vs JSON 1e0", "n: 1\n", `"n":1e0`, "", ""},
		{"hex", "n: 0x1F\n", `"n":31`, "", ""},
		{"octal", "n: 0o17\n", `"n":15`, "", ""},
		// YAML 1.2 core schema, and a YAML 1.1 server's reading of exactly
		// the scalars 1.1 reads otherwise.
		{"leading zero is decimal in YAML 1.2", "n: 0777\n", `"n":777`, "", ""},
		{"leading zero is octal in YAML 1.1", "n: 0777\n", `"n":511`, "", ""},
		{"leading zero, neither reading", "n: 0777\n", `"n":778`, FrontmatterMismatch, "n"},
		{"leading zero, not the string", "n: 0777\n", `"n":"0777"`, FrontmatterMismatch, "n"},
		{"quoted leading zero is a string", "n: \"0755\"\n", `"n":755`, FrontmatterMismatch, "n"},
		{"0o is octal in YAML 1.2", "n: 0o755\n", `"n":493`, "", ""},
		{"0o is a string in YAML 1.1", "n: 0o755\n", `"n":"0o755"`, "", ""},
		{"0o is not decimal", "n: 0o755\n", `"n":755`, FrontmatterMismatch, "n"},
		{"08 is decimal in YAML 1.2", "n: 08\n", `"n":8`, "", ""},
		{"binary int in YAML 1.1", "n: 0b101\n", `"n":5`, "", ""},
		{"binary int is a string in YAML 1.2", "n: 0b101\n", `"n":"0b101"`, "", ""},
		{"underscores in YAML 1.1", "n: 1_000\n", `"n":1000`, "", ""},
		{"underscores are a string in YAML 1.2", "n: 1_000\n", `"n":"1_000"`, "", ""},
		{"underscores, neither reading", "n: 1_000\n", `"n":1001`, FrontmatterMismatch, "n"},
		{"sexagesimal in YAML 1.1", "n: 1:30\n", `"n":90`, "", ""},
		{"sexagesimal is a string in YAML 1.2", "n: 1:30\n", `"n":"1:30"`, "", ""},
		{"sexagesimal, neither reading", "n: 1:30\n", `"n":130`, FrontmatterMismatch, "n"},
		{"exponent without a dot is a string in YAML 1.1", "n: 1e3\n", `"n":"1e3"`, "", ""},
		{"decimal exact", "n: 0.1\n", `"n":0.1`, "", ""},
		{"decimal exact, not float64", "n: 0.1\n", `"n":0.10000000000000001`, FrontmatterMismatch, "n"},
		{"beyond 2^53", "n: 9007199254740993\n", `"n":9007199254740992`, FrontmatterMismatch, "n"},
		{"beyond 2^53 equal", "n: 9007199254740993\n", `"n":9007199254740993`, "", ""},
		{"beyond uint64", "n: 123456789012345678901234567890\n", `"n":123456789012345678901234567890`, "", ""},
		{"uint64 max", "n: 18446744073709551615\n", `"n":18446744073709551615`, "", ""},
		{"negative zero", "n: -0.0\n", `"n":0`, "", ""},
		{"exponent", "n: 1.5e3\n", `"n":1500`, "", ""},
		{"number vs string", "n: 1\n", `"n":"1"`, FrontmatterMismatch, "n"},
		{"quoted number vs number", "n: \"1\"\n", `"n":1`, FrontmatterMismatch, "n"},
		{".inf matches nothing", "n: .inf\n", `"n":1e999`, FrontmatterMismatch, "n"},
		{".inf vs string", "n: .inf\n", `"n":".inf"`, FrontmatterMismatch, "n"},
		{".nan matches nothing", "n: .nan\n", `"n":null`, FrontmatterMismatch, "n"},
		{"-.Inf", "n: -.Inf\n", `"n":"-.Inf"`, FrontmatterMismatch, "n"},
		// Booleans and nulls.
		{"bool", "b: true\nc: FALSE\n", `"b":true,"c":false`, "", ""},
		{"yes is a string", "b: yes\n", `"b":"yes"`, "", ""},
		{"yes is true in YAML 1.1", "b: yes\n", `"b":true`, "", ""},
		{"yes is never false", "b: yes\n", `"b":false`, FrontmatterMismatch, "b"},
		{"on is true in YAML 1.1", "b: on\n", `"b":true`, "", ""},
		{"off is a string in YAML 1.2", "b: off\n", `"b":"off"`, "", ""},
		{"quoted yes is only a string", "b: \"yes\"\n", `"b":true`, FrontmatterMismatch, "b"},
		{"hello is only a string", "b: hello\n", `"b":true`, FrontmatterMismatch, "b"},
		{"null tilde", "x: ~\n", `"x":null`, "", ""},
		{"null empty", "x:\n", `"x":null`, "", ""},
		{"null word", "x: Null\n", `"x":null`, "", ""},
		{"null vs absent", "x: ~\n", ``, FrontmatterMismatch, "x"},
		{"absent vs null", "", `"x":null`, FrontmatterMismatch, "x"},
		{"null vs empty string", "x: ~\n", `"x":""`, FrontmatterMismatch, "x"},
		{"quoted null is a string", "x: \"null\"\n", `"x":"null"`, "", ""},
		// Timestamps.
		{"date literal", "d: 2024-01-02\n", `"d":"2024-01-02"`, "", ""},
		{"date as RFC 3339 instant", "d: 2024-01-02\n", `"d":"2024-01-02T00:00:00Z"`, "", ""},
		{"other date", "d: 2024-01-02\n", `"d":"2024-01-03"`, FrontmatterMismatch, "d"},
		{"datetime, other offset, same instant", "d: 2001-12-14T21:59:43.10-05:00\n", `"d":"2001-12-15T02:59:43.1Z"`, "", ""},
		{"datetime, other instant", "d: 2001-12-14T21:59:43.10-05:00\n", `"d":"2001-12-14T21:59:43.10Z"`, FrontmatterMismatch, "d"},
		{"space-separated datetime literal", "d: 2001-12-14 21:59:43.10\n", `"d":"2001-12-14 21:59:43.10"`, "", ""},
		{"timestamp vs number", "d: 2024-01-02\n", `"d":20240102`, FrontmatterMismatch, "d"},
		{"quoted date is only a string", "d: \"2024-01-02\"\n", `"d":"2024-01-02T00:00:00Z"`, FrontmatterMismatch, "d"},
		// Keys.
		{"int key", "m:\n  1: x\n", `"m":{"1":"x"}`, "", ""},
		{"bool key", "m:\n  true: x\n", `"m":{"true":"x"}`, "", ""},
		{"null key", "m:\n  ~: x\n", `"m":{"~":"x"}`, "", ""},
		{"hex key keeps its text", "m:\n  0x10: x\n", `"m":{"0x10":"x"}`, "", ""},
		{"hex key is not its value", "m:\n  0x10: x\n", `"m":{"16":"x"}`, FrontmatterMismatch, "m.0x10"},
		// Anchors, aliases, merges.
		{"alias", "a: &x {k: [1, 2]}\nb: *x\n", `"a":{"k":[1,2]},"b":{"k":[1,2]}`, "", ""},
		{"alias key", "k: &key kk\nm:\n  *key : v\n", `"k":"kk","m":{"kk":"v"}`, "", ""},
		{"merge", "base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n", `"base":{"x":1,"y":2},"m":{"x":1,"y":3}`, "", ""},
		{"merge list, earlier wins", "a: &a {x: 1}\nb: &b {x: 2, y: 2}\nm:\n  <<: [*a, *b]\n", `"a":{"x":1},"b":{"x":2,"y":2},"m":{"x":1,"y":2}`, "", ""},
		{"merge inline mapping", "m:\n  <<: {x: 1}\n", `"m":{"x":1}`, "", ""},
		{"nested merge", "a: &a {x: 1}\nb: &b {<<: *a, y: 2}\nm: {<<: *b, z: 3}\n", `"a":{"x":1},"b":{"x":1,"y":2},"m":{"x":1,"y":2,"z":3}`, "", ""},
		{"quoted << is a key", "m:\n  \"<<\": {x: 1}\n", `"m":{"<<":{"x":1}}`, "", ""},
		{"merge value mismatch", "base: &b {x: 1}\nm:\n  <<: *b\n", `"base":{"x":1},"m":{"x":2}`, FrontmatterMismatch, "m.x"},
		// Other tags.
		{"binary as text", "b: !!binary aGVsbG8=\n", `"b":"aGVsbG8="`, "", ""},
		{"local tag", "r: !Ref thing\n", `"r":"thing"`, "", ""},
		{"explicit str", "s: !!str 012\n", `"s":"012"`, "", ""},
		{"explicit float on int", "f: !!float 3\n", `"f":3.0`, "", ""},
		{"explicit int", "i: !!int \"42\"\n", `"i":42`, "", ""},
		{"block scalar with CRLF", "d: |\r\n  a\r\n  b\r\n", `"d":"a\nb\n"`, "", ""},
		{"folded scalar", "d: >\n  a\n  b\n", `"d":"a b\n"`, "", ""},
		// Invalid frontmatter.
		{"duplicate key", "x: 1\nx: 2\n", `"x":2`, FrontmatterInvalid, ""},
		{"duplicate after key conversion", "m:\n  1: a\n  \"1\": b\n", `"m":{"1":"b"}`, FrontmatterInvalid, ""},
		{"two merge keys", "a: &a {x: 1}\nm:\n  <<: *a\n  <<: *a\n", ``, FrontmatterInvalid, ""},
		{"complex key", "? [a, b]\n: x\n", ``, FrontmatterInvalid, ""},
		{"mapping key", "? {a: 1}\n: x\n", ``, FrontmatterInvalid, ""},
		{"alias to a collection as key", "l: &l [a]\nm:\n  *l : x\n", ``, FrontmatterInvalid, ""},
		{"merge of a scalar", "s: &s str\nm:\n  <<: *s\n", ``, FrontmatterInvalid, ""},
		{"merge of a list of scalars", "m:\n  <<: [a]\n", ``, FrontmatterInvalid, ""},
		{"self-containing anchor", "a: &x [*x]\n", ``, FrontmatterInvalid, ""},
		{"self-merging anchor", "a: &x {<<: *x}\n", ``, FrontmatterInvalid, ""},
		{"unknown anchor", "a: *nope\n", ``, FrontmatterInvalid, ""},
		{"bad YAML", "a: [\n", ``, FrontmatterInvalid, ""},
		{"tab indentation", "a:\n\tb: 1\n", ``, FrontmatterInvalid, ""},
		{"bad explicit int", "i: !!int 1.5\n", ``, FrontmatterInvalid, ""},
		{"bad explicit bool", "b: !!bool yes\n", ``, FrontmatterInvalid, ""},
		{"bad explicit null", "n: !!null x\n", ``, FrontmatterInvalid, ""},
		{"bad explicit timestamp", "t: !!timestamp soon\n", ``, FrontmatterInvalid, ""},
		{"bad binary", "b: !!binary '***'\n", ``, FrontmatterInvalid, ""},
		{"explicit float out of range", "f: !!float 1e999\n", ``, FrontmatterInvalid, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y := base + tt.yaml
			js := "{" + baseJSON
			if tt.json != "" {
				js += "," + tt.json
			}
			js += "}"
			if tt.name == "changed description" {
				js = `{"name":"refunds","description":"Process refunds quietly"}`
			}
			err := CompareFrontmatter(skillMD(y), decodeJSON(t, js))
			if ReasonOf(err) != tt.want {
				t.Fatalf("CompareFrontmatter = %v, want %q\nYAML:\n%s\nJSON: %s", err, tt.want, y, js)
			}
			if tt.path != "" && !strings.HasPrefix(err.(*Error).Detail, tt.path+": ") {
				t.Errorf("Detail %q does not start with %q", err.(*Error).Detail, tt.path)
			}
			// Whatever compares equal renders back to JSON that compares equal.
			if err == nil {
				checkRendered(t, skillMD(y))
			}
		})
	}
}

// checkRendered asserts the serve invariant: a listing rendered by
// ParseFrontmatter compares equal with the SKILL.md it came from.
func checkRendered(t testing.TB, content []byte) {
	t.Helper()
	fm, _, err := ParseFrontmatter(content)
	if err != nil {
		return
	}
	b, err := json.Marshal(fm)
	if err != nil {
		t.Fatalf("json.Marshal(ParseFrontmatter) = %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var back map[string]any
	if err := dec.Decode(&back); err != nil {
		t.Fatalf("rendered JSON does not decode: %v\n%s", err, b)
	}
	if err := CompareFrontmatter(content, back); err != nil {
		t.Fatalf("rendered listing does not compare equal: %v\ncontent: %q\nJSON: %s", err, content, b)
	}
}

func TestCompareFrontmatterEdges(t *testing.T) {
	// A nil want is an empty object.
	if err := CompareFrontmatter([]byte("---\n---\n"), nil); err != nil {
		t.Errorf("empty vs nil: %v", err)
	}
	if err := CompareFrontmatter(skillMD("a: 1\n"), nil); ReasonOf(err) != FrontmatterMismatch {
		t.Errorf("non-empty vs nil: %v", err)
	}
	// No frontmatter at all.
	if err := CompareFrontmatter([]byte("# Just markdown\n"), map[string]any{"name": "a"}); ReasonOf(err) != FrontmatterInvalid {
		t.Errorf("no frontmatter: %v", err)
	}
	// Top level must be a mapping.
	for _, y := range []string{"[a, b]\n", "just a string\n", "~\n", "&a x\n"} {
		if err := CompareFrontmatter(skillMD(y), map[string]any{}); ReasonOf(err) != FrontmatterInvalid {
			t.Errorf("top level %q: %v", y, err)
		}
	}
	// More than one document.
	if err := CompareFrontmatter(skillMD("a: 1\n--- \nb: 2\n"), map[string]any{"a": json.Number("1")}); ReasonOf(err) != FrontmatterInvalid {
		t.Errorf("two documents: %v", err)
	}
	// Go number types in want, for hand-built frontmatter.
	want := map[string]any{"a": 1, "b": 2.5, "c": int64(-3), "d": uint64(4)}
	if err := CompareFrontmatter(skillMD("a: 1\nb: 2.5\nc: -3\nd: 4\n"), want); err != nil {
		t.Errorf("Go numbers: %v", err)
	}
	// Types outside the JSON data model never match.
	if err := CompareFrontmatter(skillMD("a: x\n"), map[string]any{"a": []byte("x")}); ReasonOf(err) != FrontmatterMismatch {
		t.Errorf("[]byte want: %v", err)
	}
	// ParseFrontmatter refuses what JSON cannot spell.
	if _, _, err := ParseFrontmatter(skillMD("n: [1, .nan]\n")); ReasonOf(err) != FrontmatterInvalid || !strings.Contains(err.Error(), "n[1]") {
		t.Errorf("ParseFrontmatter(.nan) = %v", err)
	}
}

func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 9; i++ {
		b.WriteString("a")
		b.WriteByte(byte('0' + i))
		b.WriteString(": &a")
		b.WriteByte(byte('0' + i))
		b.WriteString(" [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a")
			b.WriteByte(byte('0' + i - 1))
		}
		b.WriteString("]\n")
	}
	err := CompareFrontmatter(skillMD(b.String()), map[string]any{})
	if ReasonOf(err) != FrontmatterInvalid || !strings.Contains(err.Error(), "aliases") {
		t.Errorf("alias bomb: %v", err)
	}
	// A modest use of aliases stays within the budget.
	if _, _, err := ParseFrontmatter(skillMD("a: &a [x, x, x]\nb: [*a, *a, *a]\n")); err != nil {
		t.Errorf("modest aliases: %v", err)
	}
	// Cycles are named as such, not left to the budget.
	for _, y := range []string{"a: &x [*x]\n", "a: &x {<<: *x}\n", "a: &x {k: [{j: *x}]}\n"} {
		if _, _, err := ParseFrontmatter(skillMD(y)); ReasonOf(err) != FrontmatterInvalid || !strings.Contains(err.Error(), "contains itself") {
			t.Errorf("ParseFrontmatter(%q) = %v, want an anchor that contains itself", y, err)
		}
	}
	// Deep nesting is bounded too.
	deep := strings.Repeat("[", MaxFrontmatterDepth+5) + strings.Repeat("]", MaxFrontmatterDepth+5)
	if _, _, err := ParseFrontmatter(skillMD("d: " + deep + "\n")); ReasonOf(err) != FrontmatterInvalid {
		t.Errorf("deep nesting: %v", err)
	}
}

func TestFrontmatterSizeCap(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len()+100 < MaxFrontmatterBytes; i++ {
		b.WriteString("k" + strconv.Itoa(i) + ": " + strings.Repeat("v", 60) + "\n")
	}
	under := b.String()
	if _, _, err := ParseFrontmatter(skillMD(under)); err != nil {
		t.Fatalf("%d-byte frontmatter: %v", len(under), err)
	}
	over := under + strings.Repeat("#", MaxFrontmatterBytes-len(under)) + "\n"
	if _, _, err := ParseFrontmatter(skillMD(over)); ReasonOf(err) != FrontmatterInvalid || !strings.Contains(err.Error(), "bytes") {
		t.Errorf("%d-byte frontmatter: %v, want frontmatter-invalid", len(over), err)
	}
}

// The host forgives one leading UTF-8 BOM when it checks a SKILL.md
// against its entry (`skillfs serve` refuses to publish one; see
// SEMANTICS.md): the bytes are still checked against the digest, and the
// frontmatter after the BOM must match the entry (issue 19 item 5).
func TestCompareFrontmatterForgivesOneLeadingBOM(t *testing.T) {
	want := map[string]any{"name": "a", "description": "d"}
	if err := CompareFrontmatter([]byte("\uFEFF---\nname: a\ndescription: d\n---\nbody\n"), want); err != nil {
		t.Errorf("one leading BOM: %v", err)
	}
	if err := CompareFrontmatter([]byte("\uFEFF---\nname: b\ndescription: d\n---\n"), want); err == nil {
		t.Errorf("a BOM does not excuse a frontmatter that differs")
	}
	if err := CompareFrontmatter([]byte("\uFEFF\uFEFF---\nname: a\ndescription: d\n---\n"), want); err == nil {
		t.Errorf("two BOMs accepted")
	}
}

func TestFrontmatterAmbiguities(t *testing.T) {
	got := FrontmatterAmbiguities(skillMD("mode: 0755\nok: yes\nplain: hello\nq: \"0755\"\nn: 12\nlist: [on, 1]\nexact: 0o755\nday: 2024-01-02\n"))
	want := []string{
		"exact: 0o755 is the number 493 in YAML 1.2, the string \"0o755\" in YAML 1.1",
		"list[0]: on is the string \"on\" in YAML 1.2, true in YAML 1.1",
		"mode: 0755 is the number 755 in YAML 1.2, the number 493 in YAML 1.1",
		"ok: yes is the string \"yes\" in YAML 1.2, true in YAML 1.1",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FrontmatterAmbiguities =\n%q\nwant\n%q", got, want)
	}
	if got := FrontmatterAmbiguities(skillMD("a: \"yes\"\nb: true\nc: 0o755x\n")); got != nil {
		t.Errorf("unambiguous frontmatter: %q", got)
	}
}
