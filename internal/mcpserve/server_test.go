package mcpserve

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillfs/skillfs/internal/render"
	"github.com/skillfs/skillfs/internal/skill"
)

// memTree is a Tree of fixed files; a file whose content is "\x00EIO"
// fails to read as a mount's unverifiable file does.
type memTree map[string]string

func (m memTree) isDir(p string) bool {
	if p == "" {
		return true
	}
	for k := range m {
		if strings.HasPrefix(k, p+"/") {
			return true
		}
	}
	return false
}

func (m memTree) Stat(_ context.Context, p string) (Info, error) {
	if c, ok := m[p]; ok {
		return Info{Name: path.Base(p), Size: int64(len(c))}, nil
	}
	if m.isDir(p) {
		return Info{Name: path.Base(p), Dir: true}, nil
	}
	return Info{}, fs.ErrNotExist
}

func (m memTree) ReadDir(_ context.Context, p string) ([]Info, error) {
	if _, ok := m[p]; ok {
		return nil, ErrNotDir
	}
	if !m.isDir(p) {
		return nil, fs.ErrNotExist
	}
	seen := map[string]Info{}
	prefix := p + "/"
	if p == "" {
		prefix = ""
	}
	for k, c := range m {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		name, _, dir := strings.Cut(rest, "/")
		seen[name] = Info{Name: name, Dir: dir, Size: int64(len(c))}
	}
	var out []Info
	for _, in := range seen {
		out = append(out, in)
	}
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (m memTree) ReadFile(_ context.Context, p string) ([]byte, error) {
	c, ok := m[p]
	switch {
	case !ok && m.isDir(p):
		return nil, ErrIsDir
	case !ok:
		return nil, fs.ErrNotExist
	case c == "\x00EIO":
		return nil, errors.New("read acme/bad/SKILL.md: digest-mismatch: sha256 differs\x1b[31m")
	}
	return []byte(c), nil
}

var testCatalog = render.CatalogInstructions + "\n\n" +
	"<available_skills>\n<skill>\n<server>acme</server>\n<name>refunds</name>\n<description>Refunds.</description>\n" +
	"<location>/mnt/skills/acme/billing/refunds/SKILL.md</location>\n</skill>\n</available_skills>\n"

func connect(t *testing.T, tree Tree, opts Options) (*Server, *mcp.ClientSession) {
	t.Helper()
	ctx := t.Context()
	s, err := New(ctx, tree, opts)
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	sctx, stop := context.WithCancel(ctx)
	go func() { done <- s.Serve(sctx, st) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil)
	if err := mcp.AddSendingCustomMethod[*clientListParams, *clientListResult](c, skill.MethodList); err != nil {
		t.Fatal(err)
	}
	if err := mcp.AddSendingCustomMethod[*clientGetParams, *clientGetResult](c, skill.MethodGet); err != nil {
		t.Fatal(err)
	}
	if err := mcp.AddSendingCustomMethod[*clientReadDirParams, *clientReadDirResult](c, skill.MethodReadDir); err != nil {
		t.Fatal(err)
	}
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		stop()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		stop()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return s, cs
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			t.Fatalf("%s %v: content %T, want text", tool, args, c)
		}
		b.WriteString(tc.Text)
		b.WriteString("\x00")
	}
	return strings.TrimSuffix(b.String(), "\x00"), res.IsError
}

func TestTools(t *testing.T) {
	big := strings.Repeat("é", MaxReadBytes) // 2 bytes a character: two chunks and a bit
	tree := memTree{
		".skillfs/catalog.md":           testCatalog,
		"acme/billing/refunds/SKILL.md": "---\nname: refunds\ndescription: Refunds.\n---\nBody\n",
		"acme/billing/refunds/run.sh":   "#!/bin/sh\necho hi\n",
		"acme/billing/refunds/logo.png": "\x89PNG\x00\x01",
		"acme/billing/refunds/big.md":   big,
		"acme/bad/SKILL.md":             "\x00EIO",
		"acme/odd/x\u202eb.md":          "x",
	}
	s, cs := connect(t, tree, Options{Root: "/mnt/skills"})
	init := cs.InitializeResult()
	if init.Instructions != s.Instructions || !strings.HasPrefix(init.Instructions, Paragraph) {
		t.Fatalf("instructions %q", init.Instructions)
	}
	if !strings.Contains(init.Instructions, "<server>acme</server>\n<name>refunds</name>\n<description>Refunds.</description>\n<location>acme/billing/refunds/SKILL.md</location>") || strings.Contains(init.Instructions, "file-reading tool") {
		t.Errorf("instructions do not carry the catalog with relative locations:\n%s", init.Instructions)
	}

	tests := []struct {
		tool    string
		args    map[string]any
		want    string // the whole text, or with isErr a part of it
		isError bool
	}{
		{ToolList, map[string]any{"path": ""}, "\"\" (the root): 2 entries\n.skillfs/\nacme/\n", false},
		{ToolList, map[string]any{"path": "acme/billing/refunds"}, "\"acme/billing/refunds\": 4 entries\nSKILL.md (49 bytes)\nbig.md (524288 bytes)\nlogo.png (6 bytes)\nrun.sh (18 bytes)\n", false},
		{ToolList, map[string]any{"path": "/mnt/skills/acme/"}, "\"acme\": 3 entries\nbad/\nbilling/\nodd/\n", false},
		{ToolList, map[string]any{"path": "acme/odd"}, "\"acme/odd\": 1 entries\n\"x\\u202eb.md\" (1 bytes)\n", false},
		{ToolRead, map[string]any{"path": "acme/billing/refunds/SKILL.md"}, tree["acme/billing/refunds/SKILL.md"], false},
		{ToolRead, map[string]any{"path": "acme/billing/refunds/run.sh"}, tree["acme/billing/refunds/run.sh"], false},
		{ToolRead, map[string]any{"path": "acme/billing/refunds/run.sh", "offset": 10, "length": 4}, "echo\x00[skillfs: bytes 10 to 14 of 18 of \"acme/billing/refunds/run.sh\"; call read_skill_file with offset=14 for the rest]", false},
		{ToolRead, map[string]any{"path": "acme/billing/refunds/logo.png"}, "[skillfs: \"acme/billing/refunds/logo.png\" is not UTF-8 text (6 bytes); bytes 0 to 6 follow, base64-encoded]\x00" + base64.StdEncoding.EncodeToString([]byte(tree["acme/billing/refunds/logo.png"])), false},
		{ToolRead, map[string]any{"path": "acme/nope/SKILL.md"}, "no such file or directory: \"acme/nope/SKILL.md\"", true},
		{ToolRead, map[string]any{"path": "acme/billing"}, "is a directory: \"acme/billing\"", true},
		{ToolRead, map[string]any{"path": ""}, "is a directory", true},
		{ToolList, map[string]any{"path": "acme/billing/refunds/SKILL.md"}, "not a directory: \"acme/billing/refunds/SKILL.md\"", true},
		{ToolRead, map[string]any{"path": "acme/bad/SKILL.md"}, "read failed: \"acme/bad/SKILL.md\": read acme/bad/SKILL.md: digest-mismatch: sha256 differs<U+001B>[31m", true},
		{ToolRead, map[string]any{"path": "../etc/passwd"}, "has a \"..\" name", true},
		{ToolRead, map[string]any{"path": "/etc/passwd"}, "is absolute", true},
		{ToolRead, map[string]any{"path": "acme//x"}, "empty name", true},
		{ToolRead, map[string]any{"path": "acme/x", "offset": -1}, "must not be negative", true},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.tool, tc.args), func(t *testing.T) {
			got, isErr := call(t, cs, tc.tool, tc.args)
			if isErr != tc.isError {
				t.Fatalf("isError = %v, want %v: %q", isErr, tc.isError, got)
			}
			if tc.isError && !strings.Contains(got, tc.want) || !tc.isError && got != tc.want {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}

	// A large text file comes in chunks that end on character boundaries
	// and add up to the file.
	var whole strings.Builder
	off := 0
	for range 4 {
		got, isErr := call(t, cs, ToolRead, map[string]any{"path": "acme/billing/refunds/big.md", "offset": off})
		if isErr {
			t.Fatal(got)
		}
		text, note, _ := strings.Cut(got, "\x00")
		whole.WriteString(text)
		off += len(text)
		if !strings.Contains(note, "for the rest") {
			break
		}
		if len(text) > MaxReadBytes {
			t.Fatalf("a chunk of %d bytes", len(text))
		}
	}
	if whole.String() != big {
		t.Errorf("the chunks add up to %d bytes, not the file's %d", whole.Len(), len(big))
	}
}

func TestListIsBounded(t *testing.T) {
	tree := memTree{".skillfs/catalog.md": testCatalog}
	for i := range MaxListEntries + 5 {
		tree[fmt.Sprintf("acme/s%03d/SKILL.md", i)] = "x"
	}
	_, cs := connect(t, tree, Options{})
	got, _ := call(t, cs, ToolList, map[string]any{"path": "acme"})
	if n := strings.Count(got, "\n"); n != MaxListEntries+2 || !strings.Contains(got, "5 more entries not shown; call list_skill_files with offset=200") {
		t.Errorf("%d lines:\n%s", n, got[len(got)-200:])
	}
	got, _ = call(t, cs, ToolList, map[string]any{"path": "acme", "offset": 200})
	if got != "\"acme\": 205 entries\ns200/\ns201/\ns202/\ns203/\ns204/\n" {
		t.Errorf("the second page: %q", got)
	}
}

func TestInstructionsAreBounded(t *testing.T) {
	cat := "intro\n\n" + strings.Repeat("- **`x`** (`acme/x/SKILL.md`, from server `acme`): y\n", 2000)
	got := instructions([]byte(cat), "")
	if len(got) > MaxInstructionsBytes || !strings.Contains(got, "the catalog stops here") {
		t.Errorf("%d bytes, ends %q", len(got), got[len(got)-120:])
	}
}
