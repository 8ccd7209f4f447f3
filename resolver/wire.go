package resolver

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SEP-2640 method names and the extension identifier.
const (
	methodList    = "skills/list"
	methodGet     = "skills/get"
	methodReadDir = "resources/directory/read"
	extensionID   = "io.modelcontextprotocol/skills"
	mimeDirectory = "inode/directory"
)

// Results keep their entries as raw JSON so that one malformed entry is
// rejected on its own instead of failing the page it came in.

type listParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type listResult struct {
	mcp.ResultBase
	Skills     []json.RawMessage `json:"skills"`
	NextCursor string            `json:"nextCursor,omitempty"`
	TTLMs      *int64            `json:"ttlMs,omitempty"`
	CacheScope string            `json:"cacheScope,omitempty"`
}

type getParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

type getResult struct {
	mcp.ResultBase
	Skill json.RawMessage `json:"skill"`
}

type readDirParams struct {
	mcp.ParamsBase
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

type readDirResult struct {
	mcp.ResultBase
	Resources  []json.RawMessage `json:"resources"`
	NextCursor string            `json:"nextCursor,omitempty"`
	CacheScope string            `json:"cacheScope,omitempty"`
}

type dirChild struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType"`
}

func registerMethods(c *mcp.Client) error {
	if err := mcp.AddSendingCustomMethod[*listParams, *listResult](c, methodList); err != nil {
		return err
	}
	if err := mcp.AddSendingCustomMethod[*getParams, *getResult](c, methodGet); err != nil {
		return err
	}
	return mcp.AddSendingCustomMethod[*readDirParams, *readDirResult](c, methodReadDir)
}
