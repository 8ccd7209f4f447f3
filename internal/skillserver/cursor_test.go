package skillserver_test

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestForeignCursors: every paged method answers -32602 to a cursor it did
// not give for that request, instead of an empty last page.
func TestForeignCursors(t *testing.T) {
	fx := newFixture(t, 3)
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			p := startStdio(t, fx.dir, era, "--page-size", "1")
			ctx := t.Context()
			list, err := mcp.CallCustomMethod[*listParams, *listResult](ctx, p.cs, "skills/list", &listParams{})
			if err != nil || list.NextCursor == "" {
				t.Fatalf("skills/list: %v, next cursor %q", err, list.NextCursor)
			}
			dirA, err := mcp.CallCustomMethod[*dirParams, *dirResult](ctx, p.cs, "resources/directory/read", &dirParams{URI: "skill://solo-00"})
			if err != nil || dirA.NextCursor == "" {
				t.Fatalf("directory read: %v", err)
			}
			dirB, err := mcp.CallCustomMethod[*dirParams, *dirResult](ctx, p.cs, "resources/directory/read", &dirParams{URI: "skill://team-1/skill-01"})
			if err != nil || dirB.NextCursor == "" {
				t.Fatalf("directory read: %v", err)
			}
			res, err := p.cs.ListResources(ctx, &mcp.ListResourcesParams{})
			if err != nil || res.NextCursor == "" {
				t.Fatalf("resources/list: %v", err)
			}
			// The cursors given work where they were given.
			if _, err := mcp.CallCustomMethod[*listParams, *listResult](ctx, p.cs, "skills/list", &listParams{Cursor: list.NextCursor}); err != nil {
				t.Errorf("skills/list with its own cursor: %v", err)
			}
			if _, err := mcp.CallCustomMethod[*dirParams, *dirResult](ctx, p.cs, "resources/directory/read", &dirParams{URI: "skill://solo-00", Cursor: dirA.NextCursor}); err != nil {
				t.Errorf("directory read with its own cursor: %v", err)
			}
			bad := []string{"garbage", "!!", "AAAA", "c2tpbGw6Ly9zb2xvLTAwL1NLSUxMLm1k" /* base64 of a URI: an old cursor */}
			for _, c := range append(bad, dirA.NextCursor, res.NextCursor) {
				_, err := mcp.CallCustomMethod[*listParams, *listResult](ctx, p.cs, "skills/list", &listParams{Cursor: c})
				wantInvalidParams(t, "skills/list cursor "+c, err)
			}
			for _, c := range append(bad, list.NextCursor, dirB.NextCursor, res.NextCursor) {
				_, err := mcp.CallCustomMethod[*dirParams, *dirResult](ctx, p.cs, "resources/directory/read", &dirParams{URI: "skill://solo-00", Cursor: c})
				wantInvalidParams(t, "resources/directory/read cursor "+c, err)
			}
			for _, c := range append(bad, list.NextCursor, dirA.NextCursor) {
				_, err := p.cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: c})
				wantInvalidParams(t, "resources/list cursor "+c, err)
			}
		})
	}
}
