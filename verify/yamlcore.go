package verify

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// fmEither is a plain scalar that YAML 1.2's core schema and YAML 1.1 read
// differently (0755, yes, on, 1:30, 1_000, 0b11, 1e3): its 1.2 reading,
// which is what it means, and its 1.1 reading, which a server whose parser
// follows 1.1 (PyYAML, js-yaml's older modes) lists. A listing equals it in
// either reading; what is published from it is the 1.2 reading.
type fmEither struct {
	text           string // the scalar as written
	yaml12, yaml11 any
}

// FrontmatterAmbiguities lists the plain scalars of content's frontmatter
// that YAML 1.2 (what skillfs publishes and checks by) and YAML 1.1 read
// differently, one line each ("version: 0755 is the number 755 in YAML 1.2,
// the number 493 in YAML 1.1"), sorted by path; nil when there are none
// or the frontmatter does not parse (the parse error is reported
// elsewhere). Quote such a value to mean the string, or write 0o755, true
// or 90 to mean one thing in both.
func FrontmatterAmbiguities(content []byte) []string {
	m, _, err := parseFrontmatter(content)
	if err != nil {
		return nil
	}
	var out []string
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(e, joinPath(path, k))
			}
		case []any:
			for i, e := range x {
				walk(e, path+"["+strconv.Itoa(i)+"]")
			}
		case fmEither:
			out = append(out, fmt.Sprintf("%s: %s is %s in YAML 1.2, %s in YAML 1.1", path, sanitize(x.text), describe(x.yaml12), describe(x.yaml11)))
		}
	}
	walk(m, "")
	slices.Sort(out)
	return out
}

var (
	coreInt    = regexp.MustCompile(`^[-+]?[0-9]+$`)
	coreOctal  = regexp.MustCompile(`^0o[0-7]+$`)
	coreHex    = regexp.MustCompile(`^0x[0-9a-fA-F]+$`)
	yaml11Bin  = regexp.MustCompile(`^[-+]?0b[01_]+$`)
	yaml11Oct  = regexp.MustCompile(`^[-+]?0[0-7_]+$`)
	yaml11Dec  = regexp.MustCompile(`^[-+]?(0|[1-9][0-9_]*)$`)
	yaml11Hex  = regexp.MustCompile(`^[-+]?0x[0-9a-fA-F_]+$`)
	yaml11Sexa = regexp.MustCompile(`^[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?$`)
	yaml11Flt  = regexp.MustCompile(`^[-+]?([0-9][0-9_]*)?\.[0-9_]*([eE][-+][0-9]+)?$`)
)

// isPlain reports whether n is a plain scalar with no explicit tag: the
// scalars whose type the schema decides.
func isPlain(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Style&^yaml.FlowStyle == 0
}

// plain resolves a plain, untagged scalar with the YAML 1.2 core schema
// (yaml.v3 resolves some as YAML 1.1 does: 0755 as octal 493, 1_000 as
// 1000, 0b11 as 3), and keeps its YAML 1.1 reading beside it when that
// differs. Timestamps stay as yaml.v3 resolves them (the core schema has
// none; a timestamp already equals the string of its literal text).
func (c *converter) plain(n *yaml.Node, path string) (any, error) {
	v12, err := c.core(n, path)
	if err != nil {
		return nil, err
	}
	v11, ok := yaml11Reading(n.Value)
	if !ok {
		v11 = n.Value
	}
	if !sameReading(v12, v11) {
		return fmEither{text: n.Value, yaml12: v12, yaml11: v11}, nil
	}
	return v12, nil
}

func (c *converter) core(n *yaml.Node, path string) (any, error) {
	s := n.Value
	switch s {
	case "", "~", "null", "Null", "NULL":
		return nil, nil
	case "true", "True", "TRUE":
		return true, nil
	case "false", "False", "FALSE":
		return false, nil
	case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN":
		return fmNonFinite(s), nil
	}
	switch {
	case coreInt.MatchString(s), decimalLiteral.MatchString(s):
		d, ok := parseDecimal(s)
		if !ok {
			return nil, c.invalid(path, "%s is not a number", quote(s))
		}
		return newNumber(d, s), nil
	case coreOctal.MatchString(s), coreHex.MatchString(s):
		base := 8
		if s[1] == 'x' {
			base = 16
		}
		v, err := strconv.ParseUint(s[2:], base, 64)
		if err != nil {
			return nil, c.invalid(path, "%s is not a 64-bit integer", quote(s))
		}
		d, _ := parseDecimal(strconv.FormatUint(v, 10))
		return newNumber(d, s), nil
	}
	if n.ShortTag() == "!!timestamp" {
		if t, ok := parseTimestamp(s); ok {
			return fmTime{text: s, t: t}, nil
		}
	}
	return s, nil
}

// yaml11Reading is how a YAML 1.1 parser types plain scalar s (the 1.1
// type repository: bool, int, float, null), and false when s is not one
// of them or does not fit: then it is the string s, as in 1.2 unless 1.2
// types it.
func yaml11Reading(s string) (any, bool) {
	switch s {
	case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE":
		return true, true
	case "n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE":
		return false, true
	case "", "~", "null", "Null", "NULL":
		return nil, true
	case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN":
		return fmNonFinite(s), true
	}
	neg := strings.HasPrefix(s, "-")
	digits := strings.ReplaceAll(strings.TrimLeft(s, "+-"), "_", "")
	integer := func(text string, base int) (any, bool) {
		v, err := strconv.ParseUint(text, base, 64)
		if err != nil || v > 1<<63 {
			return nil, false
		}
		out := strconv.FormatUint(v, 10)
		if neg && v != 0 {
			out = "-" + out
		}
		d, _ := parseDecimal(out)
		return newNumber(d, out), true
	}
	switch {
	case yaml11Bin.MatchString(s):
		return integer(digits[2:], 2)
	case yaml11Hex.MatchString(s):
		return integer(digits[2:], 16)
	case yaml11Oct.MatchString(s):
		return integer(digits, 8)
	case yaml11Dec.MatchString(s):
		return integer(digits, 10)
	case yaml11Sexa.MatchString(s):
		// Base 60: 1:30 is 90, 1:30.5 is 90.5.
		whole, frac, _ := strings.Cut(digits, ".")
		var v uint64
		for _, p := range strings.Split(whole, ":") {
			x, err := strconv.ParseUint(p, 10, 64)
			if err != nil || v > (1<<63)/60 {
				return nil, false
			}
			v = v*60 + x
		}
		text := strconv.FormatUint(v, 10)
		if frac != "" {
			text += "." + frac
		}
		if neg {
			text = "-" + text
		}
		d, ok := parseDecimal(text)
		if !ok {
			return nil, false
		}
		return newNumber(d, text), true
	case yaml11Flt.MatchString(s) && digits != ".":
		text := digits
		if neg {
			text = "-" + text
		}
		if strings.HasPrefix(strings.TrimLeft(text, "-"), ".") {
			text = strings.Replace(text, ".", "0.", 1)
		}
		d, ok := parseDecimal(strings.TrimSuffix(text, "."))
		if !ok {
			return nil, false
		}
		return newNumber(d, d.String()), true
	}
	return nil, false
}

// sameReading reports whether two readings of one scalar are the same value.
func sameReading(a, b any) bool {
	switch x := a.(type) {
	case fmNumber:
		y, ok := b.(fmNumber)
		return ok && x.d == y.d
	case fmTime:
		y, ok := b.(string)
		return ok && y == x.text
	}
	if _, ok := b.(fmNumber); ok {
		return false
	}
	return a == b
}
