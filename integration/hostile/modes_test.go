package hostile_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillfs/skillfs/integration/hostile"
	"github.com/skillfs/skillfs/internal/skill"
)

// checkHonestGenerated checks that a generated entry is a real skill:
// skills/get answers it, and its SKILL.md matches digest and size.
func checkHonestGenerated(t *testing.T, cs *mcp.ClientSession, raw json.RawMessage) {
	t.Helper()
	e := decodeEntry(t, raw)
	got, err := getSkill(t.Context(), cs, e.URI)
	if err != nil || mustJSON(t, got) != mustJSON(t, e) {
		t.Errorf("skills/get %s: %v, or another entry than listed", e.URI, err)
	}
	md, err := read(t.Context(), cs, e.URI)
	if r, _ := e.Resource(e.URI); err != nil || sha(md) != r.Digest || int64(len(md)) != r.Size {
		t.Errorf("read %s: %v, or not the listed bytes", e.URI, err)
	}
}

func TestModeEndlessList(t *testing.T) {
	cs := connect(t, newServer(t, hostile.Options{Fixtures: []string{}, Mode: hostile.ModeEndlessList}), eraNew)
	seen := map[string]bool{}
	uris := map[string]bool{}
	cursor := ""
	var last json.RawMessage
	for page := range 50 {
		res, err := mcp.CallCustomMethod[*listParams, *listResult](t.Context(), cs, "skills/list", &listParams{Cursor: cursor})
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		var entries []json.RawMessage
		if err := json.Unmarshal(res.Skills, &entries); err != nil || len(entries) == 0 {
			t.Fatalf("page %d: %d entries (%v)", page, len(entries), err)
		}
		for _, raw := range entries {
			uri := decodeEntry(t, raw).URI
			if uris[uri] {
				t.Errorf("page %d repeats %s", page, uri)
			}
			uris[uri] = true
			last = raw
		}
		if res.NextCursor == "" || seen[res.NextCursor] {
			t.Fatalf("page %d: cursor %q, seen before %v", page, res.NextCursor, seen[res.NextCursor])
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
	if !uris["skill://honest-a/SKILL.md"] || !uris["skill://endless-97/SKILL.md"] {
		t.Errorf("the endless listing lacks honest-a or endless-97")
	}
	checkHonestGenerated(t, cs, last)
}

// TestModeHugeListPage: after the catalog, one last page of at least
// Options.HugePage bytes, whose entries are real; the session that took
// it still works. The page is streamed (stream_test.go): its size and
// its entries counted, one kept. It asks for 3 MiB: each entry is at
// least HugePageEntryMin bytes, checked here, so the default page of
// HugeListPageSize/HugePageEntryMin+1 entries is at least that size too.
func TestModeHugeListPage(t *testing.T) {
	const hugePage = 3 << 20
	s := newServer(t, hostile.Options{Fixtures: []string{}, Mode: hostile.ModeHugeListPage, HugePage: hugePage})
	rc := rawSession(t, s)
	res, err := rc.call("skills/list", map[string]any{})
	var first listResult
	if err == nil && res.Error != nil {
		err = fmt.Errorf("error %d: %s", res.Error.Code, res.Error.Message)
	}
	if err == nil {
		err = json.Unmarshal(res.Result, &first)
	}
	if err != nil || first.NextCursor == "" {
		t.Fatalf("first page: %v, cursor %q", err, first.NextCursor)
	}
	var size int64
	var entries int
	var probe json.RawMessage
	next := ""
	err = rc.stream("skills/list", map[string]any{"cursor": first.NextCursor}, func(w *jsonWalker) error {
		return w.object(func(key string) error {
			switch key {
			case "skills":
				if _, err := w.peek(); err != nil {
					return err
				}
				start := w.n
				defer func() { size = w.n - start }()
				return w.array(func(i int) error {
					entries++
					if i == 123 {
						var err error
						probe, err = w.raw()
						return err
					}
					return w.skip()
				})
			case "nextCursor":
				return w.small(&next)
			}
			return w.skip()
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if size < hugePage || next != "" {
		t.Errorf("huge page: %d bytes, cursor %q; want at least %d and the last page", size, next, hugePage)
	}
	if size < int64(entries)*hostile.HugePageEntryMin {
		t.Errorf("huge page: %d entries in %d bytes, under %d bytes each", entries, size, hostile.HugePageEntryMin)
	}
	t.Logf("huge page: %d entries, %d bytes", entries, size)
	// Its entries are real, and the session is still good after it.
	checkHonestGenerated(t, connect(t, s, eraNew), probe)
	if res, err := rc.call("skills/get", map[string]any{"uri": "skill://honest-a/SKILL.md"}); err != nil {
		t.Errorf("skills/get after the huge page: %v", err)
	} else if res.Error != nil {
		t.Errorf("skills/get after the huge page: %+v", *res.Error)
	}
}

func TestModeMalformedList(t *testing.T) {
	for _, era := range []string{eraOld, eraNew} {
		t.Run(era, func(t *testing.T) {
			cs := connect(t, newServer(t, hostile.Options{Fixtures: []string{hostile.Stale}, Mode: hostile.ModeMalformedList, PageSize: 2}), era)
			ctx := t.Context()
			var pages []*listResult
			cursor := ""
			for range 10 {
				res, err := mcp.CallCustomMethod[*listParams, *listResult](ctx, cs, "skills/list", &listParams{Cursor: cursor})
				if err != nil {
					t.Fatal(err)
				}
				pages = append(pages, res)
				if res.NextCursor == "" {
					break
				}
				cursor = res.NextCursor
			}
			// honest-a and honest-b, then stale, then the object page.
			if len(pages) != 3 {
				t.Fatalf("%d pages, want 3", len(pages))
			}
			var first []json.RawMessage
			if err := json.Unmarshal(pages[0].Skills, &first); err != nil {
				t.Fatal(err)
			}
			bad := hostile.MalformedEntries()
			if len(first) != len(bad)+2 {
				t.Errorf("first page: %d entries, want %d malformed and 2 honest", len(first), len(bad))
			}
			present := map[string]bool{}
			for _, raw := range first {
				present[string(raw)] = true
			}
			for _, m := range bad {
				if !present[string(m.JSON)] {
					t.Errorf("malformed entry %q (%s) is not in the first page", truncate([]byte(m.URI)), m.Problem)
				}
				if m.URI != "" {
					if _, err := getSkill(ctx, cs, m.URI); !isCode(err, jsonrpc.CodeInvalidParams) {
						t.Errorf("skills/get of malformed %q: %v, want -32602", truncate([]byte(m.URI)), err)
					}
				}
			}
			decoded := 0
			for _, raw := range first {
				if present[string(raw)] && !isHonest(raw) {
					continue
				}
				checkHonestGenerated(t, cs, raw)
				decoded++
			}
			if decoded != 2 {
				t.Errorf("%d honest entries in the first page, want 2", decoded)
			}
			if last := bytes.TrimSpace(pages[2].Skills); len(last) == 0 || last[0] != '{' {
				t.Errorf("last page: skills %.100s, want an object", last)
			}
		})
	}
}

func isHonest(raw json.RawMessage) bool {
	return bytes.Contains(raw, []byte(`"uri":"skill://honest-`))
}

func TestMalformedEntriesAreOneFaultEach(t *testing.T) {
	for _, m := range hostile.MalformedEntries() {
		if len(m.JSON) == 0 || !json.Valid(m.JSON) || m.Problem == "" {
			t.Errorf("%q: invalid JSON or no problem", m.Problem)
		}
		if strings.Contains(m.Problem, "1 MiB") && len(m.JSON) < 1<<20 {
			t.Errorf("%q: only %d bytes", m.Problem, len(m.JSON))
		}
	}
}

func TestModeNoExtension(t *testing.T) {
	for _, era := range []string{eraOld, eraNew} {
		t.Run(era, func(t *testing.T) {
			cs := connect(t, newServer(t, hostile.Options{Fixtures: []string{}, Mode: hostile.ModeNoExtension}), era)
			if caps := cs.InitializeResult().Capabilities; caps.Extensions[skill.ExtensionID] != nil {
				t.Errorf("the extension is declared: %v", caps.Extensions)
			}
			if _, err := mcp.CallCustomMethod[*listParams, *listResult](t.Context(), cs, "skills/list", &listParams{}); !isCode(err, jsonrpc.CodeMethodNotFound) {
				t.Errorf("skills/list: %v, want -32601", err)
			}
			if _, err := read(t.Context(), cs, "skill://honest-a/SKILL.md"); err != nil {
				t.Errorf("resources/read: %v", err)
			}
		})
	}
}

func TestModeDieAfterList(t *testing.T) {
	var exited atomic.Int32
	s := newServer(t, hostile.Options{
		Fixtures: []string{},
		Mode:     hostile.ModeDieAfterList,
		Exit:     func(code int) { exited.Store(int32(code)) },
		Logger:   testLogger(t),
	})
	cs := connect(t, s, eraNew)
	if raws, _ := listAll(t, cs, 10); len(raws) != 2 {
		t.Errorf("listed %d skills, want honest-a and honest-b", len(raws))
	}
	if _, err := read(t.Context(), cs, "skill://honest-a/SKILL.md"); err == nil {
		t.Error("resources/read answered")
	}
	if got := exited.Load(); got != hostile.ExitDied {
		t.Errorf("exit code %d, want %d", got, hostile.ExitDied)
	}
	if _, err := mcp.CallCustomMethod[*listParams, *listResult](t.Context(), cs, "skills/list", &listParams{}); err == nil {
		t.Error("skills/list still answers after the server died")
	}
}
