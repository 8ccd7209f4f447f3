package skill

// The SEP-2640 wire vocabulary: the extension's identifier and settings,
// its method names, and the params and results of those methods. It is
// defined here once, for every side that speaks it: package resolver (the
// client), skillserver (the honest server), and the hostile and benchmark
// peers. None of them defines a method name or a field of these shapes on
// its own.
//
// go-sdk's custom-method API wants params and results that embed its
// ParamsBase and ResultBase, whose marker methods are unexported, and this
// package does not import go-sdk. So each side wraps a shape in a
// two-field struct of its own, e.g.
//
//	type listParams struct {
//		mcp.ParamsBase
//		skill.ListParams
//	}
//
// encoding/json flattens both embedded structs, so the wrapper's JSON is
// the shape's plus "_meta".
//
// Results are generic in what they carry where a side needs the choice: a
// server sends ListResult[Entry]; a client decodes
// ListResult[json.RawMessage], the raw form, and decodes each entry on its
// own, so that one malformed entry is refused alone instead of failing its
// page. Keep these types free of JSON methods: a MarshalJSON here would be
// promoted to the wrappers and drop their "_meta".

// ExtensionID names the extension in capabilities.extensions.
const ExtensionID = "io.modelcontextprotocol/skills"

// The extension's methods, as JSON-RPC method names.
const (
	MethodList    = "skills/list"
	MethodGet     = "skills/get"
	MethodReadDir = "resources/directory/read"
)

// ResultComplete is the resultType of every result in the 2026-07-28
// protocol that needs no further input; the older protocol has none.
const ResultComplete = "complete"

// Cache scopes (SEP-2549's cacheScope) of list and directory-read results
// in the 2026-07-28 protocol.
const (
	ScopePublic  = "public"
	ScopePrivate = "private"
)

// MIMEDirectory is the mimeType of a directory resource.
const MIMEDirectory = "inode/directory"

// Settings are the extension's settings, the value of
// capabilities.extensions[ExtensionID]. An empty object declares the
// extension with no optional features.
type Settings struct {
	// DirectoryRead: the server implements resources/directory/read.
	DirectoryRead bool `json:"directoryRead,omitempty"`
}

// SettingsOf reads the settings from the value a client decoded them into
// (the JSON data model: map[string]any for an object). Anything else, or a
// directoryRead that is not a boolean, reads as no optional features; the
// key is matched exactly, as JSON spells it.
func SettingsOf(v any) Settings {
	m, _ := v.(map[string]any)
	b, _ := m["directoryRead"].(bool)
	return Settings{DirectoryRead: b}
}

// ListParams are the params of skills/list.
type ListParams struct {
	Cursor string `json:"cursor,omitempty"`
}

// ListResult is the result of skills/list, carrying entries of type E:
// Entry to send, json.RawMessage to receive. ResultType, TTLMs and
// CacheScope belong to the 2026-07-28 protocol; the older one has none.
type ListResult[E any] struct {
	ResultType string `json:"resultType,omitempty"`
	Skills     []E    `json:"skills"`
	NextCursor string `json:"nextCursor,omitempty"`
	// TTLMs is the listing's freshness hint in milliseconds (SEP-2549).
	TTLMs      *int64 `json:"ttlMs,omitempty"`
	CacheScope string `json:"cacheScope,omitempty"`
}

// GetParams are the params of skills/get: the URI of a skill's SKILL.md.
type GetParams struct {
	URI string `json:"uri"`
}

// GetResult is the result of skills/get, carrying an entry of type E:
// Entry to send, json.RawMessage to receive.
type GetResult[E any] struct {
	ResultType string `json:"resultType,omitempty"`
	Skill      E      `json:"skill"`
	// TTLMs and CacheScope are the entry's freshness hint and cache scope
	// (SEP-2549), REQUIRED on skills/get in the 2026-07-28 protocol by the
	// Final SEP-2640 text.
	TTLMs      *int64 `json:"ttlMs,omitempty"`
	CacheScope string `json:"cacheScope,omitempty"`
}

// ReadDirParams are the params of resources/directory/read.
type ReadDirParams struct {
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

// ReadDirResult is the result of resources/directory/read, carrying
// children of type C: DirChild to send, json.RawMessage to receive.
type ReadDirResult[C any] struct {
	ResultType string `json:"resultType,omitempty"`
	Resources  []C    `json:"resources"`
	NextCursor string `json:"nextCursor,omitempty"`
	TTLMs      *int64 `json:"ttlMs,omitempty"`
	CacheScope string `json:"cacheScope,omitempty"`
}

// A DirChild is one child of a directory read: an MCP Resource, as far as
// the SEP's servers fill one in. A folder's MIMEType is MIMEDirectory.
type DirChild struct {
	URI  string `json:"uri"`
	Name string `json:"name"`
	// Description is a SKILL.md's skill description (SEP-2640, Resource
	// Metadata), or "".
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	// Size is the file's length in bytes, or 0 when not given.
	Size int64 `json:"size,omitempty"`
}
