package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
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
