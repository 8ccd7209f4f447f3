package hostile

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/skillfs/skillfs/internal/skill"
)

func fuzzServer(f *testing.F, mode string) *Server {
	f.Helper()
	s, err := New(Options{Fixtures: []string{Stale, TooManyResources, EndlessDirCursor, EscapingChildren}, Mode: mode, PageSize: 3})
	if err != nil {
		f.Fatal(err)
	}
	return s
}

func wantInvalidParams(t *testing.T, what string, err error) {
	t.Helper()
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("%s: %v, want -32602", what, err)
	}
}

// FuzzListCursor: whatever cursor a client sends, skills/list answers a
// JSON page whose next cursor differs from the one sent, or -32602. Only
// the modes' tail pages may be other than an array of entries.
func FuzzListCursor(f *testing.F) {
	modes := []string{"", ModeEndlessList, ModeMalformedList}
	servers := make([]*Server, len(modes))
	for i, m := range modes {
		servers[i] = fuzzServer(f, m)
	}
	for _, seed := range []string{"", "list:3", "list:0", "list:-3", "list:99", "list:3x", "endless:1", "endless:0", "endless:100000000", "malformed:object", "bulk", "dir:3"} {
		for i := range modes {
			f.Add(uint8(i), seed)
		}
	}
	f.Fuzz(func(t *testing.T, mode uint8, cursor string) {
		s := servers[int(mode)%len(servers)]
		page, next, err := s.listPage(cursor)
		if err != nil {
			wantInvalidParams(t, "cursor "+cursor, err)
			return
		}
		if !json.Valid(page) || (next != "" && next == cursor) {
			t.Fatalf("cursor %q: page valid %v, next %q", cursor, json.Valid(page), next)
		}
		if cursor == "malformed:object" {
			return
		}
		var entries []json.RawMessage
		if err := json.Unmarshal(page, &entries); err != nil || len(entries) == 0 {
			t.Fatalf("cursor %q: %d entries (%v)", cursor, len(entries), err)
		}
	})
}

// FuzzReadDir: any directory URI and cursor get children or -32602, and a
// directory that ends does so within a bounded number of pages.
func FuzzReadDir(f *testing.F) {
	s := fuzzServer(f, "")
	for _, seed := range [][2]string{
		{"skill://honest-a", ""}, {"skill://honest-a", "dir:1"}, {"skill://too-many-resources/files", "dir:510"},
		{"skill://endless-dir-cursor", "dir-endless:7"}, {"skill://endless-dir-cursor", "dir:1"},
		{"skill://escaping-children", ""}, {"skill://honest-a/SKILL.md", ""}, {"file:///etc", ""}, {"", ""},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, uri, cursor string) {
		res, err := s.readDir(context.Background(), nil, &readDirParams{ReadDirParams: skill.ReadDirParams{URI: uri, Cursor: cursor}})
		if err != nil {
			wantInvalidParams(t, uri+" "+cursor, err)
			return
		}
		if res.NextCursor == cursor && cursor != "" {
			t.Fatalf("%s: cursor %q returned again", uri, cursor)
		}
		if uri == "skill://endless-dir-cursor" {
			return
		}
		for range 1000 {
			if res.NextCursor == "" {
				return
			}
			res, err = s.readDir(context.Background(), nil, &readDirParams{ReadDirParams: skill.ReadDirParams{URI: uri, Cursor: res.NextCursor}})
			if err != nil {
				t.Fatalf("%s: the server's own cursor is refused: %v", uri, err)
			}
		}
		t.Fatalf("%s: more than 1000 pages", uri)
	})
}

// FuzzEnvironment: Main's environment parser never accepts a page size
// that is not a positive number, and keeps every fixture name it is given.
func FuzzEnvironment(f *testing.F) {
	for _, seed := range [][2]string{{"stale,rotating", "3"}, {"", ""}, {" , stale ,", "0"}, {"x", "-1"}, {"a,,b", "1e3"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, fixtures, pageSize string) {
		env := map[string]string{EnvFixtures: fixtures, EnvPageSize: pageSize}
		o, _, err := optionsFromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		if err != nil {
			return
		}
		if pageSize != "" && o.PageSize <= 0 {
			t.Fatalf("page size %q accepted as %d", pageSize, o.PageSize)
		}
		if o.Fixtures == nil {
			t.Fatal("a set fixtures variable gave nil (all fixtures)")
		}
		for _, name := range o.Fixtures {
			if name == "" {
				t.Fatalf("empty fixture name from %q", fixtures)
			}
		}
	})
}
