package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// The file is first turned into a small tree of its own instead of being
// unmarshalled into structs, for three reasons: one walker serves JSON and
// YAML alike, every error can name the key path it comes from, and a key
// given twice is caught (encoding/json would silently keep the last one,
// which for a server label means a server quietly disappears).

type kind int

const (
	nullValue kind = iota
	boolValue
	numberValue
	stringValue
	listValue
	mapValue
)

func (k kind) String() string {
	switch k {
	case nullValue:
		return "null"
	case boolValue:
		return "a boolean"
	case numberValue:
		return "a number"
	case stringValue:
		return "a string"
	case listValue:
		return "a list"
	case mapValue:
		return "an object"
	}
	return "a value"
}

type value struct {
	kind kind
	// text is the scalar as written: the string, the number's literal, or
	// "true"/"false".
	text   string
	list   []*value
	keys   []string // in file order
	fields map[string]*value
}

func (v *value) isNull() bool { return v == nil || v.kind == nullValue }

// field returns the member key of an object, nil when absent.
func (v *value) field(key string) *value {
	if v == nil || v.kind != mapValue {
		return nil
	}
	return v.fields[key]
}

const (
	// maxDepth bounds nesting; a real config is five levels deep.
	maxDepth = 64
	// maxNodes bounds the tree, counting every node YAML aliases expand to,
	// so that a "billion laughs" file fails instead of exhausting memory.
	maxNodes = 200_000
	// maxFileSize bounds the file read; real configs are a few KiB.
	maxFileSize = 4 << 20
)

// A syntaxError is a problem of the file as a whole, before any key path
// exists.
type syntaxError struct {
	format string // "JSON" or "YAML"
	msg    string
	fix    string // "" for the usual "fix the syntax there"
}

func (e *syntaxError) Error() string { return fmt.Sprintf("invalid %s: %s", e.format, e.msg) }

// parseJSON reads JSON, also accepting the comments and trailing commas of
// JSONC, because VS Code's mcp.json (whose shape is accepted) is JSONC.
func parseJSON(data []byte) (*value, error) {
	clean, err := stripJSONC(data)
	if err != nil {
		return nil, &syntaxError{format: "JSON", msg: err.Error()}
	}
	if len(bytes.TrimSpace(clean)) == 0 {
		// An empty file is a config with no servers, not a syntax error.
		return &value{kind: nullValue}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(clean))
	dec.UseNumber()
	b := &jsonBuilder{dec: dec}
	v, err := b.value(0)
	if err != nil {
		return nil, &syntaxError{format: "JSON", msg: b.position(clean, err)}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &syntaxError{format: "JSON", msg: b.position(clean, errors.New("unexpected data after the top-level value"))}
	}
	return v, nil
}

type jsonBuilder struct {
	dec   *json.Decoder
	nodes int
}

// position prefixes err with the line and column the decoder stopped at.
func (b *jsonBuilder) position(data []byte, err error) string {
	off := b.dec.InputOffset()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = se.Offset
	}
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := int(off) - bytes.LastIndexByte(data[:off], '\n')
	msg := err.Error()
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		msg = "unexpected end of file (an unclosed { or [?)"
	}
	return fmt.Sprintf("line %d, column %d: %s", line, col, msg)
}

func (b *jsonBuilder) value(depth int) (*value, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested more than %d levels deep", maxDepth)
	}
	if b.nodes++; b.nodes > maxNodes {
		return nil, fmt.Errorf("more than %d values", maxNodes)
	}
	tok, err := b.dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &value{kind: nullValue}, nil
	case bool:
		return &value{kind: boolValue, text: strconv.FormatBool(t)}, nil
	case json.Number:
		return &value{kind: numberValue, text: t.String()}, nil
	case string:
		return &value{kind: stringValue, text: t}, nil
	case json.Delim:
		switch t {
		case '[':
			v := &value{kind: listValue}
			for b.dec.More() {
				e, err := b.value(depth + 1)
				if err != nil {
					return nil, err
				}
				v.list = append(v.list, e)
			}
			_, err := b.dec.Token() // ]
			return v, err
		case '{':
			v := &value{kind: mapValue, fields: map[string]*value{}}
			for b.dec.More() {
				kt, err := b.dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := kt.(string)
				if _, dup := v.fields[key]; dup {
					return nil, fmt.Errorf("key %q appears twice in one object", key)
				}
				e, err := b.value(depth + 1)
				if err != nil {
					return nil, err
				}
				v.keys = append(v.keys, key)
				v.fields[key] = e
			}
			_, err := b.dec.Token() // }
			return v, err
		}
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// stripJSONC blanks out // and /* */ comments and trailing commas before
// } or ], keeping every byte offset (and so every line number) in place.
func stripJSONC(data []byte) ([]byte, error) {
	out := bytes.Clone(data)
	inString := false
	lastComma := -1 // offset of a comma followed so far only by space or comments
	for i := 0; i < len(out); i++ {
		c := out[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString = true
			lastComma = -1
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for i < len(out) && out[i] != '\n' {
				out[i] = ' '
				i++
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			end := bytes.Index(out[i+2:], []byte("*/"))
			if end < 0 {
				line := 1 + bytes.Count(out[:i], []byte("\n"))
				return nil, fmt.Errorf("line %d: a /* comment is never closed", line)
			}
			for j := i; j < i+2+end+2; j++ {
				if out[j] != '\n' {
					out[j] = ' '
				}
			}
			i += 2 + end + 1
		case c == ',':
			lastComma = i
		case c == '}' || c == ']':
			if lastComma >= 0 {
				out[lastComma] = ' '
			}
			lastComma = -1
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			lastComma = -1
		}
	}
	return out, nil
}

// parseYAML reads one YAML document. Anchors, aliases and merge keys (<<)
// work as YAML defines them, within the node budget.
func parseYAML(data []byte) (*value, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if err == io.EOF {
			return &value{kind: nullValue}, nil
		}
		return nil, &syntaxError{format: "YAML", msg: fixYAMLLine(data, strings.TrimPrefix(err.Error(), "yaml: "))}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		return nil, &syntaxError{format: "YAML", msg: "the file holds more than one YAML document (a second ---)", fix: "keep one document"}
	}
	b := &yamlBuilder{}
	v, err := b.value(&doc, 0)
	if err != nil {
		return nil, &syntaxError{format: "YAML", msg: err.Error()}
	}
	return v, nil
}

type yamlBuilder struct{ nodes int }

func (b *yamlBuilder) value(n *yaml.Node, depth int) (*value, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("line %d: nested more than %d levels deep (or an alias refers to itself)", n.Line, maxDepth)
	}
	if b.nodes++; b.nodes > maxNodes {
		return nil, fmt.Errorf("line %d: more than %d values once aliases are expanded", n.Line, maxNodes)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return &value{kind: nullValue}, nil
		}
		return b.value(n.Content[0], depth)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, fmt.Errorf("line %d: unknown alias", n.Line)
		}
		return b.value(n.Alias, depth+1)
	case yaml.ScalarNode:
		return scalar(n)
	case yaml.SequenceNode:
		v := &value{kind: listValue}
		for _, c := range n.Content {
			e, err := b.value(c, depth+1)
			if err != nil {
				return nil, err
			}
			v.list = append(v.list, e)
		}
		return v, nil
	case yaml.MappingNode:
		v := &value{kind: mapValue, fields: map[string]*value{}}
		var merges []*value
		for i := 0; i+1 < len(n.Content); i += 2 {
			kn, vn := n.Content[i], n.Content[i+1]
			if kn.Kind == yaml.ScalarNode && kn.Tag == "!!merge" {
				m, err := b.value(vn, depth+1)
				if err != nil {
					return nil, err
				}
				merges = append(merges, m)
				continue
			}
			if kn.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a key must be a plain string", kn.Line)
			}
			key := kn.Value
			if _, dup := v.fields[key]; dup {
				return nil, fmt.Errorf("line %d: key %q appears twice in one mapping", kn.Line, key)
			}
			e, err := b.value(vn, depth+1)
			if err != nil {
				return nil, err
			}
			v.keys = append(v.keys, key)
			v.fields[key] = e
		}
		// Keys written in the mapping win over merged ones, and earlier
		// merge sources over later ones, as the YAML merge key spec says.
		for _, m := range merges {
			srcs := []*value{m}
			if m.kind == listValue {
				srcs = m.list
			}
			for _, src := range srcs {
				if src.kind != mapValue {
					return nil, fmt.Errorf("line %d: a merge key (<<) needs a mapping or a list of mappings", n.Line)
				}
				for _, k := range src.keys {
					if _, ok := v.fields[k]; !ok {
						v.keys = append(v.keys, k)
						v.fields[k] = src.fields[k]
					}
				}
			}
		}
		return v, nil
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
}

// scalar maps a YAML scalar onto the JSON data model. Timestamps, binary
// and custom tags are kept as the string written, which is what a config
// value means.
func scalar(n *yaml.Node) (*value, error) {
	switch n.ShortTag() {
	case "!!null":
		return &value{kind: nullValue}, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, fmt.Errorf("line %d: %v", n.Line, err)
		}
		return &value{kind: boolValue, text: strconv.FormatBool(b)}, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			// Too big for int64: keep the literal, the consumer says
			// what is wrong with it.
			return &value{kind: numberValue, text: n.Value}, nil
		}
		return &value{kind: numberValue, text: strconv.FormatInt(i, 10)}, nil
	case "!!float":
		return &value{kind: numberValue, text: n.Value}, nil
	}
	return &value{kind: stringValue, text: n.Value}, nil
}
