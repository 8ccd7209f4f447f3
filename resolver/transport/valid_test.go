package transport

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// validSeeds returns inputs covering every kind of JSON value and the edges
// of the grammar, valid and not.
func validSeeds() [][]byte {
	s := []string{
		"", " ", " \t\r\n", "\f", "\v", "\u00a0", "\x00",
		"null", "true", "false", "nul", "tru", "fals", "nulll", "truex", "True", "NULL", "n", "t", "f",
		`""`, `"`, `"a`, `"\"`, `"abc"`, `"a"b"`, `" "`, "\"\x7f\"",
		`"\"\\\/\b\f\n\r\t"`, `"\u0000\uffff\uABCD\uabcd\u12aF"`, `"\u"`, `"\u1"`, `"\u12"`, `"\u123"`, `"\u123g"`, `"\uG123"`,
		`"\a"`, `"\x41"`, `"\'"`, `"\U1234"`, `"\0"`, `"\`, `"\u`, `"\u12`, `"abc\`,
		"\"\x00\"", "\"\x01\"", "\"\x1f\"", "\"\t\"", "\"\n\"", "\"\x20\"",
		"\"\xff\"", "\"\xc3\x28\"", "\"\xe2\x82\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"héllo wörld ☃ 𝄞\"",
		"\xff", "\xef\xbb\xbfnull", "\"\xef\xbb\xbf\"",
		"0", "-0", "1", "-1", "10", "0.5", "-0.5", "0.5e+10", "0.5E-10", "1e5", "1E5", "1e+5", "1e-5", "123456789012345678901234567890",
		"1.0e0", "-0.0e-0", "01", "-01", "00", "1.", "1.e5", ".5", "-", "--1", "+1", "1e", "1e+", "1e-", "1E", "1ee5", "1.5.5", "1e5.5",
		"0x10", "Infinity", "-Infinity", "NaN", "1_000", "1 2", "-a", "0e", "0.", "-.5", "1.5e", "2e+-1",
		"[]", "{}", "[ ]", "{ }", " [ ] ", "[", "]", "{", "}", "[}", "{]", "[[]", "[]]", "{}}", "[1,]", "[,1]", "[1,,2]", "[1 2]", "[,]",
		`[1,"a",true,false,null,{},[],-0.5e3]`, ` [ 1 , 2 ] `, "[\n1\t,\r2\n]",
		`{"a":1}`, `{"a":1,}`, `{,"a":1}`, `{"a"}`, `{"a":}`, `{"a" 1}`, `{a:1}`, `{1:1}`, `{"a":1 "b":2}`, `{"a":1,"a":2}`,
		`{ "a" : [ { "b" : { } } ] , "c" : null }`, `{"":""}`, `{"a":1}}`, `{"a":1}x`, `{"a":1} x`, `{"a":1}{}`, `[] []`, `1 1`, `null,`,
		`{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"skill://x/SKILL.md","text":"# Title\n\n\u003cb\u003e"}]}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`,
		"{\"a\":\"b\x00\"}", "[\"\\u00zz\"]", "[1]\x00", "\x00[1]", "[1] \n", "[1]\f",
	}
	out := make([][]byte, 0, len(s)+16)
	for _, v := range s {
		out = append(out, []byte(v))
	}
	for _, n := range []int{1, 2, 63, 64, 65, 9998, 9999, 10000, 10001, 10002} {
		out = append(out,
			[]byte(strings.Repeat("[", n)+strings.Repeat("]", n)),
			[]byte(strings.Repeat(`{"a":`, n-1)+"{}"+strings.Repeat("}", n-1)),
			[]byte(strings.Repeat(`[{"k":`, n/2)+"1"+strings.Repeat("}]", n/2)),
		)
	}
	// Too deep but also malformed later: still invalid.
	out = append(out, []byte(strings.Repeat("[", 10001)))
	out = append(out, []byte(strings.Repeat("[", 10000)))
	// Strings around the eight-byte stride, with a special byte at every
	// position.
	for n := 0; n < 20; n++ {
		for _, c := range []byte{'"', '\\', 0x00, 0x1f, 0x20, 0x7f, 0x80, 0xff, 'a'} {
			for p := 0; p <= n; p++ {
				b := bytes.Repeat([]byte{'x'}, n)
				if p < n {
					b[p] = c
				}
				out = append(out, append(append([]byte{'"'}, b...), '"'))
			}
		}
	}
	out = append(out, bigJSONString(4<<20))
	return out
}

// bigJSONString returns a JSON string of about n bytes: text with escapes.
func bigJSONString(n int) []byte {
	b, _ := json.Marshal(benchText(n, true))
	return b
}

// benchText returns n bytes of markdown-like text with newlines, quotes,
// tabs, HTML and non-ASCII runes, which json.Marshal escapes. Dense text
// has an escape every 10 bytes or so; the other, more like prose and code,
// every 35.
func benchText(n int, dense bool) string {
	var sb strings.Builder
	special := []string{"<code>", "\"quoted\"", "tab\there", "path\\to", "a&b"}
	plain := []string{"skill", "the", "file", "résumé", "naïve", "☃", "—", "resource", "server", "returns", "directory", "with", "value", "and", "listing", "a", "of", "to", "is"}
	r := rand.New(rand.NewPCG(1, 2))
	col := 0
	for sb.Len() < n {
		w := plain[r.IntN(len(plain))]
		if dense && r.IntN(12) < 5 || !dense && r.IntN(12) == 0 {
			w = special[r.IntN(len(special))]
		}
		sb.WriteString(w)
		col += len(w)
		if col > 70 {
			sb.WriteByte('\n')
			col = 0
		} else {
			sb.WriteByte(' ')
		}
	}
	return sb.String()[:n]
}

func checkValidJSON(t testing.TB, b []byte) {
	t.Helper()
	if got, want := validJSON(b), json.Valid(b); got != want {
		s := b
		if len(s) > 200 {
			s = s[:200]
		}
		t.Fatalf("validJSON = %v, json.Valid = %v, for %d bytes %q", got, want, len(b), s)
	}
}

func TestValidJSONSeeds(t *testing.T) {
	for _, b := range validSeeds() {
		checkValidJSON(t, b)
	}
	// Spot checks that json.Valid is what the seeds assume.
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"\"\xff\"", true}, // no UTF-8 check
		{strings.Repeat("[", 10000) + strings.Repeat("]", 10000), true},
		{strings.Repeat("[", 10001) + strings.Repeat("]", 10001), false},
		{"-0", true}, {"01", false}, {"1.", false}, {".5", false}, {"", false}, {" ", false},
	} {
		if got := validJSON([]byte(c.in)); got != c.want {
			t.Errorf("validJSON(%.20q) = %v, want %v", c.in, got, c.want)
		}
	}
}

// mutate changes b at a random place, mostly with bytes that matter to the
// JSON grammar.
func mutate(r *rand.Rand, b []byte) []byte {
	const sig = "{}[]\":,\\ \t\r\n0123456789-+.eEtrufalsnbu\x00\x1f\x7f\x80\xff/xA"
	pick := func() byte {
		if r.IntN(8) == 0 {
			return byte(r.IntN(256))
		}
		return sig[r.IntN(len(sig))]
	}
	out := append([]byte(nil), b...)
	for range 1 + r.IntN(3) {
		p := 0
		if len(out) > 0 {
			p = r.IntN(len(out) + 1)
			// Favour the ends, where long seeds differ from each other.
			switch r.IntN(4) {
			case 0:
				p = min(r.IntN(16), len(out))
			case 1:
				p = max(len(out)-r.IntN(16), 0)
			}
		}
		switch r.IntN(3) {
		case 0:
			out = append(out[:p], append([]byte{pick()}, out[p:]...)...)
		case 1:
			if p < len(out) {
				out = append(out[:p], out[p+1:]...)
			}
		default:
			if p < len(out) {
				out[p] = pick()
			}
		}
	}
	return out
}

func TestValidJSONMutations(t *testing.T) {
	seeds := validSeeds()
	var small, large [][]byte
	for _, b := range seeds {
		if len(b) <= 4<<10 {
			small = append(small, b)
		} else {
			large = append(large, b)
		}
	}
	r := rand.New(rand.NewPCG(7, 11))
	n := 100_000
	for i := range n {
		var b []byte
		if i%500 == 0 {
			b = large[r.IntN(len(large))]
		} else {
			b = small[r.IntN(len(small))]
		}
		// Mutate a mutation now and then, to stray further.
		m := mutate(r, b)
		if r.IntN(4) == 0 {
			m = mutate(r, m)
		}
		checkValidJSON(t, m)
	}
}

func TestValidJSONAllocs(t *testing.T) {
	in := []byte("[" + strings.Repeat(`{"a":"b\n","c":[1,2.5e3,true,null]},`, 100) + "0]")
	if !validJSON(in) {
		t.Fatal("want valid")
	}
	deep := []byte(strings.Repeat("[", 10000) + strings.Repeat("]", 10000))
	if n := testing.AllocsPerRun(10, func() { validJSON(in); validJSON(deep) }); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, b := range validSeeds() {
		if len(b) <= 64<<10 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkValidJSON(t, b)
	})
}

// benchListing returns a listing-like page of about 90 KB: a resources/list
// result of 100 resources.
func benchListing() []byte {
	type res struct {
		URI         string `json:"uri"`
		Name        string `json:"name"`
		Title       string `json:"title"`
		Description string `json:"description"`
		MIMEType    string `json:"mimeType"`
		Size        int    `json:"size"`
	}
	var rs []res
	for i := range 100 {
		rs = append(rs, res{
			URI:         fmt.Sprintf("skill://example-skill-%03d/references/guide-%03d.md", i, i),
			Name:        fmt.Sprintf("guide-%03d.md", i),
			Title:       fmt.Sprintf("Guide %d for the example skill", i),
			Description: benchText(700+i%50, false),
			MIMEType:    "text/markdown",
			Size:        1000 + 37*i,
		})
	}
	msg := map[string]any{"jsonrpc": "2.0", "id": 7, "result": map[string]any{"resources": rs, "nextCursor": "eyJvZmZzZXQiOjEwMH0="}}
	b, err := json.Marshal(msg)
	if err != nil {
		panic(err)
	}
	return b
}

// benchRead returns a resources/read result holding n bytes of text.
func benchRead(n int, base64Blob, dense bool) []byte {
	type content struct {
		URI  string `json:"uri"`
		Text string `json:"text,omitempty"`
		Blob string `json:"blob,omitempty"`
	}
	c := content{URI: "skill://example-skill/references/big.md"}
	if base64Blob {
		c.Blob = base64.StdEncoding.EncodeToString([]byte(benchText(n*3/4, false)))
	} else {
		c.Text = benchText(n, dense)
	}
	msg := map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{"contents": []content{c}}}
	b, err := json.Marshal(msg)
	if err != nil {
		panic(err)
	}
	return b
}

func BenchmarkValidJSON(b *testing.B) {
	inputs := []struct {
		name string
		in   []byte
	}{
		{"listing90K", benchListing()},
		{"text8M", benchRead(8<<20, false, false)},
		{"text8M_dense", benchRead(8<<20, false, true)},
		{"base64_8M", benchRead(8<<20, true, false)},
	}
	for _, in := range inputs {
		if !json.Valid(in.in) || !validJSON(in.in) {
			b.Fatalf("%s: want valid", in.name)
		}
		for _, f := range []struct {
			name string
			fn   func([]byte) bool
		}{
			{"validJSON", validJSON},
			{"json.Valid", json.Valid},
		} {
			b.Run(in.name+"/"+f.name, func(b *testing.B) {
				b.SetBytes(int64(len(in.in)))
				b.ReportAllocs()
				for b.Loop() {
					if !f.fn(in.in) {
						b.Fatal("invalid")
					}
				}
			})
		}
	}
}
