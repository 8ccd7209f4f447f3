package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
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

// SkillInfo is one row of index.json.
type SkillInfo struct {
	Origin      string `json:"origin"`
	URI         string `json:"uri"`
	Path        string `json:"path,omitempty"` // mount-relative skill directory
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	// State: "available" (held; files are fetched and verified when read),
	// "failed" (a file failed; Reason says why), "dynamic" (shown
	// unverified, allow_dynamic), "pending" (held, but not in the tree
	// until the user approves it: approval required; such rows are in
	// the control API's answers only, index.json counts them), "rejected" (left out
	// of the tree; a dynamic skill under approval: required is rejected
	// with reason "not-approvable").

	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Flags are content and frontmatter findings, reported and never acted
	// on: allowed-tools and hooks are requested-and-ignored.
	Flags         []string `json:"flags,omitempty"`
	Source        string   `json:"source,omitempty"` // "list", "pin", "get", "instructions"
	Files         int      `json:"files,omitempty"`
	VerifiedFiles int      `json:"verified_files,omitempty"`
	// NestedIn is the enclosing skill's path: this skill's files are plain
	// files of that one, and loading it as a skill needs its own approval.
	NestedIn string `json:"nested_in,omitempty"`
	// Collisions are other skills, in any origin, with the same name: at
	// most MaxCollisionExamples of them; CollisionCount is how many there
	// are in all.
	Collisions     []string `json:"name_collisions,omitempty"`
	CollisionCount int      `json:"name_collision_count,omitempty"`
	// Approval is the skill's approval state when its origin requires
	// approval: "approved", "pending" (never approved), "changed" (the
	// entry differs from the approved one), "refused" (dynamic); "" when
	// approval is not required.
	Approval string `json:"approval,omitempty"`
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

// OriginStatus is one origin in status.json.
type OriginStatus struct {
	Label         string `json:"label"`
	ID            string `json:"id"`
	Transport     string `json:"transport"`
	State         string `json:"state"`
	Protocol      string `json:"protocol,omitempty"`
	ServerName    string `json:"server_name,omitempty"`
	DirectoryRead bool   `json:"directory_read"`
	Catalog       string `json:"catalog"` // "live", "saved" or "none"
	Skills        int    `json:"skills"`
	Rejected      int    `json:"rejected"`
	Truncated     string `json:"truncated,omitempty"`
	// ListResources and ListBytes are what the listing cost against
	// max_list_resources and max_list_bytes.
	ListResources int   `json:"list_resources"`
	ListBytes     int64 `json:"list_bytes"`
	// CacheScope is the listing's cacheScope, "public" or "private".
	CacheScope string `json:"cache_scope,omitempty"`
	// Withheld says why the catalog is not shown on this mount.
	Withheld string `json:"withheld,omitempty"`
	// CatalogUnsaved says why the catalog could not be saved: a restart
	// with the server down will not show it.
	CatalogUnsaved string    `json:"catalog_unsaved,omitempty"`
	ListedAt       time.Time `json:"listed_at,omitzero"`
	BytesFetched   int64     `json:"bytes_fetched"`
	Budget         int64     `json:"budget"`
	BudgetWindow   string    `json:"budget_window"` // bytes_fetched counts what this window saw
	Reads          int64     `json:"reads"`
	FailedReads    int       `json:"failed_reads"`
	LastError      string    `json:"last_error,omitempty"`
	LastErrorAt    time.Time `json:"last_error_at,omitzero"`
	// FailedStarts counts the attempts in a row that could not start a
	// session (state "gave-up" once it reaches limits.start_attempts).
	FailedStarts int `json:"failed_starts,omitempty"`
	// Instructions are the first MaxInstructions bytes of the
	// instructions the server sent at connect, exactly; InstructionsBytes
	// is their whole length. Under approval: required the mount leaves
	// them out of what the generated files are rendered from and says why
	// in InstructionsNotShown (instructions.go).
	Instructions         string `json:"instructions,omitempty"`
	InstructionsBytes    int    `json:"instructions_bytes,omitempty"`
	InstructionsNotShown string `json:"instructions_not_shown,omitempty"`
}

// Status is the content of .skillfs/status.json.
type Status struct {
	Version   string         `json:"version"`
	StartedAt time.Time      `json:"started_at"`
	Origins   []OriginStatus `json:"origins"`
	Cache     CacheStatus    `json:"cache"`
	// Reload is set while the last reload of the config (SIGHUP) failed:
	// the mount serves the servers it had.
	Reload *ReloadStatus `json:"reload,omitempty"`
}

// CacheStatus is the store's counters: how reads were served.
type CacheStatus struct {
	MemoryBytes   int64  `json:"memory_bytes"`
	MemoryHits    uint64 `json:"memory_hits"`
	DiskLoads     uint64 `json:"disk_loads"`
	Discards      uint64 `json:"discards"`
	PendingWrites int64  `json:"pending_writes"`
}

// A ReloadStatus is status.json's "reload": the last reload failed, and
// why. It is absent once a reload succeeds.
type ReloadStatus struct {
	At    time.Time `json:"at"`
	Error string    `json:"error"`
}
