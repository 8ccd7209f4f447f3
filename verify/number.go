package verify

import (
	"regexp"
	"strconv"
	"strings"
)

// decimal is an exact decimal number: (-1)^neg × digits × 10^exp, with
// digits free of leading and trailing zeros. Zero is the zero decimal, so
// two decimals are equal numbers iff they are equal structs. Comparing the
// literal digits rather than float64 values makes YAML 0.1 equal JSON 0.1
// and keeps 2^53+1 apart from 2^53, with no big-number arithmetic that a
// hostile exponent could make expensive.
type decimal struct {
	neg    bool
	digits string
	exp    int64
}

// maxExponent bounds the exponents accepted; far beyond float64's range, so
// it never rejects a number yaml.v3 resolves as one.
const maxExponent = 1 << 20

// decimalLiteral is yaml.v3's float syntax (a superset of JSON's numbers).
var decimalLiteral = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)

// jsonNumber is the JSON number grammar (RFC 8259).
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)

// parseDecimal reads a decimal literal in yaml.v3's float syntax.
func parseDecimal(s string) (decimal, bool) {
	if !decimalLiteral.MatchString(s) {
		return decimal{}, false
	}
	var d decimal
	switch s[0] {
	case '-':
		d.neg = true
		s = s[1:]
	case '+':
		s = s[1:]
	}
	mant, exp := s, int64(0)
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, err := strconv.ParseInt(strings.TrimPrefix(s[i+1:], "+"), 10, 64)
		if err != nil || e > maxExponent || e < -maxExponent {
			return decimal{}, false
		}
		exp = e
	}
	intPart, frac := mant, ""
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
	}
	digits := intPart + frac
	exp -= int64(len(frac))
	digits = strings.TrimLeft(digits, "0")
	trimmed := strings.TrimRight(digits, "0")
	exp += int64(len(digits) - len(trimmed))
	if trimmed == "" {
		return decimal{}, true
	}
	d.digits, d.exp = trimmed, exp
	return d, true
}

// parseYAMLInt reads an integer the way yaml.v3 resolves one: underscores
// dropped, Go's base prefixes (0x, 0o, 0b, and a leading 0 for octal),
// within int64 or uint64.
func parseYAMLInt(s string) (decimal, bool) {
	plain := strings.ReplaceAll(s, "_", "")
	if v, err := strconv.ParseInt(plain, 0, 64); err == nil {
		d, _ := parseDecimal(strconv.FormatInt(v, 10))
		return d, true
	}
	if v, err := strconv.ParseUint(plain, 0, 64); err == nil {
		d, _ := parseDecimal(strconv.FormatUint(v, 10))
		return d, true
	}
	return decimal{}, false
}

// parseYAMLFloat reads a finite float the way yaml.v3 resolves one: yaml.v3
// gives !!float only to literals that strconv.ParseFloat accepts without a
// range error, and to integers under an explicit !!float tag.
func parseYAMLFloat(s string) (decimal, bool) {
	plain := strings.ReplaceAll(s, "_", "")
	if decimalLiteral.MatchString(plain) {
		if _, err := strconv.ParseFloat(plain, 64); err == nil {
			return parseDecimal(plain)
		}
		return decimal{}, false
	}
	return parseYAMLInt(s)
}

// String renders d in a valid JSON spelling: plain digits where that stays
// short, exponent form otherwise.
func (d decimal) String() string {
	if d.digits == "" {
		return "0"
	}
	var b strings.Builder
	if d.neg {
		b.WriteByte('-')
	}
	n := int64(len(d.digits))
	point := n + d.exp // position of the decimal point within digits
	switch {
	case d.exp >= 0 && point <= 21:
		b.WriteString(d.digits)
		b.WriteString(strings.Repeat("0", int(d.exp)))
	case d.exp < 0 && point > 0:
		b.WriteString(d.digits[:point])
		b.WriteByte('.')
		b.WriteString(d.digits[point:])
	case d.exp < 0 && point > -6:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", int(-point)))
		b.WriteString(d.digits)
	default:
		b.WriteByte(d.digits[0])
		if n > 1 {
			b.WriteByte('.')
			b.WriteString(d.digits[1:])
		}
		b.WriteByte('e')
		b.WriteString(strconv.FormatInt(point-1, 10))
	}
	return b.String()
}
