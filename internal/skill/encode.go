package skill

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// appendJSON appends e's wire form to b, byte for byte as marshalSlow
// writes it, when e is in the common shape: frontmatter values of the
// JSON data model (nil, bool, string, json.Number, float64, []any,
// map[string]any), every json.Number valid, every float64 finite, nested
// at most maxDepth deep. ok is false for anything else, which marshalSlow
// then encodes or refuses; a false never means e cannot be encoded.
func (e *Entry) appendJSON(b []byte) (_ []byte, ok bool) {
	b = append(b, `{"uri":`...)
	b = appendJSONString(b, e.URI)
	b = append(b, `,"frontmatter":`...)
	if e.Frontmatter == nil {
		// marshalSlow writes no frontmatter as an empty one, not as null.
		b = append(b, `{}`...)
	} else if b, ok = appendJSONObject(b, e.Frontmatter, 0); !ok {
		return nil, false
	}
	switch e.Manifest {
	case Dynamic:
		b = append(b, `,"resources":"dynamic"`...)
	case Listed:
		b = append(b, `,"resources":[`...)
		for i, r := range e.Resources {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"uri":`...)
			b = appendJSONString(b, r.URI)
			b = append(b, `,"digest":`...)
			b = appendJSONString(b, string(r.Digest))
			if r.HasSize {
				b = append(b, `,"size":`...)
				b = strconv.AppendInt(b, r.Size, 10)
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}'), true
}

// sizeHint guesses the length of e's wire form from its strings, so that
// the common entry is written into a buffer allocated once.
func (e *Entry) sizeHint() int {
	n := len(`{"uri":"","frontmatter":{},"resources":[]}`) + len(e.URI)
	for k, v := range e.Frontmatter {
		n += len(k) + len(`"":,`)
		if s, ok := v.(string); ok {
			n += len(s) + 2
		} else {
			n += 32
		}
	}
	for _, r := range e.Resources {
		n += len(r.URI) + len(r.Digest) + len(`{"uri":"","digest":"","size":-9223372036854775808},`)
	}
	return n
}

// appendJSONValue appends v as encoding/json writes it; ok is false when
// v is outside the common shape (see appendJSON).
func appendJSONValue(b []byte, v any, depth int) ([]byte, bool) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, v), true
	case string:
		return appendJSONString(b, v), true
	case json.Number:
		n := string(v)
		if n == "" {
			// encoding/json writes the zero Number as 0.
			n = "0"
		}
		if !validNumber(n) {
			return b, false
		}
		return append(b, n...), true
	case float64:
		return appendJSONFloat(b, v)
	case []any:
		if v == nil {
			return append(b, "null"...), true
		}
		if depth >= maxDepth {
			return b, false
		}
		b = append(b, '[')
		for i, x := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendJSONValue(b, x, depth+1); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	case map[string]any:
		if v == nil {
			return append(b, "null"...), true
		}
		if depth >= maxDepth {
			return b, false
		}
		return appendJSONObject(b, v, depth+1)
	}
	return b, false
}

// appendJSONObject appends m with its keys in encoding/json's order: by
// their bytes, before escaping.
func appendJSONObject(b []byte, m map[string]any, depth int) ([]byte, bool) {
	var held [16]string
	keys := held[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		var ok bool
		if b, ok = appendJSONValue(b, m[k], depth); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// appendJSONString appends s as a JSON string, as encoding/json writes
// it. A string that needs no escaping, which is nearly every string of
// an entry, is copied as it is; the rest are escaped by encoding/json
// itself, whose rules (<, > and & as \u003c…, U+2028 and U+2029,
// control characters, invalid UTF-8 as \ufffd) then hold by definition.
func appendJSONString(b []byte, s string) []byte {
	if verbatimString(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}

// verbatimASCII[c] reports whether the ASCII byte c goes into a JSON
// string as it is; encoding/json escapes the rest.
var verbatimASCII = func() (t [utf8.RuneSelf]bool) {
	for c := ' '; c <= '~'; c++ {
		t[c] = true
	}
	for _, c := range `"\<>&` {
		t[c] = false
	}
	return t
}()

// verbatimString reports whether encoding/json writes s between quotes
// unchanged: printable ASCII other than " \ < > &, and valid UTF-8 other
// than U+2028 and U+2029.
func verbatimString(s string) bool {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if !verbatimASCII[c] {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += size
	}
	return true
}

// validNumber reports whether s is a JSON number literal, the check
// encoding/json makes before it writes a json.Number.
func validNumber(s string) bool {
	p := fastParser{s: s}
	_, ok := p.number()
	return ok && p.i == len(s)
}

// appendJSONFloat appends f as encoding/json writes a float64: the
// shortest form that reads back as f, in exponent form outside
// [1e-6, 1e21) with the exponent unpadded (ES6's number to string).
// ok is false for NaN and the infinities, which encoding/json refuses.
func appendJSONFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return b, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if n := len(b); format == 'e' && n-start >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		// e-07 is written e-7.
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b, true
}
