package transport

import (
	"bytes"
	"encoding/json"
)

const (
	// maxIDLen bounds a captured id value. Real ids are short numbers or
	// strings; a longer one is treated as no id at all.
	maxIDLen = 256
	// maxKeyLen bounds a captured member name. "method" spelled entirely
	// with \u escapes is 36 bytes.
	maxKeyLen = 64
)

type scanPhase uint8

const (
	phStart  scanPhase = iota // before the first non-space byte
	phKey                     // in the top-level object, expecting a name or '}'
	phKeyStr                  // reading a top-level member name
	phColon                   // after a name, expecting ':'
	phValue                   // expecting a top-level member's value
	phValStr                  // reading a top-level string value
	phScalar                  // reading a top-level number or literal
	phNested                  // inside a top-level member's object or array
	phAfter                   // after a value, expecting ',' or '}'
	phDone                    // the top-level value has ended, or was not an object
)

type member uint8

const (
	memOther member = iota
	memID
	memMethod
	memResult // "result" or "error": the message is a response
)

// idScanner follows one JSON value fed to it in pieces and notes what the
// transport needs to refuse it without decoding it: the raw value of the
// top-level "id" member and whether "method", "result" or "error" members
// occur. It stores nothing else: strings are skipped byte by byte (escapes
// included), nesting is a counter, and only a member name (up to maxKeyLen)
// and the id's value (up to maxIDLen) are ever copied. Its memory is constant
// whatever it is fed.
//
// It is a recogniser, not a validator: on well-formed JSON it agrees with
// encoding/json (a later duplicate member wins, names are compared after
// unescaping); on malformed input it may say anything but never panics.
type idScanner struct {
	phase scanPhase
	depth int // nesting below the top-level object, in phNested
	inStr bool
	esc   bool

	key     [maxKeyLen]byte
	keyN    int
	keyLong bool

	cur     member // the member whose value is being read
	val     [maxIDLen]byte
	valN    int
	valLong bool

	// id is the raw value of the last top-level "id" member when it is a
	// JSON string or number of at most maxIDLen bytes, else nil.
	id []byte
	// idSeen says a top-level "id" member occurred (usable or not).
	idSeen bool
	// idGen counts id members seen, so callers can notice a change cheaply.
	idGen int
	// method, response: a top-level "method", or "result"/"error", member
	// name has been read (its value may still be arriving).
	method   bool
	response bool
	// object: the input began with '{'; batch: it began with '['.
	object bool
	batch  bool
	// bad: the input is not a JSON object or array (as far as can be told).
	bad bool
}

func (s *idScanner) reset() { *s = idScanner{} }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// done says nothing more can change what the scanner has learnt.
func (s *idScanner) done() bool { return s.phase == phDone }

// usableID returns the id when the message looks like a response (no
// top-level "method") whose id can be echoed in an error response.
func (s *idScanner) usableID() ([]byte, bool) {
	return s.id, s.id != nil && !s.method
}

func (s *idScanner) feed(p []byte) {
	for i := 0; i < len(p); i++ {
		if s.inStr {
			capturing := s.phase == phKeyStr || (s.phase == phValStr && s.cur == memID)
			if !capturing && !s.esc {
				// Skip to the next byte that can end the string or start an
				// escape: this is where the bulk of a large message goes.
				j := bytes.IndexAny(p[i:], "\"\\")
				if j < 0 {
					return
				}
				i += j
			}
			c := p[i]
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				s.inStr = false
			}
			if s.inStr {
				s.capture(c)
			} else {
				s.endString()
			}
			continue
		}
		s.step(p[i])
	}
}

func (s *idScanner) capture(c byte) {
	switch {
	case s.phase == phKeyStr:
		if s.keyN < len(s.key) {
			s.key[s.keyN] = c
			s.keyN++
		} else {
			s.keyLong = true
		}
	case s.cur == memID && (s.phase == phValStr || s.phase == phScalar):
		if s.valN < len(s.val) {
			s.val[s.valN] = c
			s.valN++
		} else {
			s.valLong = true
		}
	}
}

func (s *idScanner) endString() {
	switch s.phase {
	case phKeyStr:
		s.cur = s.identify()
		switch s.cur {
		case memMethod:
			s.method = true
		case memResult:
			s.response = true
		}
		s.phase = phColon
	case phValStr:
		s.capture('"')
		s.endValue(true)
		s.phase = phAfter
	}
}

// identify names the member whose name was just read.
func (s *idScanner) identify() member {
	if s.keyLong {
		return memOther
	}
	name := s.key[:s.keyN]
	if bytes.IndexByte(name, '\\') >= 0 {
		var str string
		quoted := make([]byte, 0, len(name)+2)
		quoted = append(append(append(quoted, '"'), name...), '"')
		if json.Unmarshal(quoted, &str) != nil {
			return memOther
		}
		name = []byte(str)
	}
	switch string(name) {
	case "id":
		return memID
	case "method":
		return memMethod
	case "result", "error":
		return memResult
	}
	return memOther
}

// endValue closes the value of the current top-level member. scalar is false
// for objects and arrays.
func (s *idScanner) endValue(scalar bool) {
	if s.cur != memID {
		return
	}
	s.idSeen = true
	s.idGen++
	s.id = nil
	v := s.val[:s.valN]
	if scalar && !s.valLong && len(v) > 0 && (v[0] == '"' || v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) && json.Valid(v) {
		s.id = bytes.Clone(v)
	}
}

func (s *idScanner) step(c byte) {
	switch s.phase {
	case phStart:
		switch {
		case isSpace(c):
		case c == '{':
			s.object = true
			s.phase = phKey
		case c == '[':
			s.batch = true
			s.phase = phDone
		default:
			s.bad = true
			s.phase = phDone
		}
	case phKey:
		switch {
		case isSpace(c):
		case c == '"':
			s.inStr = true
			s.keyN, s.keyLong = 0, false
			s.phase = phKeyStr
		case c == '}':
			s.phase = phDone
		default:
			s.fail()
		}
	case phColon:
		switch {
		case isSpace(c):
		case c == ':':
			s.phase = phValue
		default:
			s.fail()
		}
	case phValue:
		s.stepValue(c)
	case phScalar:
		if isSpace(c) || c == ',' || c == '}' {
			s.endValue(true)
			s.phase = phAfter
			s.step(c)
			return
		}
		s.capture(c)
	case phNested:
		s.stepNested(c)
	case phAfter:
		switch {
		case isSpace(c):
		case c == ',':
			s.phase = phKey
		case c == '}':
			s.phase = phDone
		default:
			s.fail()
		}
	case phDone:
	}
}

// stepValue takes the first byte of a top-level member's value (or space
// before it): a string, a nested object or array, or a number or literal.
func (s *idScanner) stepValue(c byte) {
	s.valN, s.valLong = 0, false
	switch {
	case isSpace(c):
	case c == '"':
		s.inStr = true
		s.phase = phValStr
		s.capture(c)
	case c == '{' || c == '[':
		s.depth = 1
		s.phase = phNested
	case c == '-' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'):
		s.phase = phScalar
		s.capture(c)
	default:
		s.fail()
	}
}

// stepNested follows the nesting inside a top-level member's object or
// array, until it closes.
func (s *idScanner) stepNested(c byte) {
	switch c {
	case '"':
		s.inStr = true
	case '{', '[':
		s.depth++
	case '}', ']':
		s.depth--
		if s.depth == 0 {
			s.endValue(false)
			s.phase = phAfter
		}
	}
}

func (s *idScanner) fail() {
	s.bad = true
	s.phase = phDone
}
