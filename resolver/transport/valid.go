package transport

import (
	"encoding/binary"
	"math/bits"
)

// maxJSONDepth is encoding/json's maxNestingDepth: the 10001st open
// container is an error.
const maxJSONDepth = 10000

// validJSON reports what encoding/json.Valid(b) reports, faster: strings,
// the bulk of a large message (file text escaped as JSON, or base64), are
// skipped eight bytes at a time. Like encoding/json, it does not check that
// strings hold valid UTF-8. It does not recurse and does not allocate; the
// kinds of the open containers are a bit set on the stack.
func validJSON(b []byte) bool {
	var objects [maxJSONDepth/64 + 1]uint64 // bit d set: container at depth d is an object
	depth := 0
	i := skipJSONSpace(b, 0)
	var c byte

value: // a value starts at b[i] (white space skipped)
	if i >= len(b) {
		return false
	}
	switch c = b[i]; c {
	case '"':
		if i = scanJSONString(b, i+1); i < 0 {
			return false
		}
	case '{':
		if depth == maxJSONDepth {
			return false
		}
		objects[depth>>6] |= 1 << (depth & 63)
		depth++
		if i = skipJSONSpace(b, i+1); i < len(b) && b[i] == '}' {
			i++
			depth--
			goto next
		}
		goto key
	case '[':
		if depth == maxJSONDepth {
			return false
		}
		objects[depth>>6] &^= 1 << (depth & 63)
		depth++
		if i = skipJSONSpace(b, i+1); i < len(b) && b[i] == ']' {
			i++
			depth--
			goto next
		}
		goto value
	case 't', 'f', 'n':
		if i = scanJSONLiteral(b, i); i < 0 {
			return false
		}
	default:
		if i = scanJSONNumber(b, i); i < 0 {
			return false
		}
	}

next: // a value ended before b[i]
	i = skipJSONSpace(b, i)
	if depth == 0 {
		return i == len(b)
	}
	if i >= len(b) {
		return false
	}
	c = b[i]
	if inObject := objects[(depth-1)>>6]&(1<<((depth-1)&63)) != 0; c == ',' {
		i = skipJSONSpace(b, i+1)
		if inObject {
			goto key
		}
		goto value
	} else if inObject && c == '}' || !inObject && c == ']' {
		i++
		depth--
		goto next
	}
	return false

key: // an object key starts at b[i] (white space skipped)
	if i = scanJSONKey(b, i); i < 0 {
		return false
	}
	goto value
}

// scanJSONLiteral returns the index after the true, false or null that
// starts at b[i], or -1.
func scanJSONLiteral(b []byte, i int) int {
	var lit string
	switch b[i] {
	case 't':
		lit = "true"
	case 'f':
		lit = "false"
	default:
		lit = "null"
	}
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// scanJSONKey returns the index of the value after the member name that
// starts at b[i] and its colon (white space skipped), or -1.
func scanJSONKey(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = scanJSONString(b, i+1); i < 0 {
		return -1
	}
	if i = skipJSONSpace(b, i); i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipJSONSpace(b, i+1)
}

// skipJSONSpace returns the index of the first byte at or after i that is
// not JSON white space.
func skipJSONSpace(b []byte, i int) int {
	for ; i < len(b); i++ {
		if c := b[i]; c > ' ' || (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			break
		}
	}
	return i
}

const (
	lsb8 = 0x0101010101010101
	msb8 = 0x8080808080808080
)

// stringPlain marks the bytes that a JSON string holds as they are: all but
// '"', '\\' and control bytes.
var stringPlain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// escapeLen is the length of an escape by the byte after its backslash: 2,
// or 6 for \uXXXX, or 0 for none.
var escapeLen = func() (t [256]uint8) {
	for _, c := range `"\/bfnrt` {
		t[c] = 2
	}
	t['u'] = 6
	return t
}()

// hexDigit marks the bytes of a \uXXXX escape's digits.
var hexDigit = func() (t [256]bool) {
	for _, c := range "0123456789abcdefABCDEF" {
		t[c] = true
	}
	return t
}()

// scanJSONString scans a string whose opening quote is before b[i] and
// returns the index after its closing quote, or -1 if it is invalid or
// unterminated.
func scanJSONString(b []byte, i int) int {
	for {
		if len(b)-i >= 8 {
			// Eight bytes at a time: the high bit of a byte of m is set
			// where that byte is '"', '\\' or below 0x20. Below the first
			// such byte no subtraction borrows, so the lowest set bit is
			// exact (a borrow may set bits above it). A byte of q or s is
			// zero where v is '"' or '\\'; subtracting one sets its high
			// bit, as it does for a byte of q or s at or above 0x81, but
			// those come from a byte of v at or above 0x80, which &^ v
			// clears, as it does for bytes of v - 0x20 at or above 0x80
			// that come from v and not from a borrow.
			v := binary.LittleEndian.Uint64(b[i:])
			q := v ^ ('"' * lsb8)
			s := v ^ ('\\' * lsb8)
			m := ((v - 0x20*lsb8) | (q - lsb8) | (s - lsb8)) &^ v & msb8
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		} else {
			for i < len(b) && stringPlain[b[i]] {
				i++
			}
			if i >= len(b) {
				return -1
			}
		}
		switch b[i] {
		case '"':
			return i + 1
		case '\\':
			if i+1 >= len(b) {
				return -1
			}
			switch escapeLen[b[i+1]] {
			case 2:
				i += 2
			case 6:
				if len(b)-i < 6 || !hexDigit[b[i+2]] || !hexDigit[b[i+3]] || !hexDigit[b[i+4]] || !hexDigit[b[i+5]] {
					return -1
				}
				i += 6
			default:
				return -1
			}
		default: // a control byte
			return -1
		}
	}
}

// scanJSONNumber scans a number starting at b[i] and returns the index after
// it, or -1 if there is none.
func scanJSONNumber(b []byte, i int) int {
	if b[i] == '-' {
		if i++; i >= len(b) {
			return -1
		}
	}
	switch c := b[i]; {
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		i++
		for i < len(b) && b[i]-'0' <= 9 {
			i++
		}
	default:
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if i++; i >= len(b) || b[i]-'0' > 9 {
			return -1
		}
		for i < len(b) && b[i]-'0' <= 9 {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		if i++; i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || b[i]-'0' > 9 {
			return -1
		}
		for i < len(b) && b[i]-'0' <= 9 {
			i++
		}
	}
	return i
}
