package resolver

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillfs/skillfs/internal/skill"
)

// go-sdk's wrappers around the SEP-2640 shapes of package skill. Results
// are decoded in their raw form: entries and directory children stay
// json.RawMessage, so that one malformed item is rejected on its own
// instead of failing the page it came in.

type listParams struct {
	mcp.ParamsBase
	skill.ListParams
}

type listResult struct {
	mcp.ResultBase
	skill.ListResult[json.RawMessage]
}

type getParams struct {
	mcp.ParamsBase
	skill.GetParams
}

type getResult struct {
	mcp.ResultBase
	skill.GetResult[json.RawMessage]
}

type readDirParams struct {
	mcp.ParamsBase
	skill.ReadDirParams
}

type readDirResult struct {
	mcp.ResultBase
	skill.ReadDirResult[json.RawMessage]
}

func registerMethods(c *mcp.Client) error {
	if err := mcp.AddSendingCustomMethod[*listParams, *listResult](c, skill.MethodList); err != nil {
		return err
	}
	if err := mcp.AddSendingCustomMethod[*getParams, *getResult](c, skill.MethodGet); err != nil {
		return err
	}
	return mcp.AddSendingCustomMethod[*readDirParams, *readDirResult](c, skill.MethodReadDir)
}
