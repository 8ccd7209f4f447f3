package transport

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkContents is what go-sdk makes of a resources/read response: the
// path a message takes without WithContents.
func sdkContents(t *testing.T, msg []byte) ([]*mcp.ResourceContents, error) {
	t.Helper()
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return nil, err
	}
	resp, ok := m.(*jsonrpc.Response)
	if !ok {
		return nil, fmt.Errorf("not a response: %T", m)
	}
	if resp.Error != nil {
		return nil, resp.Error
	}
	var r mcp.ReadResourceResult
	if err := json.Unmarshal(resp.Result, &r); err != nil {
		return nil, err
	}
	return r.Contents, nil
}

// checkTaken decodes msg both ways and requires the same file bytes: what
// go-sdk makes of the original, and what the transport took out of it plus
// what go-sdk makes of the rest. It reports whether the strings were taken.
func checkTaken(t *testing.T, msg []byte) bool {
	t.Helper()
	orig := bytes.Clone(msg)
	var c Contents
	out := takeContents(msg, &c)
	if !bytes.Equal(msg, orig) {
		t.Fatalf("takeContents wrote to its input")
	}
	items, taken := c.Items()
	want, wantErr := sdkContents(t, orig)
	if !taken {
		if !bytes.Equal(out, orig) {
			t.Fatalf("not taken, yet the message changed:\n in: %q\nout: %q", orig, out)
		}
		return false
	}
	got, err := sdkContents(t, out)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("go-sdk on the original: %v; on the rewritten message: %v\n in: %q\nout: %q", wantErr, err, orig, out)
	}
	if err != nil {
		return true
	}
	if len(items) != len(want) || len(got) != len(want) {
		t.Fatalf("%d contents taken, go-sdk decodes %d (rewritten: %d)", len(items), len(want), len(got))
	}
	for i, w := range want {
		it, g := items[i], got[i]
		if w == nil {
			if g != nil || it.HasText || it.HasBlob || it.URI != "" {
				t.Fatalf("element %d: null in the original, %+v / %+v taken", i, g, it)
			}
			continue
		}
		if g.URI != w.URI || it.URI != w.URI {
			t.Fatalf("element %d: uri %q, rewritten %q, taken %q", i, w.URI, g.URI, it.URI)
		}
		if g.Text != "" || len(g.Blob) != 0 {
			t.Fatalf("element %d: the rewritten message still carries the file: %q %q", i, g.Text, g.Blob)
		}
		if string(it.Text) != w.Text {
			t.Fatalf("element %d: text %q, taken %q", i, w.Text, it.Text)
		}
		if (w.Blob != nil) != it.HasBlob || !bytes.Equal(it.Blob, w.Blob) {
			t.Fatalf("element %d: blob %q (nil %v), taken %q (present %v)", i, w.Blob, w.Blob == nil, it.Blob, it.HasBlob)
		}
		if g.MIMEType != w.MIMEType {
			t.Fatalf("element %d: mimeType %q, rewritten %q", i, w.MIMEType, g.MIMEType)
		}
	}
	if len(out) > len(orig) {
		t.Fatalf("the rewritten message is longer than the original")
	}
	return true
}

func TestTakeContentsShapes(t *testing.T) {
	for _, tc := range []struct {
		msg   string
		taken bool
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"skill://a/SKILL.md","text":"hello"}]}}`, true},
		{` {"id":1,"jsonrpc":"2.0","result":{"_meta":{"x":[1,{"text":"no"}]},"contents":[{"text":"a\nb \u003c\u0026\u003e \"q\" \\ é ☃ \ud834\udd1e","uri":"skill://a/b","mimeType":"text/markdown"}],"ttlMs":5}} `, true},
		{`{"jsonrpc":"2.0","id":"x","result":{"contents":[{"uri":"skill://a/b.bin","blob":"AAEC/w=="}]}}`, true},
		{`{"jsonrpc":"2.0","id":"x","result":{"contents":[{"blob":"AAEC\/w==","uri":"skill://a/b.bin"}]}}`, true},
		{`{"jsonrpc":"2.0","id":2,"result":{"contents":[null,{"uri":"u1","text":""},{"uri":"u2","blob":""},{"uri":"u3"},{"uri":"u4","text":"t","blob":"AA=="}]}}`, true},
		{`{"jsonrpc":"2.0","id":2,"result":{"contents":[]}}`, true},
		// Lone surrogates and bytes that are not UTF-8, which the
		// decoders replace.
		{"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"contents\":[{\"uri\":\"u\",\"text\":\"\\ud800 x \\udc00 \xff\xfe \xc3\"}]}}", true},
		{"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"contents\":[{\"uri\":\"u\",\"text\":\"plain \xe2\x82\"}]}}", true},
		// Left to go-sdk: a member twice, an escaped name, another type,
		// a blob that is not base64, no contents, an error, a batch.
		{`{"jsonrpc":"2.0","id":4,"result":{"contents":[{"uri":"u","text":"a","text":"b"}]}}`, false},
		{`{"jsonrpc":"2.0","id":4,"result":{"contents":[{"uri":"u","te\u0078t":"a"}]}}`, false},
		{`{"jsonrpc":"2.0","id":4,"result":{"contents":[{"uri":"u","text":null}]}}`, false},
		{`{"jsonrpc":"2.0","id":4,"result":{"contents":[{"uri":"u","text":5}]}}`, false},
		{`{"jsonrpc":"2.0","id":4,"result":{"contents":[{"uri":"u","blob":"***"}]}}`, false},
		{`{"jsonrpc":"2.0","id":4,"result":{"contents":[{"uri":"u","blob":"AA"}]}}`, false},
		{`{"jsonrpc":"2.0","id":4,"result":{"contents":[7]}}`, false},
		{`{"jsonrpc":"2.0","id":4,"result":{"contents":{"uri":"u","text":"a"}}}`, false},
		{`{"jsonrpc":"2.0","id":4,"result":{"contents":[],"contents":[]}}`, false},
		{`{"jsonrpc":"2.0","id":4,"result":{}}`, false},
		{`{"jsonrpc":"2.0","id":4,"result":{"contents":[{"uri":"u","text":"a"}]},"result":{}}`, false},
		{`{"jsonrpc":"2.0","id":4,"error":{"code":-32002,"message":"not found"}}`, false},
		{`[{"jsonrpc":"2.0","id":4,"result":{"contents":[{"uri":"u","text":"a"}]}}]`, false},
		{`{"jsonrpc":"2.0","id":4,"result":{"contents":[{"uri":"u","text":"a"}]}`, false}, // not JSON
		{"{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"contents\":[{\"uri\":\"u\",\"text\":\"a\x01\"}]}}", false},
	} {
		if got := checkTaken(t, []byte(tc.msg)); got != tc.taken {
			t.Errorf("taken %v, want %v: %s", got, tc.taken, tc.msg)
		}
	}
}

// TestTakeContentsAgreesWithSDK is the differential: random files, encoded
// as go-sdk's server encodes them and as a careless one might (raw bytes
// that are not UTF-8, escapes where none are needed, members in any order
// and between others), decode to the same bytes either way.
func TestTakeContentsAgreesWithSDK(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "Z", " ", "\n", "\t", "\"", "\\", "/", "<", ">", "&", "é", "☃", "𝄞", "\u2028", "\x00", "\x1f", "\x7f", "\xff", "\xc3", "\xed\xa0\x80"}
	escapes := []string{`\u0041`, `\/`, `\ud834\udd1e`, `\ud800`, `\udfff`, `\b`, `\f`, `\r`, `\u00e9`}
	taken := 0
	for n := range 3000 {
		var elems []string
		for range r.IntN(4) {
			if r.IntN(8) == 0 {
				elems = append(elems, "null")
				continue
			}
			var file strings.Builder
			for range r.IntN(64) {
				file.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			members := []string{fmt.Sprintf(`"uri":"skill://s/f%d"`, n)}
			switch r.IntN(4) {
			case 0: // go-sdk's own encoding
				b, _ := json.Marshal(file.String())
				members = append(members, `"text":`+string(b))
			case 1: // raw, with hand-made escapes
				var s strings.Builder
				for _, c := range []byte(file.String()) {
					switch {
					case c == '"' || c == '\\':
						s.WriteString(`\` + string(c))
					case c < 0x20:
						fmt.Fprintf(&s, `\u%04x`, c)
					default:
						s.WriteByte(c)
					}
					if r.IntN(10) == 0 {
						s.WriteString(escapes[r.IntN(len(escapes))])
					}
				}
				members = append(members, `"text":"`+s.String()+`"`)
			case 2:
				b64 := base64.StdEncoding.EncodeToString([]byte(file.String()))
				if r.IntN(2) == 0 {
					b64 = strings.ReplaceAll(b64, "/", `\/`)
				}
				members = append(members, `"blob":"`+b64+`"`)
			case 3:
				members = append(members, `"mimeType":"text/plain"`, `"_meta":{"text":"x","blob":[1]}`)
			}
			r.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
			elems = append(elems, "{"+strings.Join(members, ",")+"}")
		}
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"ttlMs":1,"contents":[%s]}}`, n, strings.Join(elems, ","))
		if checkTaken(t, []byte(msg)) {
			taken++
		}
	}
	if taken < 2900 {
		t.Fatalf("only %d of 3000 messages had their strings taken", taken)
	}
}

func FuzzTakeContents(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"u","text":"a\u00e9"},null,{"uri":"v","blob":"AA=="}]}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"u","text":"a","blob":""}]}}`))
	f.Fuzz(func(t *testing.T, msg []byte) {
		checkTaken(t, msg)
	})
}

// TestContentsOverEveryTransport reads a file with WithContents over each
// transport: the stdio and event-stream transports take its text out of
// the message (go-sdk sees ""), a plain JSON body is left to go-sdk, and
// a response over its limit is refused as before, filling nothing.
func TestContentsOverEveryTransport(t *testing.T) {
	t.Parallel()
	for _, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			log, _ := newTestLog(t)
			cs := connectSession(t, s, Options{Logger: log}, &headerLog{})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			want := contents()[midURI]

			var over Contents
			_, err := cs.ReadResource(WithContents(WithResponseLimit(ctx, int64(len(want)/2)), &over), &mcp.ReadResourceParams{URI: midURI})
			if !IsResponseTooLarge(err) {
				t.Fatalf("read over its limit: %v, want response-too-large", err)
			}
			if _, taken := over.Items(); taken {
				t.Fatalf("a refused response filled the Contents")
			}

			var c Contents
			res, err := cs.ReadResource(WithContents(ctx, &c), &mcp.ReadResourceParams{URI: midURI})
			if err != nil || len(res.Contents) != 1 {
				t.Fatalf("read: %v, %d contents", err, len(res.Contents))
			}
			items, taken := c.Items()
			if s.name == "streamable-json" {
				if taken || res.Contents[0].Text != want {
					t.Fatalf("JSON body: taken %v, go-sdk's text %d bytes, want it left to go-sdk", taken, len(res.Contents[0].Text))
				}
			} else {
				if !taken || len(items) != 1 || string(items[0].Text) != want || !items[0].HasText || items[0].URI != midURI {
					t.Fatalf("taken %v, %d items", taken, len(items))
				}
				if res.Contents[0].Text != "" || res.Contents[0].URI != midURI || res.Contents[0].MIMEType != "text/markdown" {
					t.Fatalf("go-sdk's contents: %d bytes of text, uri %q, mime %q", len(res.Contents[0].Text), res.Contents[0].URI, res.Contents[0].MIMEType)
				}
			}
			if got, err := readResource(ctx, cs, smallURI); err != nil || got != "hello" {
				t.Errorf("read without Contents afterwards: %q, %v", got, err)
			}
		})
	}
}
