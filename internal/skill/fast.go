package skill

import (
	"encoding/json"
	"unicode/utf8"
)

// ParseEntry decodes one entry of skills/list or skills/get, as
// json.Unmarshal into an Entry does, with the same result and the same
// errors.
//
// Entries as servers write them (the three keys spelled exactly, once
// each; strings without escapes; sizes as plain integers) are decoded in
// one pass over a single copy of raw, and every string of the Entry is a
// slice of that copy: one allocation for the strings of a whole entry
// instead of one per string, and no reflection. Anything else (escapes,
// keys in another case, unknown or repeated keys, odd values, invalid
// JSON) takes encoding/json's path, whose behaviour defines the result;
// TestParseEntryAgreesWithEncodingJSON holds the two to it.
func ParseEntry(raw []byte) (Entry, error) {
	if e, ok := parseFast(raw); ok {
		return e, nil
	}
	return parseSlow(raw)
}

// parseSlow is what encoding/json alone makes of raw: ParseEntry's path
// for anything outside the common shape, and the reference its fast path
// is tested against.
func parseSlow(raw []byte) (Entry, error) {
	var e Entry
	if !json.Valid(raw) {
		// The syntax error json.Unmarshal reports.
		err := json.Unmarshal(raw, &e)
		return Entry{}, err
	}
	err := e.unmarshalSlow(raw)
	return e, err
}

// parseFast decodes raw when it is an entry in the common shape; ok is
// false otherwise, and the caller decodes it the long way.
func parseFast(raw []byte) (e Entry, ok bool) {
	p := fastParser{s: string(raw)}
	if !p.next('{') {
		return Entry{}, false
	}
	var seenURI, seenFM, seenRes bool
	for first := true; ; first = false {
		if p.next('}') {
			break
		}
		if !first && !p.next(',') {
			return Entry{}, false
		}
		key, ok := p.str()
		if !ok || !p.next(':') {
			return Entry{}, false
		}
		switch {
		case key == "uri" && !seenURI:
			seenURI = true
			if e.URI, ok = p.str(); !ok {
				return Entry{}, false
			}
		case key == "frontmatter" && !seenFM:
			seenFM = true
			p.ws()
			if p.peek() != '{' {
				return Entry{}, false
			}
			v, ok := p.value(0)
			if !ok {
				return Entry{}, false
			}
			e.Frontmatter = v.(map[string]any)
		case key == "resources" && !seenRes:
			seenRes = true
			if !p.resources(&e) {
				return Entry{}, false
			}
		default:
			// Unknown, repeated or differently spelled: encoding/json's
			// rules (case-insensitive field names, last one wins) decide.
			return Entry{}, false
		}
	}
	p.ws()
	if p.i != len(p.s) || !seenFM {
		return Entry{}, false
	}
	if !seenRes {
		e.Manifest = Missing
	}
	return e, true
}

// fastParser reads the common shape of an entry from s. Every method
// returns ok false on anything outside it, and then the entry is decoded
// by encoding/json instead; a false never means the input is wrong.
type fastParser struct {
	s string
	i int
}

func (p *fastParser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *fastParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// next consumes c, after whitespace, when it comes next.
func (p *fastParser) next(c byte) bool {
	p.ws()
	if p.peek() == c {
		p.i++
		return true
	}
	return false
}

// str reads a string with no escape and no control character, in valid
// UTF-8, and returns it as a slice of s.
func (p *fastParser) str() (string, bool) {
	if !p.next('"') {
		return "", false
	}
	start, ascii := p.i, true
	for ; p.i < len(p.s); p.i++ {
		c := p.s[p.i]
		switch {
		case c == '"':
			v := p.s[start:p.i]
			p.i++
			if !ascii && !utf8.ValidString(v) {
				return "", false
			}
			return v, true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

// literal consumes word (true, false or null).
func (p *fastParser) literal(word string) bool {
	if len(p.s)-p.i >= len(word) && p.s[p.i:p.i+len(word)] == word {
		p.i += len(word)
		return true
	}
	return false
}

// number reads a JSON number and returns its text, which is what
// json.Number holds.
func (p *fastParser) number() (string, bool) {
	start := p.i
	if p.peek() == '-' {
		p.i++
	}
	switch c := p.peek(); {
	case c == '0':
		p.i++
	case c >= '1' && c <= '9':
		p.digits()
	default:
		return "", false
	}
	if p.peek() == '.' {
		p.i++
		if p.digits() == 0 {
			return "", false
		}
	}
	if c := p.peek(); c == 'e' || c == 'E' {
		p.i++
		if c := p.peek(); c == '+' || c == '-' {
			p.i++
		}
		if p.digits() == 0 {
			return "", false
		}
	}
	return p.s[start:p.i], true
}

func (p *fastParser) digits() int {
	n := 0
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
		n++
	}
	return n
}

// maxDepth bounds the nesting the fast paths (parseFast and appendJSON)
// follow; deeper frontmatter goes to encoding/json, which has its own
// bound.
const maxDepth = 32

// value reads any JSON value into the data model json.Decoder.UseNumber
// gives: nil, bool, string, json.Number, []any, map[string]any. In an
// object a repeated key keeps its last value, as encoding/json does.
func (p *fastParser) value(depth int) (any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	p.ws()
	switch c := p.peek(); {
	case c == '"':
		return p.str()
	case c == '{':
		p.i++
		m := map[string]any{}
		for first := true; ; first = false {
			if p.next('}') {
				return m, true
			}
			if !first && !p.next(',') {
				return nil, false
			}
			k, ok := p.str()
			if !ok || !p.next(':') {
				return nil, false
			}
			v, ok := p.value(depth + 1)
			if !ok {
				return nil, false
			}
			m[k] = v
		}
	case c == '[':
		p.i++
		a := []any{}
		for first := true; ; first = false {
			if p.next(']') {
				return a, true
			}
			if !first && !p.next(',') {
				return nil, false
			}
			v, ok := p.value(depth + 1)
			if !ok {
				return nil, false
			}
			a = append(a, v)
		}
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		n, ok := p.number()
		return json.Number(n), ok
	}
	return nil, false
}

// resources reads the value of "resources": "dynamic", null, or an array
// of objects whose uri and digest are strings (or null) and whose size is
// a plain integer (or null). Other keys of a resource are skipped, as the
// slow path's map ignores them; keys match exactly, as its map does.
func (p *fastParser) resources(e *Entry) bool {
	p.ws()
	switch p.peek() {
	case '"':
		s, ok := p.str()
		e.Manifest = Dynamic
		return ok && s == "dynamic"
	case 'n':
		e.Manifest = Missing
		return p.literal("null")
	case '[':
	default:
		return false
	}
	p.i++
	e.Manifest = Listed
	// Gathered on the stack and copied out at the length found, so that a
	// held manifest carries no spare capacity.
	var held [8]Resource
	rs := held[:0]
	for first := true; ; first = false {
		if p.next(']') {
			e.Resources = make([]Resource, len(rs))
			copy(e.Resources, rs)
			return true
		}
		if !first && !p.next(',') {
			return false
		}
		if !p.next('{') {
			return false
		}
		var r Resource
		for first := true; ; first = false {
			if p.next('}') {
				break
			}
			if !first && !p.next(',') {
				return false
			}
			k, ok := p.str()
			if !ok || !p.next(':') {
				return false
			}
			switch k {
			case "uri":
				if r.URI, ok = p.optStr(); !ok {
					return false
				}
			case "digest":
				var d string
				if d, ok = p.optStr(); !ok {
					return false
				}
				r.Digest = Digest(d)
			case "size":
				p.ws()
				if p.literal("null") {
					r.Size, r.HasSize = 0, false
					continue
				}
				n, ok := p.number()
				if !ok {
					return false
				}
				v, ok := plainInt(n)
				if !ok {
					return false
				}
				r.Size, r.HasSize = v, true
			default:
				if _, ok := p.value(1); !ok {
					return false
				}
			}
		}
		rs = append(rs, r)
	}
}

// optStr reads a string, or null as "".
func (p *fastParser) optStr() (string, bool) {
	p.ws()
	if p.literal("null") {
		return "", true
	}
	return p.str()
}
