package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillfs/skillfs/internal/skill"
)

type fixedSkills []Skill

func (f fixedSkills) Skills(context.Context) ([]Skill, error) { return f, nil }

type clientListParams struct {
	mcp.ParamsBase
	skill.ListParams
}

type clientListResult struct {
	mcp.ResultBase
	skill.ListResult[json.RawMessage]
}

type clientGetParams struct {
	mcp.ParamsBase
	skill.GetParams
}

type clientGetResult struct {
	mcp.ResultBase
	skill.GetResult[json.RawMessage]
}

func TestSEPFace(t *testing.T) {
	tree := memTree{
		".skillfs/catalog.md":           testCatalog,
		"acme/billing/refunds/SKILL.md": "---\nname: refunds\ndescription: Refunds.\n---\nBody\n",
		"acme/billing/refunds/run.sh":   "#!/bin/sh\necho hi\n",
		"acme/billing/refunds/bad.txt":  "\x00EIO",
		"acme/billing/refunds/extra.md": "not in the manifest",
	}
	entry := skill.Entry{
		URI:         "skill://billing/refunds/SKILL.md",
		Frontmatter: map[string]any{"name": "refunds", "description": "Refunds.", "metadata": map[string]any{"v": json.Number("2")}},
		Manifest:    skill.Listed,
		Resources: []skill.Resource{
			{URI: "skill://billing/refunds/SKILL.md", Digest: skill.Digest("sha256:" + strings.Repeat("a", 64)), Size: 49, HasSize: true},
			{URI: "skill://billing/refunds/run.sh", Digest: skill.Digest("sha256:" + strings.Repeat("b", 64)), Size: 18, HasSize: true},
			{URI: "skill://billing/refunds/bad.txt", Digest: skill.Digest("sha256:" + strings.Repeat("c", 64)), Size: 3, HasSize: true},
		},
	}
	skills := fixedSkills{{Label: "acme", Path: "acme/billing/refunds/SKILL.md", Entry: entry,
		Files: []string{"acme/billing/refunds/SKILL.md", "acme/billing/refunds/run.sh", "acme/billing/refunds/bad.txt"}}}
	_, cs := connect(t, tree, Options{Skills: skills})
	ctx := t.Context()

	if _, ok := cs.InitializeResult().Capabilities.Extensions[skill.ExtensionID]; !ok {
		t.Errorf("the skills extension is not declared: %+v", cs.InitializeResult().Capabilities)
	}
	list, err := mcp.CallCustomMethod[*clientListParams, *clientListResult](ctx, cs, skill.MethodList, &clientListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Skills) != 1 {
		t.Fatalf("skills/list: %d skills", len(list.Skills))
	}
	want := `{"uri":"skill://acme/billing/refunds/SKILL.md","frontmatter":{"description":"Refunds.","metadata":{"v":2},"name":"refunds"},"resources":[` +
		`{"uri":"skill://acme/billing/refunds/SKILL.md","digest":"sha256:` + strings.Repeat("a", 64) + `","size":49},` +
		`{"uri":"skill://acme/billing/refunds/run.sh","digest":"sha256:` + strings.Repeat("b", 64) + `","size":18},` +
		`{"uri":"skill://acme/billing/refunds/bad.txt","digest":"sha256:` + strings.Repeat("c", 64) + `","size":3}]}`
	want = string(compactJSON(t, json.RawMessage(want)))
	if got := string(compactJSON(t, list.Skills[0])); got != want {
		t.Errorf("skills/list entry\n got %s\nwant %s", got, want)
	}
	get, err := mcp.CallCustomMethod[*clientGetParams, *clientGetResult](ctx, cs, skill.MethodGet, &clientGetParams{GetParams: skill.GetParams{URI: "skill://acme/billing/refunds/SKILL.md"}})
	if err != nil || string(compactJSON(t, get.Skill)) != want {
		t.Errorf("skills/get: %v %s", err, get.Skill)
	}
	var je *jsonrpc.Error
	for _, uri := range []string{"skill://billing/refunds/SKILL.md", "skill://acme/nope/SKILL.md", "file:///etc/passwd"} {
		_, err := mcp.CallCustomMethod[*clientGetParams, *clientGetResult](ctx, cs, skill.MethodGet, &clientGetParams{GetParams: skill.GetParams{URI: uri}})
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("skills/get %s: %v, want -32602", uri, err)
		}
	}

	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://acme/billing/refunds/run.sh"})
	if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != tree["acme/billing/refunds/run.sh"] {
		t.Errorf("resources/read run.sh: %v %+v", err, res)
	}
	for _, uri := range []string{"skill://acme/billing/refunds/extra.md", "skill://acme/billing/refunds/bad.txt", "skill://.skillfs/catalog.md"} {
		if res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
			t.Errorf("resources/read %s: %+v, want an error", uri, res.Contents)
		}
	}
}

func compactJSON(t *testing.T, raw json.RawMessage) []byte {
	t.Helper()
	var v any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return b
}

type clientReadDirParams struct {
	mcp.ParamsBase
	skill.ReadDirParams
}

type clientReadDirResult struct {
	mcp.ResultBase
	skill.ReadDirResult[skill.DirChild]
}

// TestSEPDirectoryRead: resources/directory/read walks exactly the files
// skills/list names, from skill://LABEL down (a nested skill's folder
// inside its parent's), pages by a cursor bound to its directory, and
// refuses a file, a folder nothing listed lives in, and a foreign cursor.
func TestSEPDirectoryRead(t *testing.T) {
	d := func(c byte) skill.Digest { return skill.Digest("sha256:" + strings.Repeat(string(c), 64)) }
	outer := skill.Entry{URI: "skill://ops/SKILL.md", Frontmatter: map[string]any{"name": "ops", "description": "Operations."}, Manifest: skill.Listed,
		Resources: []skill.Resource{{URI: "skill://ops/SKILL.md", Digest: d('a'), Size: 40, HasSize: true}}}
	files := []string{"acme/ops/SKILL.md"}
	inner := skill.Entry{URI: "skill://ops/deploy/SKILL.md", Frontmatter: map[string]any{"name": "deploy", "description": "Deploys."}, Manifest: skill.Listed,
		Resources: []skill.Resource{{URI: "skill://ops/deploy/SKILL.md", Digest: d('b'), Size: 41, HasSize: true}}}
	innerFiles := []string{"acme/ops/deploy/SKILL.md"}
	for i := range PageSize + 50 {
		name := fmt.Sprintf("refs/r%03d.md", i)
		inner.Resources = append(inner.Resources, skill.Resource{URI: "skill://ops/deploy/" + name, Digest: d('c'), Size: int64(i), HasSize: true})
		innerFiles = append(innerFiles, "acme/ops/deploy/"+name)
	}
	skills := fixedSkills{
		{Label: "acme", Path: "acme/ops/SKILL.md", Entry: outer, Files: files},
		{Label: "acme", Path: "acme/ops/deploy/SKILL.md", Entry: inner, Files: innerFiles},
	}
	_, cs := connect(t, memTree{".skillfs/catalog.md": testCatalog}, Options{Skills: skills})
	ctx := t.Context()
	if got := skill.SettingsOf(cs.InitializeResult().Capabilities.Extensions[skill.ExtensionID]); !got.DirectoryRead {
		t.Errorf("directoryRead is not declared: %+v", cs.InitializeResult().Capabilities.Extensions)
	}
	readDir := func(uri, cursor string) (*clientReadDirResult, error) {
		return mcp.CallCustomMethod[*clientReadDirParams, *clientReadDirResult](ctx, cs, skill.MethodReadDir,
			&clientReadDirParams{ReadDirParams: skill.ReadDirParams{URI: uri, Cursor: cursor}})
	}
	names := func(cs []skill.DirChild) string {
		var out []string
		for _, c := range cs {
			out = append(out, fmt.Sprintf("%s %s %d %q", c.URI, c.MIMEType, c.Size, c.Description))
		}
		return strings.Join(out, "\n")
	}
	for uri, want := range map[string]string{
		"skill://acme":     "skill://acme/ops inode/directory 0 \"\"",
		"skill://acme/ops": "skill://acme/ops/SKILL.md text/markdown 40 \"Operations.\"\nskill://acme/ops/deploy inode/directory 0 \"\"",
	} {
		res, err := readDir(uri, "")
		if err != nil {
			t.Errorf("directory read %s: %v", uri, err)
		} else if names(res.Resources) != want || res.NextCursor != "" {
			t.Errorf("directory read %s: %v\n got %s\nwant %s", uri, err, names(res.Resources), want)
		}
	}

	// skill://acme/ops/deploy holds SKILL.md and refs/; refs/ holds 150
	// files, read in two pages.
	var all []skill.DirChild
	cursor, pages := "", 0
	for {
		res, err := readDir("skill://acme/ops/deploy/refs", cursor)
		if err != nil {
			t.Fatal(err)
		}
		all, pages = append(all, res.Resources...), pages+1
		if cursor = res.NextCursor; cursor == "" {
			break
		}
		if pages > 3 {
			t.Fatal("more pages than there are files")
		}
	}
	if pages != 2 || len(all) != PageSize+50 || all[0].Name != "r000.md" || all[len(all)-1].URI != "skill://acme/ops/deploy/refs/r149.md" || all[7].Size != 7 {
		t.Errorf("refs/ in %d pages: %d children, first %+v, last %+v", pages, len(all), all[0], all[len(all)-1])
	}

	first, err := readDir("skill://acme/ops/deploy/refs", "")
	if err != nil {
		t.Fatal(err)
	}
	var je *jsonrpc.Error
	for _, tc := range []struct{ uri, cursor, why string }{
		{"skill://acme/ops/SKILL.md", "", "is a file"},
		{"skill://acme/nope", "", "no directory"},
		{"skill://ops", "", "no directory"}, // the origin's own URI, not the face's
		{"file:///etc", "", "not a skill:// URI"},
		{"", "", "needs params.uri"},
		{"skill://acme/ops", first.NextCursor, "invalid cursor"}, // another directory's
		{"skill://acme/ops/deploy/refs", "Z2FyYmFnZQ", "invalid cursor"},
	} {
		_, err := readDir(tc.uri, tc.cursor)
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.Contains(je.Message, tc.why) {
			t.Errorf("directory read %q cursor %q: %v, want -32602 saying %q", tc.uri, tc.cursor, err, tc.why)
		}
	}
	// A skills/list cursor is not a directory's, nor the reverse.
	if _, err := mcp.CallCustomMethod[*clientListParams, *clientListResult](ctx, cs, skill.MethodList,
		&clientListParams{ListParams: skill.ListParams{Cursor: first.NextCursor}}); !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("skills/list with a directory cursor: %v, want -32602", err)
	}
}
