package verify

import (
	"fmt"
	"golang.org/x/text/unicode/norm"
	"testing"
)

// benchEntry is an entry shaped like the bench's generated skills: a
// name and description, SKILL.md and four more files with sizes.
func benchEntry(i int) []byte {
	dir := fmt.Sprintf("skill://group-%03d/skill-%05d", i%100, i)
	name := fmt.Sprintf("skill-%05d", i)
	res := ""
	for k, f := range []string{"SKILL.md", "reference.md", "scripts/run.sh", "examples/one.md", "data/table.csv"} {
		if k > 0 {
			res += ","
		}
		res += fmt.Sprintf(`{"uri":%q,"digest":"sha256:%064x","size":%d}`, dir+"/"+f, i*7+k, 1000+k*313)
	}
	return fmt.Appendf(nil, `{"uri":%q,"frontmatter":{"name":%q,"description":"Benchmark skill %d of 10000 (seed 1); generated filler text."},"resources":[%s]}`, dir+"/SKILL.md", name, i, res)
}

// BenchmarkDecodeEntry is the per-entry cost of a listing: decode and
// check one typical entry.
func BenchmarkDecodeEntry(b *testing.B) {
	raws := make([][]byte, 1000)
	for i := range raws {
		raws[i] = benchEntry(i)
	}
	if _, err := DecodeEntry(raws[0], EntryOptions{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := DecodeEntry(raws[i%len(raws)], EntryOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// The ASCII shortcut folds as the full Unicode fold does.
func TestFoldASCIIAgrees(t *testing.T) {
	f := newFoldSet()
	var all []byte
	for c := 0; c < 0x80; c++ {
		all = append(all, byte(c))
	}
	for _, s := range []string{string(all), "SKILL.md", "Read-Me_2.TXT", "already lower", ""} {
		got, ok := foldASCII(s)
		want := norm.NFC.String(f.caser.String(norm.NFD.String(s)))
		if !ok || got != want {
			t.Errorf("foldASCII(%q) = %q, %v; the full fold gives %q", s, got, ok, want)
		}
	}
	if _, ok := foldASCII("Straße"); ok {
		t.Errorf("foldASCII took a non-ASCII string")
	}
}

// canonical gives what String gives, with or without the shortcut.
func TestCanonicalShortcut(t *testing.T) {
	for _, raw := range []string{"skill://a/b/SKILL.md", "SKILL://a/b/c", "skill://a/b%20c/d", "skill://Ünï/x", "skill://a/b%41", "github://o/r/x.md"} {
		u, err := ParseURI(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := u.canonical(raw); got != u.String() {
			t.Errorf("canonical(%q) = %q, String %q", raw, got, u.String())
		}
	}
}
