package skillserver_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Conformance to the Final SEP-2640 text (issue 19).

// An error of the server's own goes out as JSON-RPC -32603 (Internal
// error), not as a plain error with code 0; what the client asked for
// wrongly stays -32602 (issue 19 item 2). The internal error is a served
// file replaced by a directory behind the server's back (--poll -1s: the
// server does not look, so the catalog still serves the file).
func TestInternalErrorIsJSONRPCInternalError(t *testing.T) {
	for _, tr := range transports {
		for _, era := range eras {
			t.Run(tr.name+"/"+era, func(t *testing.T) {
				dir := t.TempDir()
				for rel, body := range map[string]string{
					"alpha/SKILL.md":  "---\nname: alpha\ndescription: The alpha skill.\n---\n# alpha\n",
					"alpha/notes.txt": "notes\n",
				} {
					p := filepath.Join(dir, filepath.FromSlash(rel))
					os.MkdirAll(filepath.Dir(p), 0o755)
					if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				p := tr.start(t, dir, era, "--poll", "-1s")
				ctx := t.Context()
				const notes = "skill://alpha/notes.txt"
				if _, err := p.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: notes}); err != nil {
					t.Fatalf("resources/read %s before: %v", notes, err)
				}
				f := filepath.Join(dir, "alpha", "notes.txt")
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(f, 0o755); err != nil {
					t.Fatal(err)
				}
				_, err := p.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: notes})
				var je *jsonrpc.Error
				if !errors.As(err, &je) || je.Code != jsonrpc.CodeInternalError {
					t.Errorf("resources/read of a file that became a directory: %v (code %v), want JSON-RPC -32603", err, codeOf(err))
				}
				// The client's own mistakes stay -32602.
				_, err = mcp.CallCustomMethod[*getParams, *getResult](ctx, p.cs, "skills/get", &getParams{URI: "skill://nope/SKILL.md"})
				wantInvalidParams(t, "skills/get of an unknown skill", err)
				_, err = mcp.CallCustomMethod[*dirParams, *dirResult](ctx, p.cs, "resources/directory/read", &dirParams{URI: "skill://nope"})
				wantInvalidParams(t, "resources/directory/read of an unknown directory", err)
				_, err = p.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://alpha/unserved.txt"})
				wantInvalidParams(t, "resources/read of an unserved file", err)
			})
		}
	}
}

func codeOf(err error) any {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je.Code
	}
	return "none"
}
