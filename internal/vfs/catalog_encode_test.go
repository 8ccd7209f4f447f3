package vfs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/resolver"
	"github.com/skillfs/skillfs/verify"
)

// encodeSavedWithEncoder is catalog.json as it was written before
// savedCatalog.encode: one json.Encoder, no HTML escaping.
func encodeSavedWithEncoder(sc savedCatalog) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(sc)
	return buf.Bytes(), err
}

func savedCatalogs() []savedCatalog {
	at := time.Date(2026, 12, 7, 2, 0, 0, 123, time.UTC)
	plain := skill.Entry{URI: "skill://pdf/SKILL.md", Frontmatter: map[string]any{"name": "pdf", "description": "Fill <forms> & \"sign\" — ünïcode\u2028"},
		Resources: []skill.Resource{{URI: "skill://pdf/SKILL.md", Digest: skill.Digest(fmt.Sprintf("sha256:%064x", 1)), Size: 12, HasSize: true}, {URI: "skill://pdf/x.sh", Digest: skill.Digest(fmt.Sprintf("sha256:%064x", 2))}}}
	nested := skill.Entry{URI: "skill://a/b/SKILL.md", Frontmatter: map[string]any{"name": "b", "metadata": map[string]any{"n": json.Number("1.50"), "list": []any{true, nil, "x", 2.5}}}}
	dynamic := skill.Entry{URI: "skill://d/SKILL.md", Frontmatter: map[string]any{"name": "d"}, Manifest: skill.Dynamic}
	noFM := skill.Entry{URI: "skill://e/SKILL.md"}
	// An int is outside appendJSON's common shape: the slow path writes it.
	slow := skill.Entry{URI: "skill://s/SKILL.md", Frontmatter: map[string]any{"name": "s", "count": 7}}
	rejected := []resolver.Rejection{{URI: "skill://r/SKILL.md", Reason: verify.Reason("bad-name"), Detail: "name <x> & y"}}
	return []savedCatalog{
		{Version: savedCatalogVersion, At: at, CacheScope: resolver.ScopePublic, Entries: []skill.Entry{}},
		{Version: savedCatalogVersion, At: at, CacheScope: resolver.ScopePublic, Entries: []skill.Entry{plain}},
		{Version: savedCatalogVersion, At: at, Truncated: "stopped <after> 3 pages", CacheScope: resolver.ScopePrivate, Credentials: "env:TOKEN",
			Entries: []skill.Entry{plain, nested, dynamic, noFM, slow}, Rejected: rejected},
	}
}

// TestSavedCatalogEncoding: savedCatalog.encode writes the bytes a
// json.Encoder without HTML escaping writes, so what the Saver compares
// and what loadSaved reads are as before.
func TestSavedCatalogEncoding(t *testing.T) {
	for i, sc := range savedCatalogs() {
		want, err := encodeSavedWithEncoder(sc)
		if err != nil {
			t.Fatal(err)
		}
		for _, hint := range []int{0, len(want)} {
			got, err := sc.encode(hint)
			if err != nil {
				t.Fatalf("catalog %d: %v", i, err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("catalog %d, hint %d:\n got %s\nwant %s", i, hint, got, want)
			}
		}
	}
}

// BenchmarkSavedCatalogEncode: 1,000 entries of the common shape, encode
// against the json.Encoder it replaces, in the same process.
func BenchmarkSavedCatalogEncode(b *testing.B) {
	sc := savedCatalog{Version: savedCatalogVersion, At: time.Now(), CacheScope: resolver.ScopePublic}
	for i := range 1000 {
		e := skill.Entry{URI: fmt.Sprintf("skill://skill-%04d/SKILL.md", i), Frontmatter: map[string]any{"name": fmt.Sprintf("skill-%04d", i), "description": "A skill for the benchmark, with a description of a usual length for a catalog entry."}}
		for j := range 4 {
			e.Resources = append(e.Resources, skill.Resource{URI: fmt.Sprintf("skill://skill-%04d/f%d", i, j), Digest: skill.Digest(fmt.Sprintf("sha256:%064x", i*4+j)), Size: 4096, HasSize: true})
		}
		sc.Entries = append(sc.Entries, e)
	}
	want, _ := encodeSavedWithEncoder(sc)
	b.Run("encoder", func(b *testing.B) {
		for b.Loop() {
			encodeSavedWithEncoder(sc)
		}
	})
	b.Run("append", func(b *testing.B) {
		for b.Loop() {
			sc.encode(len(want))
		}
	})
}
