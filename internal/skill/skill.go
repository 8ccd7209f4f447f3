package skill

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// A Digest is the SEP-2640 digest of a file's raw bytes: "sha256:" followed by
// 64 lowercase hexadecimal characters. DigestOf and FormatDigest make one,
// ParseDigest reads one back; package verify checks an entry's digests.
type Digest string

// A Resource is one file of a skill's manifest.
type Resource struct {
	URI    string `json:"uri"`
	Digest Digest `json:"digest"`
	// Size is the declared byte length of the file. HasSize is false for
	// entries from the older revision of the SEP, which carried no sizes.
	Size    int64 `json:"size"`
	HasSize bool  `json:"has_size"`
}

// Manifest says which form an entry's "resources" field took on the wire.
type Manifest int

const (
	// Listed: an array of resources (the only verifiable form).
	Listed Manifest = iota
	// Dynamic: the string "dynamic"; the server publishes no digests.
	Dynamic
	// Missing: no "resources" at all (older-revision dynamic skills).
	Missing
)

func (m Manifest) String() string {
	switch m {
	case Listed:
		return "listed"
	case Dynamic:
		return "dynamic"
	case Missing:
		return "missing"
	}
	return fmt.Sprintf("Manifest(%d)", int(m))
}

// An Entry is a skill as skills/list or skills/get describes it.
type Entry struct {
	// URI is the resource URI of the skill's SKILL.md.
	URI string
	// Frontmatter is the entry's frontmatter in the JSON data model: nil,
	// bool, string, json.Number, []any and map[string]any.
	Frontmatter map[string]any
	Manifest    Manifest
	// Resources is the manifest when Manifest is Listed.
	Resources []Resource
}

// Name returns the frontmatter's name, or "" when it is absent or not a string.
func (e *Entry) Name() string {
	s, _ := e.Frontmatter["name"].(string)
	return s
}

// Description returns the frontmatter's description, or "".
func (e *Entry) Description() string {
	s, _ := e.Frontmatter["description"].(string)
	return s
}

// Equal reports whether e and f say the same thing, which is whether their
// wire forms are equal: what a server asserted is its JSON, so two entries
// that encode alike are one entry however they were decoded.
func (e Entry) Equal(f Entry) bool {
	a, err1 := json.Marshal(e)
	b, err2 := json.Marshal(f)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}

// Resource returns the manifest's resource with the given URI.
func (e *Entry) Resource(uri string) (Resource, bool) {
	for _, r := range e.Resources {
		if r.URI == uri {
			return r, true
		}
	}
	return Resource{}, false
}

type wireResource struct {
	URI    string `json:"uri"`
	Digest Digest `json:"digest"`
	Size   *int64 `json:"size,omitempty"`
}

type wireEntry struct {
	URI         string          `json:"uri"`
	Frontmatter map[string]any  `json:"frontmatter"`
	Resources   json.RawMessage `json:"resources,omitempty"`
}

// MarshalJSON renders the entry in the SEP-2640 wire shape, as
// marshalSlow does, with the same bytes and the same errors.
//
// Entries in the common shape (frontmatter of the JSON data model, finite
// floats, valid numbers, nesting no deeper than maxDepth) are written in
// one pass into one buffer by appendJSON, without reflection. Anything
// else takes marshalSlow, whose output defines the result: Equal compares
// entries by these bytes. TestMarshalJSONAgreesWithReference holds the
// two to it.
func (e Entry) MarshalJSON() ([]byte, error) {
	if b, ok := e.appendJSON(make([]byte, 0, e.sizeHint())); ok {
		return b, nil
	}
	return e.marshalSlow()
}

// AppendJSON appends e's wire form, MarshalJSON's bytes, to b: in place
// for the common entry, so that a document of many entries is written
// into one buffer.
func (e *Entry) AppendJSON(b []byte) ([]byte, error) {
	if out, ok := e.appendJSON(b); ok {
		return out, nil
	}
	m, err := e.marshalSlow()
	if err != nil {
		return b, err
	}
	return append(b, m...), nil
}

// marshalSlow is MarshalJSON through encoding/json, for any entry.
func (e Entry) marshalSlow() ([]byte, error) {
	w := wireEntry{URI: e.URI, Frontmatter: e.Frontmatter}
	if w.Frontmatter == nil {
		w.Frontmatter = map[string]any{}
	}
	switch e.Manifest {
	case Dynamic:
		w.Resources = json.RawMessage(`"dynamic"`)
	case Listed:
		rs := make([]wireResource, 0, len(e.Resources))
		for _, r := range e.Resources {
			wr := wireResource{URI: r.URI, Digest: r.Digest}
			if r.HasSize {
				size := r.Size
				wr.Size = &size
			}
			rs = append(rs, wr)
		}
		b, err := json.Marshal(rs)
		if err != nil {
			return nil, err
		}
		w.Resources = b
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes the wire shape. It fails only where the JSON types
// are wrong: a uri that is not a string, a frontmatter that is not an object,
// a "resources" value that is neither an array nor "dynamic", a size that is
// not an integer. Every semantic check (URIs, digests, sizes, names, limits)
// is left to package verify, so that it can name its reason.
func (e *Entry) UnmarshalJSON(data []byte) error {
	if f, ok := parseFast(data); ok {
		*e = f
		return nil
	}
	return e.unmarshalSlow(data)
}

// unmarshalSlow is UnmarshalJSON through encoding/json, for valid JSON.
func (e *Entry) unmarshalSlow(data []byte) error {
	var w wireEntry
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&w); err != nil {
		return fmt.Errorf("malformed entry: %w", err)
	}
	if w.Frontmatter == nil {
		return fmt.Errorf("malformed entry: no frontmatter object")
	}
	*e = Entry{URI: w.URI, Frontmatter: w.Frontmatter}
	res := bytes.TrimSpace(w.Resources)
	switch {
	case len(res) == 0 || bytes.Equal(res, []byte("null")):
		e.Manifest = Missing
	case res[0] == '"':
		var s string
		if err := json.Unmarshal(res, &s); err != nil || s != "dynamic" {
			return fmt.Errorf(`malformed entry: resources is a string other than "dynamic"`)
		}
		e.Manifest = Dynamic
	case res[0] == '[':
		var rs []map[string]json.RawMessage
		if err := json.Unmarshal(res, &rs); err != nil {
			return fmt.Errorf("malformed entry: resources: %w", err)
		}
		e.Manifest = Listed
		e.Resources = make([]Resource, 0, len(rs))
		for i, raw := range rs {
			r, err := decodeResource(raw)
			if err != nil {
				return fmt.Errorf("malformed entry: resources[%d]: %w", i, err)
			}
			e.Resources = append(e.Resources, r)
		}
	default:
		return fmt.Errorf("malformed entry: resources is neither an array nor \"dynamic\"")
	}
	return nil
}

func decodeResource(raw map[string]json.RawMessage) (Resource, error) {
	var r Resource
	if err := unmarshalString(raw["uri"], &r.URI); err != nil {
		return r, fmt.Errorf("uri: %w", err)
	}
	var d string
	if err := unmarshalString(raw["digest"], &d); err != nil {
		return r, fmt.Errorf("digest: %w", err)
	}
	r.Digest = Digest(d)
	if s, ok := raw["size"]; ok && !bytes.Equal(bytes.TrimSpace(s), []byte("null")) {
		if v, ok := plainInt(s); ok {
			r.Size, r.HasSize = v, true
			return r, nil
		}
		var n json.Number
		s = bytes.TrimSpace(s)
		// json.Number also accepts a quoted number; the wire type is a number.
		if len(s) == 0 || s[0] == '"' || json.Unmarshal(s, &n) != nil {
			return r, fmt.Errorf("size is not a number")
		}
		v, err := n.Int64()
		if err != nil {
			return r, fmt.Errorf("size %s is not an integer", n)
		}
		r.Size, r.HasSize = v, true
	}
	return r, nil
}

// unmarshalString decodes an optional JSON string; absent or null is "".
func unmarshalString(raw json.RawMessage, s *string) error {
	if v, ok := plainString(raw); ok {
		*s = v
		return nil
	}
	if len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil
	}
	if err := json.Unmarshal(raw, s); err != nil {
		return fmt.Errorf("not a string")
	}
	return nil
}

// plainString decodes a JSON string literal that needs no decoding: quotes
// around valid UTF-8 with no escape, quote or control character, which is
// what URIs and digests nearly always are. It is what json.Unmarshal gives
// for such a literal, without its reflection; ok is false for anything
// else, which is then decoded the long way.
func plainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c < 0x20 || c == '"' || c == '\\' {
			return "", false
		}
	}
	if !utf8.Valid(body) {
		return "", false
	}
	return string(body), true
}

// plainInt decodes a JSON integer of at most 18 digits (so that it cannot
// overflow), as json.Number's Int64 would; ok is false for anything else.
func plainInt[T ~string | ~[]byte](raw T) (int64, bool) {
	digits := raw
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	for i := range len(digits) {
		if c := digits[i]; c < '0' || c > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(string(raw), 10, 64)
	return v, err == nil
}
