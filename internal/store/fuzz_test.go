package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillfs/skillfs/internal/skill"
)

// FuzzOriginID checks that an accepted id creates exactly one directory,
// directly under the root and named as given, and that a rejected one
// creates nothing.
func FuzzOriginID(f *testing.F) {
	for _, s := range []string{
		"acme-0123456789abcdef", "", ".", "..", "../x", "a/b", "a\\b", "/", "x\x00", "\t",
		"ünï", ".hidden", "..x", ".tmp-1", strings.Repeat("a", 255), strings.Repeat("a", 256),
		"\xc3", "a\u2028b", "a\u200fb", "~", "$HOME", "%2e%2e",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		root := filepath.Join(t.TempDir(), "store")
		s, err := Open(root, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		o, err := s.Bucket(id)
		ents, rerr := os.ReadDir(root)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if err != nil {
			if !errors.Is(err, ErrBadID) {
				t.Fatalf("Origin(%q) = %v, want ErrBadID or success", id, err)
			}
			if len(ents) != 0 {
				t.Fatalf("rejected id %q created %d entries", id, len(ents))
			}
			return
		}
		if len(ents) != 1 || ents[0].Name() != id || !ents[0].IsDir() {
			t.Fatalf("Origin(%q) created %v, want one directory named as the id", id, ents)
		}
		if filepath.Dir(o.Dir()) != root || filepath.Base(o.Dir()) != id {
			t.Fatalf("Origin(%q).Dir() = %q, not directly under %q", id, o.Dir(), root)
		}
		if ids, _ := s.Origins(); len(ids) != 1 || ids[0] != id {
			t.Fatalf("Origins() = %q after Origin(%q)", ids, id)
		}
		if err := s.Remove(id); err != nil {
			t.Fatalf("Remove(%q): %v", id, err)
		}
	})
}

// FuzzDigestPath checks that only canonical digests become paths, and that
// those paths stay within objects/.
func FuzzDigestPath(f *testing.F) {
	h := strings.Repeat("0f", 32)
	for _, s := range []string{
		"sha256:" + h, "sha256:" + strings.ToUpper(h), "sha256:" + h[:63], "sha256:" + h + "a",
		"sha256:../../" + h[6:], "sha256:" + h[:32] + "/" + h[33:], "", "sha256:", "md5:" + h,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := digestHex(skill.Digest(s))
		hexPart, isSHA := strings.CutPrefix(s, "sha256:")
		canonical := isSHA && len(hexPart) == 64 && strings.Trim(hexPart, "0123456789abcdef") == ""
		if canonical != (err == nil) {
			t.Fatalf("digestHex(%q) error = %v, canonical = %v", s, err, canonical)
		}
		if err != nil {
			if !errors.Is(err, ErrBadDigest) {
				t.Fatalf("digestHex(%q) error %v is not ErrBadDigest", s, err)
			}
			return
		}
		rel := objectRel(got)
		if !filepath.IsLocal(rel) || filepath.Clean(rel) != rel || !strings.HasPrefix(rel, "objects/"+got[:2]+"/") || filepath.Base(rel) != got {
			t.Fatalf("objectRel(%q) = %q", got, rel)
		}
	})
}
