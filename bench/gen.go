//go:build linux

package main

import (
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// Needle is the word grep -r looks for: it is planted in about one file in
// a hundred (and always in the first), and the filler text never holds it.
const Needle = "needle-7f3a"

// A Class is the size class of a generated file.
type Class int

const (
	ClassSkillMD Class = iota // a SKILL.md, 1–20 KiB
	ClassSmall                // another file of a skill, 1–20 KiB
	ClassLarge                // one of the few 1–8 MiB files
)

func (c Class) String() string {
	switch c {
	case ClassSkillMD:
		return "SKILL.md"
	case ClassSmall:
		return "small"
	case ClassLarge:
		return "large"
	}
	return fmt.Sprintf("Class(%d)", int(c))
}

// A Spec says what tree to generate. Zero fields take the defaults the
// issue asks for; tests shrink the sizes.
type Spec struct {
	Skills int
	Seed   uint64
	// LargePairs is how many pairs of equal-size large files the tree
	// holds (default 5 + Skills/2500). Pairs exist so that a cold read
	// through the mount and the direct client's read of the same size can
	// use different files.
	LargePairs int
	SmallMin   int64 // default 1 KiB
	SmallMax   int64 // default 20 KiB
	LargeMin   int64 // default 1 MiB
	LargeMax   int64 // default 8 MiB
}

func (s Spec) withDefaults() Spec {
	if s.LargePairs == 0 {
		s.LargePairs = 5 + s.Skills/2500
	}
	if s.SmallMin == 0 {
		s.SmallMin = 1 << 10
	}
	if s.SmallMax == 0 {
		s.SmallMax = 20 << 10
	}
	if s.LargeMin == 0 {
		s.LargeMin = 1 << 20
	}
	if s.LargeMax == 0 {
		s.LargeMax = 8 << 20
	}
	return s
}

// A File is one generated file.
type File struct {
	// Path is slash-separated and relative to the tree root; it is also
	// the file's path under the origin's directory in the mount, and
	// "skill://"+Path is its URI.
	Path   string
	Size   int64
	Class  Class
	Digest [32]byte
	Needle bool // holds Needle
}

// URI is the file's resource URI as `skillfs serve` publishes it (the
// generated names need no escaping).
func (f File) URI() string { return "skill://" + f.Path }

// A Tree is a generated folder of skills.
type Tree struct {
	Root   string
	Skills int
	Files  []File
	// LargePairs index Files: two large files of one size each.
	LargePairs [][2]int
}

// Bytes is the total size of the tree's files.
func (t *Tree) Bytes() int64 {
	var n int64
	for _, f := range t.Files {
		n += f.Size
	}
	return n
}

// Count returns how many files of class c the tree holds.
func (t *Tree) Count(c Class) int {
	n := 0
	for _, f := range t.Files {
		if f.Class == c {
			n++
		}
	}
	return n
}

// skillName is the folder and frontmatter name of skill i; skills sit in
// groups of a hundred so that no directory is huge.
func skillDir(i int) string {
	return fmt.Sprintf("g%03d/skill-%05d", i/100, i)
}

// extraFiles are the names a skill's files besides SKILL.md are drawn from.
var extraFiles = []string{
	"reference.md",
	"examples/basic.md",
	"examples/advanced.md",
	"scripts/check.sh",
	"templates/report.txt",
	"notes.txt",
}

// maxSkillBytes is SEP-2640's per-skill limit, which `skillfs serve`
// enforces by refusing the skill.
const maxSkillBytes = 16 << 20

// planned is a file before its bytes exist.
type planned struct {
	File
	header string // the start of the file, unique to it
	offset int    // where in the filler pool its body starts
}

// Generate writes the tree spec describes under root (which must not
// exist or be empty) and returns what it wrote. The same spec always
// produces the same bytes.
func Generate(root string, spec Spec) (*Tree, error) {
	spec = spec.withDefaults()
	if spec.Skills <= 0 {
		return nil, fmt.Errorf("generate %s: %d skills; need at least one", root, spec.Skills)
	}
	if spec.SmallMin < 256 || spec.SmallMax < spec.SmallMin || spec.LargeMin < spec.SmallMin || spec.LargeMax < spec.LargeMin {
		return nil, fmt.Errorf("generate %s: bad size bounds %+v", root, spec)
	}
	rng := rand.New(rand.NewPCG(spec.Seed, uint64(spec.Skills)))
	pool := fillerPool(rand.New(rand.NewPCG(spec.Seed, 0x9e3779b97f4a7c15)))
	between := func(lo, hi int64) int64 { return lo + rng.Int64N(hi-lo+1) }

	var plan []planned
	perSkill := make([]int64, spec.Skills)
	for i := 0; i < spec.Skills; i++ {
		dir := skillDir(i)
		name := path.Base(dir)
		md := planned{File: File{Path: dir + "/SKILL.md", Size: between(spec.SmallMin, spec.SmallMax), Class: ClassSkillMD}}
		md.header = fmt.Sprintf("---\nname: %s\ndescription: Benchmark skill %d of %d (seed %d); generated filler text.\n---\n# %s\n\n",
			name, i, spec.Skills, spec.Seed, name)
		plan = append(plan, md)
		extras := rng.Perm(len(extraFiles))[:2+rng.IntN(3)] // 3–5 files per skill
		for _, e := range extras {
			plan = append(plan, planned{File: File{Path: dir + "/" + extraFiles[e], Size: between(spec.SmallMin, spec.SmallMax), Class: ClassSmall}})
		}
	}
	var pairs [][2]int
	nLarge := 2 * spec.LargePairs
	for p := 0; p < spec.LargePairs; p++ {
		size := between(spec.LargeMin, spec.LargeMax)
		var pair [2]int
		for k := 0; k < 2; k++ {
			j := 2*p + k
			owner := j * spec.Skills / nLarge
			pair[k] = len(plan)
			plan = append(plan, planned{File: File{Path: fmt.Sprintf("%s/data/large-%02d.txt", skillDir(owner), j), Size: size, Class: ClassLarge}})
		}
		pairs = append(pairs, pair)
	}
	for i := range plan {
		p := &plan[i]
		if p.header == "" {
			p.header = "# " + p.Path + "\n\n"
		}
		p.Needle = i == 0 || rng.IntN(100) == 0
		if p.Needle {
			p.header += "The word to find is " + Needle + ".\n"
		}
		if int64(len(p.header)) > p.Size {
			return nil, fmt.Errorf("generate %s: %s: size %d is smaller than its %d-byte header", root, p.Path, p.Size, len(p.header))
		}
		p.offset = rng.IntN(len(pool))
		owner := skillIndex(p.Path)
		perSkill[owner] += p.Size
		if perSkill[owner] > maxSkillBytes {
			return nil, fmt.Errorf("generate %s: skill %s would hold more than SEP-2640's 16 MiB; use fewer or smaller large files", root, skillDir(owner))
		}
	}

	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("generate %s: %w", root, err)
	}
	if ents, err := os.ReadDir(root); err != nil || len(ents) > 0 {
		return nil, fmt.Errorf("generate %s: the folder is not empty (or unreadable: %v)", root, err)
	}
	if err := forEach(len(plan), func(i int) error {
		b := plan[i].content(pool)
		plan[i].Digest = sha256.Sum256(b)
		return writeFile(filepath.Join(root, filepath.FromSlash(plan[i].Path)), b)
	}); err != nil {
		return nil, fmt.Errorf("generate %s: %w", root, err)
	}
	t := &Tree{Root: root, Skills: spec.Skills, LargePairs: pairs}
	for _, p := range plan {
		t.Files = append(t.Files, p.File)
	}
	return t, nil
}

// skillIndex recovers the skill number from a generated path.
func skillIndex(p string) int {
	var g, i int
	fmt.Sscanf(p, "g%03d/skill-%05d", &g, &i)
	return i
}

func (p *planned) content(pool []byte) []byte {
	b := make([]byte, 0, p.Size)
	b = append(b, p.header...)
	off := p.offset
	for int64(len(b)) < p.Size {
		n := min(int(p.Size)-len(b), len(pool)-off)
		b = append(b, pool[off:off+n]...)
		off = 0
	}
	return b
}

func writeFile(name string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if strings.HasSuffix(name, ".sh") {
		mode = 0o755
	}
	return os.WriteFile(name, b, mode)
}

// fillerPool is a MiB of lower-case words in lines, the text every file's
// body is cut from.
func fillerPool(rng *rand.Rand) []byte {
	words := []string{
		"skill", "agent", "file", "read", "verify", "digest", "server", "origin", "mount",
		"cache", "kernel", "lookup", "listing", "resource", "manifest", "refund", "billing",
		"invoice", "review", "commit", "branch", "deploy", "report", "template", "example",
		"the", "a", "of", "to", "and", "when", "then", "with", "every", "once", "before",
	}
	const size = 1 << 20
	b := make([]byte, 0, size+80)
	line := 0
	for len(b) < size {
		w := words[rng.IntN(len(words))]
		b = append(b, w...)
		line += len(w) + 1
		if line > 60+rng.IntN(20) {
			b = append(b, '\n')
			line = 0
		} else {
			b = append(b, ' ')
		}
	}
	return b[:size]
}

// forEach runs f(0..n-1) on a few goroutines and returns the first error.
func forEach(n int, f func(i int) error) error {
	workers := min(n, max(2, runtime.NumCPU()))
	var (
		next  = make(chan int)
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		mu.Lock()
		stop := first != nil
		mu.Unlock()
		if stop {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

// CopyTree copies t's files to dst, which must not exist, and returns a Tree
// rooted there.
func CopyTree(t *Tree, dst string) (*Tree, error) {
	if _, err := os.Lstat(dst); err == nil {
		return nil, fmt.Errorf("copy %s to %s: the target exists", t.Root, dst)
	}
	err := forEach(len(t.Files), func(i int) error {
		f := t.Files[i]
		b, err := os.ReadFile(filepath.Join(t.Root, filepath.FromSlash(f.Path)))
		if err != nil {
			return err
		}
		return writeFile(filepath.Join(dst, filepath.FromSlash(f.Path)), b)
	})
	if err != nil {
		return nil, fmt.Errorf("copy %s to %s: %w", t.Root, dst, err)
	}
	c := *t
	c.Root = dst
	return &c, nil
}
