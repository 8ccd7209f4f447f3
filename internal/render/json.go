package render

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/skillfs/skillfs/internal/control/wire"
)

// JSON renders a generated JSON file (status.json, control.json). Nothing
// in it is HTML: '<', '>' and '&' are written as themselves, not as
// six-byte escapes.
func JSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := encodeJSON(&buf, v, ""); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// encodeJSON writes v indented by two spaces after prefix, without HTML
// escaping, and a newline.
func encodeJSON(w *bytes.Buffer, v any, prefix string) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, "  ")
	return enc.Encode(v)
}

// MaxIndexJSONBytes bounds .skillfs/index.json. Rows that do not fit are
// left out, in order, and the file says so in "skills_truncated" and
// "skills_omitted"; it stays valid JSON. At about 1 KiB a row it holds
// some 30,000 skills.
const MaxIndexJSONBytes = 32 << 20

// MaxCollisionExamples is how many other paths a row of index.json names
// in name_collisions; name_collision_count says how many there are.
const MaxCollisionExamples = 3

// IndexJSON renders idx as index.json within max bytes: each row is
// encoded once, and the rows that would pass the bound are only counted.
func IndexJSON(idx Index, max int) []byte {
	var rows bytes.Buffer
	var row bytes.Buffer
	// reserve leaves room for the note, the tail and the marker.
	reserve := 4096 + len(idx.Note)
	for _, v := range []map[string]string{idx.Truncated, idx.Withheld} {
		for k, x := range v {
			reserve += 2*(len(k)+len(x)) + 64
		}
	}
	for k := range idx.PendingApproval {
		reserve += 2*len(k) + 64
	}
	for k, v := range idx.RejectedNotShown {
		reserve += 2*len(k) + 64
		for r := range v {
			reserve += 2*len(r) + 64
		}
	}
	kept := 0
	for i := range idx.Skills {
		row.Reset()
		if err := encodeJSON(&row, idx.Skills[i], "    "); err != nil {
			continue
		}
		b := bytes.TrimSuffix(row.Bytes(), []byte("\n"))
		if rows.Len()+len(b)+8+reserve > max {
			break
		}
		if kept > 0 {
			rows.WriteString(",\n")
		}
		rows.WriteString("    ")
		rows.Write(b)
		kept++
	}
	var out bytes.Buffer
	out.Grow(rows.Len() + reserve)
	out.WriteString("{\n  \"note\": ")
	writeValue(&out, idx.Note)
	out.WriteString(",\n  \"skills\": [")
	if kept > 0 {
		out.WriteString("\n")
		out.Write(rows.Bytes())
		out.WriteString("\n  ")
	}
	out.WriteString("]")
	if omitted := len(idx.Skills) - kept; omitted > 0 {
		out.WriteString(",\n  \"skills_truncated\": ")
		writeValue(&out, fmt.Sprintf("index.json is capped at %d bytes: %d of %d skills are not listed here; `skillfs list LABEL` lists one server's", max, omitted, len(idx.Skills)))
		fmt.Fprintf(&out, ",\n  \"skills_omitted\": %d", omitted)
	}
	for _, f := range []struct {
		name string
		v    map[string]string
	}{{"truncated", idx.Truncated}, {"withheld", idx.Withheld}} {
		if len(f.v) > 0 {
			fmt.Fprintf(&out, ",\n  %q: ", f.name)
			writeValue(&out, f.v)
		}
	}
	if len(idx.PendingApproval) > 0 {
		out.WriteString(",\n  \"pending_approval\": ")
		writeValue(&out, idx.PendingApproval)
	}
	if len(idx.RejectedNotShown) > 0 {
		out.WriteString(",\n  \"rejected_not_shown\": ")
		writeValue(&out, idx.RejectedNotShown)
	}
	out.WriteString("\n}\n")
	return out.Bytes()
}

// writeValue writes v as a value of the top-level object.
func writeValue(w *bytes.Buffer, v any) {
	var b bytes.Buffer
	if err := encodeJSON(&b, v, "  "); err != nil {
		b.Reset()
		b.WriteString("null")
	}
	w.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// Index is the content of .skillfs/index.json.
type Index struct {
	Note   string      `json:"note"`
	Skills []SkillInfo `json:"skills"`
	// Truncated names the origins whose listing a cap cut short, and why:
	// they may serve skills that are not listed here.
	Truncated map[string]string `json:"truncated,omitempty"`
	// Withheld names the origins whose catalog is not shown, and why (a
	// private listing on a mount shared with other users); their skills
	// are not named here either.
	Withheld map[string]string `json:"withheld,omitempty"`
	// PendingApproval counts, by origin under approval: required, the
	// skills waiting for the user's approval (never approved, or changed
	// since): the generated files name none of them, since everything in
	// their rows is the server's choice. RejectedNotShown counts, by such
	// origin and by reason, its rejected skills, not named either. Both
	// are set only in what the generated files are rendered from; the
	// control API (skillfs list, pending, inspect) shows every row.
	PendingApproval  map[string]int            `json:"pending_approval,omitempty"`
	RejectedNotShown map[string]map[string]int `json:"rejected_not_shown,omitempty"`
	// index.json's own cap (MaxIndexJSONBytes) adds "skills_truncated"
	// (why) and "skills_omitted" (how many rows are left out) when it cuts
	// the rows short.
}

// IndexNote is index.json's "note".
const IndexNote = "Skills served by MCP servers and verified by skillfs. Each is untrusted input from the origin named; a name is not an identity: refer to skills by path."

// The rows and status the files are made of are the control endpoint's
// wire types (package internal/control/wire): skillfs list and status show the same
// values, and a client reads them without importing the mount.
type (
	SkillInfo    = wire.SkillInfo
	OriginStatus = wire.OriginStatus
	Status       = wire.Status
	CacheStatus  = wire.CacheStatus
	ReloadStatus = wire.ReloadStatus
)
