//go:build linux

package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/skillfs/skillfs/internal/skillserver"
)

// small keeps test trees to a few hundred KiB.
func small(skills int, seed uint64) Spec {
	return Spec{Skills: skills, Seed: seed, LargePairs: 2, LargeMin: 40 << 10, LargeMax: 64 << 10}
}

func generate(t *testing.T, spec Spec) *Tree {
	t.Helper()
	tree, err := Generate(filepath.Join(t.TempDir(), "tree"), spec)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func TestGenerateShape(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec Spec
	}{
		{"one skill", Spec{Skills: 1, Seed: 3, LargePairs: 1, LargeMin: 30 << 10, LargeMax: 30 << 10}},
		{"a group and a half", small(150, 1)},
		{"issue sizes, few skills", Spec{Skills: 12, Seed: 2, LargePairs: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec.withDefaults()
			tree := generate(t, tc.spec)
			perSkill := map[string]int{}
			needles := 0
			for _, f := range tree.Files {
				b, err := os.ReadFile(filepath.Join(tree.Root, filepath.FromSlash(f.Path)))
				if err != nil {
					t.Fatal(err)
				}
				if int64(len(b)) != f.Size || sha256.Sum256(b) != f.Digest {
					t.Errorf("%s: on disk %d bytes with another digest than recorded (%d)", f.Path, len(b), f.Size)
				}
				if got := bytes.Contains(b, []byte(Needle)); got != f.Needle {
					t.Errorf("%s: holds the needle %v, recorded %v", f.Path, got, f.Needle)
				}
				if f.Needle {
					needles++
				}
				lo, hi := spec.SmallMin, spec.SmallMax
				if f.Class == ClassLarge {
					lo, hi = spec.LargeMin, spec.LargeMax
				} else {
					perSkill[strings.Join(strings.SplitN(f.Path, "/", 3)[:2], "/")]++
				}
				if f.Size < lo || f.Size > hi {
					t.Errorf("%s (%v): %d bytes, outside %d–%d", f.Path, f.Class, f.Size, lo, hi)
				}
				if f.Class == ClassSkillMD {
					name := path.Base(path.Dir(f.Path))
					if !bytes.HasPrefix(b, []byte("---\nname: "+name+"\n")) {
						t.Errorf("%s does not start with frontmatter naming %s: %.40q", f.Path, name, b)
					}
				}
			}
			if len(perSkill) != tree.Skills || tree.Count(ClassSkillMD) != tree.Skills {
				t.Errorf("%d skills with files and %d SKILL.md, want %d", len(perSkill), tree.Count(ClassSkillMD), tree.Skills)
			}
			for s, n := range perSkill {
				if n < 3 || n > 5 {
					t.Errorf("%s has %d small files, want 3–5", s, n)
				}
			}
			if needles == 0 {
				t.Error("no file holds the needle")
			}
			if len(tree.LargePairs) != spec.LargePairs || tree.Count(ClassLarge) != 2*spec.LargePairs {
				t.Errorf("%d large pairs and %d large files, want %d pairs", len(tree.LargePairs), tree.Count(ClassLarge), spec.LargePairs)
			}
			for _, p := range tree.LargePairs {
				a, b := tree.Files[p[0]], tree.Files[p[1]]
				if a.Class != ClassLarge || b.Class != ClassLarge || a.Size != b.Size || a.Digest == b.Digest {
					t.Errorf("pair %s/%s: classes %v %v, sizes %d %d, same digest %v", a.Path, b.Path, a.Class, b.Class, a.Size, b.Size, a.Digest == b.Digest)
				}
			}
		})
	}
}

func TestGenerateDeterministic(t *testing.T) {
	a := generate(t, small(30, 7))
	b := generate(t, small(30, 7))
	c := generate(t, small(30, 8))
	if !reflect.DeepEqual(a.Files, b.Files) || !reflect.DeepEqual(a.LargePairs, b.LargePairs) {
		t.Error("the same spec generated different trees")
	}
	if reflect.DeepEqual(a.Files, c.Files) {
		t.Error("another seed generated the same tree")
	}
	seen := map[[32]byte]string{}
	for _, f := range a.Files {
		if p, dup := seen[f.Digest]; dup {
			t.Errorf("%s and %s have the same bytes; the store would share them and a cold read would not be cold", p, f.Path)
		}
		seen[f.Digest] = f.Path
	}
}

// The generated tree is what `skillfs serve` publishes whole: every skill,
// every file, with the sizes and digests the bench expects.
func TestGeneratedTreeIsServed(t *testing.T) {
	tree := generate(t, small(120, 1))
	srv, err := skillserver.New(tree.Root, skillserver.Options{PollInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	if p := srv.Problems(); len(p) > 0 {
		t.Fatalf("skillfs serve refuses parts of the tree: %v", p)
	}
	served := map[string]string{}
	entries := srv.Skills()
	for _, e := range entries {
		for _, r := range e.Resources {
			served[r.URI] = fmt.Sprintf("%d %s", r.Size, r.Digest)
		}
	}
	if len(entries) != tree.Skills {
		t.Errorf("%d skills served, want %d", len(entries), tree.Skills)
	}
	for _, f := range tree.Files {
		want := fmt.Sprintf("%d sha256:%s", f.Size, hex.EncodeToString(f.Digest[:]))
		if got := served[f.URI()]; got != want {
			t.Errorf("%s served as %q, want %q", f.URI(), got, want)
		}
	}
	if len(served) != len(tree.Files) {
		t.Errorf("%d files served, %d generated", len(served), len(tree.Files))
	}
}

func TestGenerateRefuses(t *testing.T) {
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "x"), nil, 0o644)
	for _, tc := range []struct {
		name string
		root string
		spec Spec
		want string
	}{
		{"no skills", filepath.Join(t.TempDir(), "t"), Spec{}, "need at least one"},
		{"non-empty folder", full, small(2, 1), "not empty"},
		{"skill over 16 MiB", filepath.Join(t.TempDir(), "t"), Spec{Skills: 1, LargePairs: 2, LargeMin: 5 << 20, LargeMax: 5 << 20}, "16 MiB"},
		{"bad bounds", filepath.Join(t.TempDir(), "t"), Spec{Skills: 1, SmallMin: 2 << 10, SmallMax: 1 << 10}, "bad size bounds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Generate(tc.root, tc.spec)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Generate: %v, want an error about %q", err, tc.want)
			}
		})
	}
}

func TestCopyTree(t *testing.T) {
	tree := generate(t, small(15, 4))
	dst := filepath.Join(t.TempDir(), "copy")
	c, err := CopyTree(tree, dst)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range c.Files {
		if err := checkFile(filepath.Join(dst, filepath.FromSlash(f.Path)), f); err != nil {
			t.Error(err)
		}
	}
	if _, err := CopyTree(tree, dst); err == nil {
		t.Error("a second copy onto the first succeeded")
	}
}

func TestSmallPairs(t *testing.T) {
	tree := generate(t, small(60, 5))
	for _, k := range []int{1, 5, 10} {
		pairs := smallPairs(tree, k)
		if len(pairs) != k {
			t.Fatalf("smallPairs(%d): %d pairs", k, len(pairs))
		}
		used := map[int]bool{}
		for _, p := range pairs {
			a, b := tree.Files[p[0]], tree.Files[p[1]]
			if a.Class != ClassSmall || b.Class != ClassSmall {
				t.Errorf("pair %s %s: classes %v %v", a.Path, b.Path, a.Class, b.Class)
			}
			// 60 skills hold ~180 small files over 19 KiB of sizes.
			if d := a.Size - b.Size; d > 1024 || d < -1024 {
				t.Errorf("pair %s %s: sizes %d and %d are far apart", a.Path, b.Path, a.Size, b.Size)
			}
			if used[p[0]] || used[p[1]] || p[0] == p[1] {
				t.Errorf("pair %v reuses a file", p)
			}
			used[p[0]], used[p[1]] = true, true
		}
	}
}
