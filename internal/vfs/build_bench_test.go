package vfs

import (
	"fmt"
	"testing"
	"time"

	"github.com/skillfs/skillfs/resolver"
	"github.com/skillfs/skillfs/verify"
)

// benchCatalog is a listing shaped like the bench's: skills in groups of
// 100, each with SKILL.md and four more files.
func benchCatalog(b *testing.B, n int) *resolver.Catalog {
	cat := &resolver.Catalog{At: time.Now()}
	for i := range n {
		dir := fmt.Sprintf("skill://group-%03d/skill-%05d", i/100, i)
		res := ""
		for k, f := range []string{"SKILL.md", "reference.md", "scripts/run.sh", "examples/one.md", "data/table.csv"} {
			if k > 0 {
				res += ","
			}
			res += fmt.Sprintf(`{"uri":%q,"digest":"sha256:%064x","size":%d}`, dir+"/"+f, i*7+k, 1000+k*313)
		}
		raw := fmt.Appendf(nil, `{"uri":%q,"frontmatter":{"name":"skill-%05d","description":"Benchmark skill %d."},"resources":[%s]}`, dir+"/SKILL.md", i, i, res)
		s, err := verify.DecodeEntry(raw, verify.EntryOptions{})
		if err != nil {
			b.Fatal(err)
		}
		cat.Skills = append(cat.Skills, s)
		cat.Resources += len(s.Files)
	}
	return cat
}

// BenchmarkBuildTree is the tree of a 10,000-skill catalog built from
// scratch, with a time book, as the first live catalog of a mount is.
func BenchmarkBuildTree(b *testing.B) {
	cat := benchCatalog(b, 10000)
	b.ReportAllocs()
	for b.Loop() {
		times := newTimeBook(nil, nil)
		times.loadOnce.Do(func() {})
		now := time.Now()
		times.track(cat, now)
		buildGated("bench", cat, "live", nil, now, nil, nil, times)
	}
}
