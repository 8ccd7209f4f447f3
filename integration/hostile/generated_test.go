package hostile

import (
	"bytes"
	"strings"
	"testing"
)

// TestHeavyFileAsSkill holds heavyFile, which resources/read uses, to the
// files of heavySkill, which the listing describes: the same bytes at
// every URI, and no file at a URI near one.
func TestHeavyFileAsSkill(t *testing.T) {
	for _, h := range []Heavy{{}, {Resources: 7, URILength: 40}, {Resources: 3, URILength: 700}} {
		h = h.withDefaults()
		for _, n := range []int{0, 7, 123456} {
			d := heavySkill(h, n)
			if len(d.files) != h.Resources {
				t.Fatalf("heavy-%d: %d files, want %d", n, len(d.files), h.Resources)
			}
			for _, want := range d.files {
				got := heavyFile(h, n, want.uri)
				if got == nil || got.uri != want.uri || !bytes.Equal(got.gen(), want.gen()) || got.read != Honest {
					t.Fatalf("heavyFile %s: %v, not the skill's file", want.uri, got)
				}
			}
			last := d.files[len(d.files)-1].uri
			i := strings.LastIndex(last, "f-")
			for _, uri := range []string{
				strings.Replace(last, "heavy-", "heavy-1", 1),
				last[:i] + "f-0" + last[i+2:],
				last[:i] + "f-+" + last[i+3:],
				last[:i] + "f-00000.txt",
				last[:i] + "f-" + appendPaddedString(h.Resources, 5) + ".txt",
				strings.Replace(last, "/p", "/q", 1),
				d.dir() + "/f-00001.txt",
				d.dir() + "/SKILL.MD",
			} {
				if f := heavyFile(h, n, uri); f != nil {
					t.Errorf("heavyFile %s: a file, want none", uri)
				}
			}
		}
	}
}
