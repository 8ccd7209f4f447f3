package hostile_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillfs/skillfs/integration/hostile"
)

// TestModeHeavyList: after the catalog, pages of exactly Heavy.Entries
// skills of Heavy.Resources resources, URIs and descriptions of the asked
// lengths, fresh cursors, and every file served with its listed digest.
func TestModeHeavyList(t *testing.T) {
	h := hostile.Heavy{Entries: 3, Resources: 7, URILength: 230, DescriptionLength: 900}
	cs := connect(t, newServer(t, hostile.Options{Fixtures: []string{}, Mode: hostile.ModeHeavyList, Heavy: h}), eraNew)
	cursor := ""
	seen := map[string]bool{}
	var last json.RawMessage
	for page := range 5 {
		res, err := mcp.CallCustomMethod[*listParams, *listResult](t.Context(), cs, "skills/list", &listParams{Cursor: cursor})
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		if res.CacheScope != "private" {
			t.Errorf("page %d: cacheScope %q, want private (the default)", page, res.CacheScope)
		}
		var entries []json.RawMessage
		if err := json.Unmarshal(res.Skills, &entries); err != nil {
			t.Fatal(err)
		}
		if page > 0 && len(entries) != h.Entries {
			t.Errorf("page %d: %d entries, want %d", page, len(entries), h.Entries)
		}
		for _, raw := range entries {
			e := decodeEntry(t, raw)
			if seen[e.URI] {
				t.Errorf("page %d repeats %s", page, e.URI)
			}
			seen[e.URI] = true
			if !strings.HasPrefix(e.URI, "skill://heavy-") {
				continue
			}
			last = raw
			if len(e.Resources) != h.Resources {
				t.Errorf("%s: %d resources, want %d", e.URI, len(e.Resources), h.Resources)
			}
			if d := e.Description(); len(d) != h.DescriptionLength {
				t.Errorf("%s: description of %d bytes, want %d", e.URI, len(d), h.DescriptionLength)
			}
			for _, r := range e.Resources[1:] {
				if n := len(r.URI); n < h.URILength-2 || n > h.URILength {
					t.Errorf("%s: %d bytes, want about %d", r.URI, n, h.URILength)
				}
			}
		}
		if res.NextCursor == "" || seen["cursor "+res.NextCursor] {
			t.Fatalf("page %d: cursor %q", page, res.NextCursor)
		}
		seen["cursor "+res.NextCursor] = true
		cursor = res.NextCursor
	}
	checkHonestGenerated(t, cs, last)
	e := decodeEntry(t, last)
	r := e.Resources[len(e.Resources)-1]
	b, err := read(t.Context(), cs, r.URI)
	if err != nil || sha(b) != r.Digest || int64(len(b)) != r.Size {
		t.Errorf("read %s: %v, or not the listed bytes", r.URI, err)
	}
	sk, files := hostile.HeavySkill(h, 0)
	if sk.Entry.URI != "skill://heavy-0/SKILL.md" || len(files) != h.Resources {
		t.Errorf("HeavySkill: %s with %d files", sk.Entry.URI, len(files))
	}
}

// TestCacheScopeOption: the cacheScope of list results is the option's.
func TestCacheScopeOption(t *testing.T) {
	for scope, want := range map[string]string{"": "private", "public": "public", "none": ""} {
		cs := connect(t, newServer(t, hostile.Options{Fixtures: []string{}, CacheScope: scope}), eraNew)
		res, err := mcp.CallCustomMethod[*listParams, *listResult](t.Context(), cs, "skills/list", &listParams{})
		if err != nil || res.CacheScope != want {
			t.Errorf("CacheScope %q: list says %q (%v), want %q", scope, res.CacheScope, err, want)
		}
	}
}

// TestHeavyEnvironment: the heavy-list shape and the scope travel to a
// re-executed server.
func TestHeavyEnvironment(t *testing.T) {
	o := hostile.Options{Mode: hostile.ModeHeavyList, Heavy: hostile.Heavy{Entries: 1, Resources: 2, URILength: 3, DescriptionLength: 4}, CacheScope: "public"}
	env := strings.Join(o.Environ(), " ")
	for _, want := range []string{hostile.EnvHeavy + "=1,2,3,4", hostile.EnvCacheScope + "=public", hostile.EnvMode + "=heavy-list"} {
		if !strings.Contains(env, want) {
			t.Errorf("environment %q lacks %q", env, want)
		}
	}
}
