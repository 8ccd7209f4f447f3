package verify

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

// Bounds on a frontmatter block's YAML.
const (
	// MaxFrontmatterBytes bounds the block handed to yaml.v3, which
	// allocates about a hundred times its input while parsing: a 16 MiB
	// SKILL.md of "[1,1,1,..." would cost gigabytes before any node budget
	// could apply. Real frontmatter is a few KiB.
	MaxFrontmatterBytes = 256 << 10
	// MaxFrontmatterNodes bounds the nodes visited while converting, each
	// alias expansion counted again, so an alias bomb stops here.
	MaxFrontmatterNodes = 100000
	// MaxFrontmatterDepth bounds nesting.
	MaxFrontmatterDepth = 100
)

// fmSubject is the Subject of frontmatter errors; callers that know the
// SKILL.md's URI replace it with WithSubject.
const fmSubject = "frontmatter"

var bom = []byte("\xEF\xBB\xBF")

// Values of the internal model that the JSON data model cannot tell apart
// from others, kept until comparison or export.
type (
	// fmNumber is a YAML !!int or finite !!float: its exact value and a
	// valid JSON spelling of it.
	fmNumber struct {
		d    decimal
		text string
	}
	// fmTime is a YAML !!timestamp: its literal text and its instant.
	fmTime struct {
		text string
		t    time.Time
	}
	// fmNonFinite is .inf, -.inf or .nan: no JSON value equals it.
	fmNonFinite string
)

// ParseFrontmatter returns the leading YAML block of a SKILL.md in the JSON
// data model (nil, bool, string, json.Number, []any, map[string]any) and the
// body after it. The block starts at the first line, which must be exactly
// "---" (after an optional UTF-8 byte order mark), and ends at the next line
// that is exactly "---" or "..."; CRLF line endings are tolerated. Numbers
// become json.Number with a valid JSON spelling of their exact value,
// timestamps their literal text, !!binary its base64 text; .inf and .nan,
// which JSON cannot spell, are FrontmatterInvalid.
func ParseFrontmatter(content []byte) (map[string]any, []byte, error) {
	m, body, err := parseFrontmatter(content)
	if err != nil {
		return nil, nil, err
	}
	v, err := exportJSON(m, "")
	if err != nil {
		return nil, nil, err
	}
	return v.(map[string]any), body, nil
}

// CompareFrontmatter parses content's frontmatter and compares it field by
// field with want, the entry's frontmatter decoded from JSON with UseNumber.
// Numbers compare by exact value, timestamps equal a string with the same
// literal text or an RFC 3339 string for the same instant, a null is not an
// absent key, and .inf/.nan equal nothing. A FrontmatterMismatch names the
// first differing field path (in sorted key order) in its Detail.
func CompareFrontmatter(content []byte, want map[string]any) error {
	got, _, err := parseFrontmatter(content)
	if err != nil {
		return err
	}
	var w any = want
	if want == nil {
		w = map[string]any{}
	}
	if e := compareValue(got, w, ""); e != nil {
		return e
	}
	return nil
}

// splitFrontmatter finds the block; see ParseFrontmatter.
func splitFrontmatter(content []byte) (block, body []byte, err error) {
	c := bytes.TrimPrefix(content, bom)
	var rest []byte
	switch {
	case bytes.HasPrefix(c, []byte("---\n")):
		rest = c[4:]
	case bytes.HasPrefix(c, []byte("---\r\n")):
		rest = c[5:]
	default:
		return nil, nil, newError(FrontmatterInvalid, fmSubject, "SKILL.md does not start with a --- line")
	}
	for off := 0; off < len(rest); {
		end := bytes.IndexByte(rest[off:], '\n')
		line := rest[off:]
		if end >= 0 {
			line = rest[off : off+end]
		}
		if t := bytes.TrimSuffix(line, []byte("\r")); string(t) == "---" || string(t) == "..." {
			if end < 0 {
				return rest[:off], nil, nil
			}
			return rest[:off], rest[off+end+1:], nil
		}
		if end < 0 {
			break
		}
		off += end + 1
	}
	return nil, nil, newError(FrontmatterInvalid, fmSubject, "no closing --- line after the frontmatter")
}

// parseFrontmatter returns the block in the internal model.
func parseFrontmatter(content []byte) (map[string]any, []byte, error) {
	block, body, err := splitFrontmatter(content)
	if err != nil {
		return nil, nil, err
	}
	if len(block) > MaxFrontmatterBytes {
		return nil, nil, newError(FrontmatterInvalid, fmSubject, "the frontmatter is %d bytes, more than %d", len(block), MaxFrontmatterBytes)
	}
	doc, err := decodeYAML(block)
	if err != nil {
		return nil, nil, err
	}
	if doc == nil {
		return map[string]any{}, body, nil
	}
	root := doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, nil, newError(FrontmatterInvalid, fmSubject, "the frontmatter is not a mapping")
	}
	c := converter{budget: MaxFrontmatterNodes, active: map[*yaml.Node]bool{}}
	v, err := c.value(root, "", 0)
	if err != nil {
		return nil, nil, err
	}
	return v.(map[string]any), body, nil
}

// decodeYAML parses exactly one YAML document (nil for an empty block).
// yaml.v3 turns its own failures into errors but can still panic on inputs
// its authors did not foresee; a panic here must not take the daemon down.
func decodeYAML(block []byte) (doc *yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			doc, err = nil, newError(FrontmatterInvalid, fmSubject, "YAML parser failed: %s", sanitize(fmt.Sprint(r)))
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(block))
	var n yaml.Node
	if err := dec.Decode(&n); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, newError(FrontmatterInvalid, fmSubject, "YAML: %s", sanitize(err.Error()))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, newError(FrontmatterInvalid, fmSubject, "the frontmatter holds more than one YAML document")
	}
	return &n, nil
}

// converter turns a yaml.Node tree into the internal model, expanding
// aliases within a node budget.
type converter struct {
	budget int
	active map[*yaml.Node]bool // anchors being expanded, to catch cycles
}

func (c *converter) invalid(path, format string, args ...any) error {
	d := fmt.Sprintf(format, args...)
	if path != "" {
		d = path + ": " + d
	}
	return &Error{Reason: FrontmatterInvalid, Subject: fmSubject, Detail: d}
}

func (c *converter) value(n *yaml.Node, path string, depth int) (any, error) {
	c.budget--
	if c.budget < 0 {
		return nil, c.invalid(path, "more than %d YAML nodes once aliases are expanded", MaxFrontmatterNodes)
	}
	if depth > MaxFrontmatterDepth {
		return nil, c.invalid(path, "nested deeper than %d", MaxFrontmatterDepth)
	}
	switch n.Kind {
	case yaml.AliasNode:
		t := n.Alias
		if t == nil {
			return nil, c.invalid(path, "alias to an unknown anchor")
		}
		if c.active[t] {
			return nil, c.invalid(path, "anchor %s contains itself", quote(n.Value))
		}
		c.active[t] = true
		defer delete(c.active, t)
		return c.value(t, path, depth+1)
	case yaml.ScalarNode:
		return c.scalar(n, path)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for i, e := range n.Content {
			v, err := c.value(e, path+"["+strconv.Itoa(i)+"]", depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		return c.mapping(n, path, depth)
	}
	return nil, c.invalid(path, "unexpected YAML node kind %d", n.Kind)
}

func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge"
}

// mapping follows yaml.v3: keys written in the mapping win over merged ones,
// and among several merged mappings the earlier wins.
func (c *converter) mapping(n *yaml.Node, path string, depth int) (any, error) {
	out := make(map[string]any, len(n.Content)/2)
	var merge *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if isMergeKey(k) {
			if merge != nil {
				return nil, c.invalid(path, "more than one << merge key")
			}
			merge = v
			continue
		}
		key, err := c.key(k, path)
		if err != nil {
			return nil, err
		}
		if _, dup := out[key]; dup {
			return nil, c.invalid(path, "duplicate key %s", quote(key))
		}
		val, err := c.value(v, joinPath(path, key), depth+1)
		if err != nil {
			return nil, err
		}
		out[key] = val
	}
	if merge == nil {
		return out, nil
	}
	sources := []*yaml.Node{merge}
	if merge.Kind == yaml.SequenceNode {
		sources = merge.Content
	}
	for _, s := range sources {
		t := s
		if t.Kind == yaml.AliasNode && t.Alias != nil {
			t = t.Alias
		}
		if t.Kind != yaml.MappingNode {
			return nil, c.invalid(path, "<< needs a mapping or a list of mappings")
		}
		v, err := c.value(s, path, depth+1)
		if err != nil {
			return nil, err
		}
		for k, mv := range v.(map[string]any) {
			if _, ok := out[k]; !ok {
				out[k] = mv
			}
		}
	}
	return out, nil
}

// key returns a mapping key's literal text: JSON keys are strings, and
// `1: x` can only have been rendered as "1".
func (c *converter) key(k *yaml.Node, path string) (string, error) {
	t := k
	if t.Kind == yaml.AliasNode {
		c.budget--
		if t.Alias == nil {
			return "", c.invalid(path, "alias to an unknown anchor")
		}
		t = t.Alias
	}
	if t.Kind != yaml.ScalarNode {
		return "", c.invalid(path, "a mapping key is a collection; only scalar keys are allowed")
	}
	return t.Value, nil
}

func (c *converter) scalar(n *yaml.Node, path string) (any, error) {
	if isPlain(n) {
		return c.plain(n, path)
	}
	switch tag := n.ShortTag(); tag {
	case "!!str", "!!merge":
		return n.Value, nil
	case "!!null":
		switch n.Value {
		case "", "~", "null", "Null", "NULL":
			return nil, nil
		}
		return nil, c.invalid(path, "%s is not a null", quote(n.Value))
	case "!!bool":
		switch n.Value {
		case "true", "True", "TRUE":
			return true, nil
		case "false", "False", "FALSE":
			return false, nil
		}
		return nil, c.invalid(path, "%s is not a boolean", quote(n.Value))
	case "!!int":
		d, ok := parseYAMLInt(n.Value)
		if !ok {
			return nil, c.invalid(path, "%s is not a 64-bit integer", quote(n.Value))
		}
		return newNumber(d, n.Value), nil
	case "!!float":
		switch n.Value {
		case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN":
			return fmNonFinite(n.Value), nil
		}
		d, ok := parseYAMLFloat(n.Value)
		if !ok {
			return nil, c.invalid(path, "%s is not a finite float", quote(n.Value))
		}
		return newNumber(d, n.Value), nil
	case "!!timestamp":
		t, ok := parseTimestamp(n.Value)
		if !ok {
			return nil, c.invalid(path, "%s is not a timestamp", quote(n.Value))
		}
		return fmTime{text: n.Value, t: t}, nil
	case "!!binary":
		if _, err := base64.StdEncoding.DecodeString(n.Value); err != nil {
			return nil, c.invalid(path, "!!binary holds invalid base64")
		}
		return n.Value, nil
	default:
		// yaml.v3 decodes a scalar with any other tag (local tags such as
		// !Ref, or !!map on a scalar) to its text; so do we.
		return n.Value, nil
	}
}

func newNumber(d decimal, literal string) fmNumber {
	if jsonNumber.MatchString(literal) {
		return fmNumber{d: d, text: literal}
	}
	return fmNumber{d: d, text: d.String()}
}

// yaml.v3's timestamp formats, in its order.
var timestampFormats = []string{
	"2006-1-2T15:4:5.999999999Z07:00",
	"2006-1-2t15:4:5.999999999Z07:00",
	"2006-1-2 15:4:5.999999999",
	"2006-1-2",
}

// parseTimestamp mirrors yaml.v3's: four digits and a dash first, then the
// first format that parses.
func parseTimestamp(s string) (time.Time, bool) {
	i := 0
	for ; i < len(s) && isDigit(s[i]); i++ {
	}
	if i != 4 || i == len(s) || s[i] != '-' {
		return time.Time{}, false
	}
	for _, f := range timestampFormats {
		if t, err := time.Parse(f, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// exportJSON converts the internal model to the JSON data model.
func exportJSON(v any, path string) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			ev, err := exportJSON(e, joinPath(path, k))
			if err != nil {
				return nil, err
			}
			out[k] = ev
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			ev, err := exportJSON(e, path+"["+strconv.Itoa(i)+"]")
			if err != nil {
				return nil, err
			}
			out[i] = ev
		}
		return out, nil
	case fmNumber:
		return json.Number(x.text), nil
	case fmTime:
		return x.text, nil
	case fmNonFinite:
		return nil, &Error{Reason: FrontmatterInvalid, Subject: fmSubject, Detail: path + ": " + string(x) + " has no JSON form"}
	case fmEither:
		return exportJSON(x.yaml12, path)
	}
	return v, nil
}

var plainKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// joinPath names a field for messages: metadata.version, tags[2],
// metadata["a.b"].
func joinPath(path, key string) string {
	if plainKey.MatchString(key) {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	return path + "[" + quote(key) + "]"
}

// compareValue compares the internal model (got, from SKILL.md) with the
// JSON data model (want, from the entry).
func compareValue(got, want any, path string) *Error {
	switch g := got.(type) {
	case map[string]any:
		w, ok := want.(map[string]any)
		if !ok {
			return differ(got, want, path)
		}
		return compareMaps(g, w, path)
	case []any:
		w, ok := want.([]any)
		if !ok {
			return differ(got, want, path)
		}
		return compareLists(g, w, path)
	}
	if sameScalar(got, want, path) {
		return nil
	}
	return differ(got, want, path)
}

// mismatch is a FrontmatterMismatch at path.
func mismatch(path, format string, args ...any) *Error {
	p := path
	if p == "" {
		p = "(top level)"
	}
	return &Error{Reason: FrontmatterMismatch, Subject: fmSubject, Detail: p + ": " + fmt.Sprintf(format, args...)}
}

// differ is the mismatch of two values that are not the same.
func differ(got, want any, path string) *Error {
	return mismatch(path, "SKILL.md has %s, the entry has %s", describe(got), describe(want))
}

// compareMaps compares two mappings key by key in sorted order, so the
// first difference reported does not depend on map order.
func compareMaps(g, w map[string]any, path string) *Error {
	keys := make([]string, 0, len(g)+len(w))
	for k := range g {
		keys = append(keys, k)
	}
	for k := range w {
		if _, ok := g[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		gv, gok := g[k]
		wv, wok := w[k]
		switch {
		case !gok:
			return &Error{Reason: FrontmatterMismatch, Subject: fmSubject, Detail: joinPath(path, k) + ": the entry has it, SKILL.md does not"}
		case !wok:
			return &Error{Reason: FrontmatterMismatch, Subject: fmSubject, Detail: joinPath(path, k) + ": SKILL.md has it, the entry does not"}
		}
		if e := compareValue(gv, wv, joinPath(path, k)); e != nil {
			return e
		}
	}
	return nil
}

// compareLists compares two sequences item by item.
func compareLists(g, w []any, path string) *Error {
	if len(g) != len(w) {
		return mismatch(path, "SKILL.md has %d items, the entry has %d", len(g), len(w))
	}
	for i := range g {
		if e := compareValue(g[i], w[i], path+"["+strconv.Itoa(i)+"]"); e != nil {
			return e
		}
	}
	return nil
}

// sameScalar says the scalar got (from SKILL.md) means want (from the
// entry's JSON): equal strings and booleans, both null, the same decimal
// number, either reading of a YAML 1.1/1.2 ambiguous scalar, or the same
// timestamp.
func sameScalar(got, want any, path string) bool {
	switch g := got.(type) {
	case string:
		w, ok := want.(string)
		return ok && w == g
	case bool:
		w, ok := want.(bool)
		return ok && w == g
	case nil:
		return want == nil
	case fmNumber:
		w, ok := jsonDecimal(want)
		return ok && w == g.d
	case fmEither:
		return compareValue(g.yaml12, want, path) == nil || compareValue(g.yaml11, want, path) == nil
	case fmTime:
		w, ok := want.(string)
		if !ok {
			return false
		}
		if w == g.text {
			return true
		}
		t, err := time.Parse(time.RFC3339, w)
		return err == nil && t.Equal(g.t)
	}
	return false
}

// jsonDecimal reads a number of the JSON data model. json.Number is what
// the entry holds; the Go number types are accepted for callers that built
// a frontmatter by hand.
func jsonDecimal(v any) (decimal, bool) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = string(x)
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return decimal{}, false
		}
		s = strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		return jsonDecimal(float64(x))
	case int:
		s = strconv.FormatInt(int64(x), 10)
	case int64:
		s = strconv.FormatInt(x, 10)
	case int32:
		s = strconv.FormatInt(int64(x), 10)
	case uint64:
		s = strconv.FormatUint(x, 10)
	case uint:
		s = strconv.FormatUint(uint64(x), 10)
	default:
		return decimal{}, false
	}
	return parseDecimal(s)
}

// describe renders a value briefly for a mismatch message.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		if len(x) > 60 {
			x = x[:60] + "…"
		}
		return "the string " + quote(x)
	case bool:
		return strconv.FormatBool(x)
	case fmNumber:
		return "the number " + x.text
	case fmTime:
		return "the timestamp " + sanitize(x.text)
	case fmNonFinite:
		return "the non-finite number " + string(x)
	case fmEither:
		return describe(x.yaml12)
	case json.Number:
		s := string(x)
		if len(s) > 60 {
			s = s[:60] + "…"
		}
		return "the number " + sanitize(s)
	case float64, float32, int, int64, int32, uint64, uint:
		return fmt.Sprintf("the number %v", x)
	case map[string]any:
		return fmt.Sprintf("an object of %d fields", len(x))
	case []any:
		return fmt.Sprintf("a list of %d items", len(x))
	}
	return fmt.Sprintf("a value of type %T", v)
}
