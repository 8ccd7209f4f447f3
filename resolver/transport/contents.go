package transport

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"sync"
	"unicode/utf8"
	"unsafe"
)

// A resources/read result carries a file as one JSON string: its text, or
// its bytes in base64. Left to go-sdk, that string is copied four times on
// its way to the caller (the event scanner's line, the JSON-RPC message's
// raw result, the decoder's buffer, the decoded string). A call made with
// WithContents has the transport decode those strings itself, once, from
// the frame it already holds, and hand go-sdk the message with each of them
// replaced by "": what go-sdk decodes is the envelope, and the bytes are
// in the Contents.
//
// Anything the transport does not follow exactly (a member name with an
// escape, a member given twice, a value of another type, a blob that is not
// base64) leaves the message as it came, for go-sdk to decode as before,
// and the Contents unfilled: taking the strings out is a shortcut, never a
// second opinion on what a message means.

// Contents receives the text and blob strings of a call's resources/read
// result, decoded; see WithContents.
type Contents struct {
	mu     sync.Mutex
	filled bool
	items  []Content
}

// Content is one element of a result's contents array, as the transport
// decoded it. An element that was null has nothing set.
type Content struct {
	URI     string
	Text    []byte
	HasText bool // a "text" member was present
	Blob    []byte
	HasBlob bool // a "blob" member was present
}

// Items returns the decoded contents, in the order of the result's array,
// and whether the transport took them out of the response at all. When it
// did, the message go-sdk decoded has "" for every text and blob.
func (c *Contents) Items() ([]Content, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.items, c.filled
}

func (c *Contents) set(items []Content) {
	c.mu.Lock()
	c.items, c.filled = items, true
	c.mu.Unlock()
}

type contentsKey struct{}

// WithContents returns a context whose calls' responses have their contents'
// text and blob strings decoded into c by the transport (the stdio
// transports and streamable HTTP's event streams; a plain JSON response
// body is left to go-sdk). The last response to a call made with it fills
// c; a caller reads c once the call has returned.
func WithContents(ctx context.Context, c *Contents) context.Context {
	return context.WithValue(ctx, contentsKey{}, c)
}

func contentsOf(ctx context.Context) *Contents {
	c, _ := ctx.Value(contentsKey{}).(*Contents)
	return c
}

// takeContents decodes the text and blob strings of msg's result.contents
// into c and returns msg with each of them replaced by "". When msg is not
// valid JSON, or not a shape it follows exactly, it returns msg unchanged
// and leaves c as it was.
func takeContents(msg []byte, c *Contents) []byte {
	if !validJSON(msg) {
		return msg
	}
	found, ok := findContents(msg)
	if !ok {
		return msg
	}
	items := make([]Content, len(found))
	removed := 0
	for k, f := range found {
		it := &items[k]
		if f.uri.ok() && json.Unmarshal(msg[f.uri.from:f.uri.to], &it.URI) != nil {
			return msg
		}
		if f.text.ok() {
			if it.Text, ok = decodeText(msg[f.text.from:f.text.to]); !ok {
				return msg
			}
			it.HasText = true
			removed += f.text.len() - 2
		}
		if f.blob.ok() {
			if it.Blob, ok = decodeBlob(msg[f.blob.from:f.blob.to]); !ok {
				return msg
			}
			it.HasBlob = true
			removed += f.blob.len() - 2
		}
	}
	out := make([]byte, 0, len(msg)-removed)
	last := 0
	for _, f := range found {
		// A content's text and blob may come in either order.
		first, second := f.text, f.blob
		if second.ok() && (!first.ok() || second.from < first.from) {
			first, second = second, first
		}
		for _, s := range []span{first, second} {
			if s.ok() {
				out = append(append(out, msg[last:s.from]...), '"', '"')
				last = s.to
			}
		}
	}
	out = append(out, msg[last:]...)
	c.set(items)
	return out
}

// decodeText is the text of a JSON string (quotes included), decoded as
// encoding/json decodes it. A string without escapes is copied as it is;
// one with escapes, or with bytes that are not UTF-8 (which the decoder
// replaces), goes through encoding/json, whose string is then the one copy.
func decodeText(s []byte) ([]byte, bool) {
	raw := s[1 : len(s)-1]
	if bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return bytes.Clone(raw), true
	}
	var t string
	if json.Unmarshal(s, &t) != nil {
		return nil, false
	}
	if t == "" {
		return []byte{}, true
	}
	// The string is never written to: what the caller gets is read only.
	return unsafe.Slice(unsafe.StringData(t), len(t)), true
}

// decodeBlob is the bytes of a base64 JSON string, decoded as
// encoding/json decodes a []byte (standard alphabet, padded).
func decodeBlob(s []byte) ([]byte, bool) {
	raw := s[1 : len(s)-1]
	if bytes.IndexByte(raw, '\\') >= 0 {
		var b []byte
		if json.Unmarshal(s, &b) != nil {
			return nil, false
		}
		return b, true
	}
	b := make([]byte, base64.StdEncoding.DecodedLen(len(raw)))
	n, err := base64.StdEncoding.Decode(b, raw)
	if err != nil {
		return nil, false
	}
	return b[:n], true
}

// A span is a value in the message, from its first byte to after its last;
// the zero span is no value.
type span struct{ from, to int }

func (s span) ok() bool { return s.to > 0 }
func (s span) len() int { return s.to - s.from }
func (s *span) set(from, to int) bool {
	if s.ok() {
		return false // a member given twice: left to go-sdk
	}
	*s = span{from, to}
	return true
}

// foundContent is where one element of result.contents keeps its strings.
type foundContent struct{ uri, text, blob span }

// findContents finds the elements of the top-level result.contents array
// of b, which is valid JSON. ok is false when b is not a JSON-RPC result
// with a contents array, or has anything on the way it does not follow
// exactly.
func findContents(b []byte) (found []foundContent, ok bool) {
	var result, contents span
	ok = members(b, skipJSONSpace(b, 0), func(key []byte, from, to int) bool {
		if string(key) == "result" {
			return b[from] == '{' && result.set(from, to)
		}
		return true
	})
	if !ok || !result.ok() {
		return nil, false
	}
	ok = members(b, result.from, func(key []byte, from, to int) bool {
		if string(key) == "contents" {
			return b[from] == '[' && contents.set(from, to)
		}
		return true
	})
	if !ok || !contents.ok() {
		return nil, false
	}
	for i := skipJSONSpace(b, contents.from+1); b[i] != ']'; {
		var f foundContent
		end := skipValue(b, i)
		switch b[i] {
		case 'n': // null: go-sdk's nil element
		case '{':
			if !members(b, i, func(key []byte, from, to int) bool {
				switch string(key) {
				case "uri":
					return b[from] == '"' && f.uri.set(from, to)
				case "text":
					return b[from] == '"' && f.text.set(from, to)
				case "blob":
					return b[from] == '"' && f.blob.set(from, to)
				}
				return true
			}) {
				return nil, false
			}
		default:
			return nil, false
		}
		found = append(found, f)
		if i = skipJSONSpace(b, end); b[i] == ',' {
			i = skipJSONSpace(b, i+1)
		}
	}
	return found, true
}

// members calls fn with each member of the object at b[at] (valid JSON),
// its name as written and its value's span, until fn returns false. A name
// with an escape in it is not followed: members returns false.
func members(b []byte, at int, fn func(key []byte, from, to int) bool) bool {
	if b[at] != '{' {
		return false
	}
	i := skipJSONSpace(b, at+1)
	for b[i] != '}' {
		end := scanJSONString(b, i+1)
		key := b[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		from := skipJSONSpace(b, skipJSONSpace(b, end)+1) // past the colon
		to := skipValue(b, from)
		if !fn(key, from, to) {
			return false
		}
		if i = skipJSONSpace(b, to); b[i] == ',' {
			i = skipJSONSpace(b, i+1)
		}
	}
	return true
}

// skipValue returns the index after the value at b[i], which is valid JSON.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return scanJSONString(b, i+1)
	case '{', '[':
		depth := 0
		for {
			switch b[i] {
			case '"':
				i = scanJSONString(b, i+1)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
	case 't', 'f', 'n':
		return scanJSONLiteral(b, i)
	default:
		return scanJSONNumber(b, i)
	}
}
