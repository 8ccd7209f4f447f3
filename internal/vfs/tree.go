package vfs

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/resolver"
	"github.com/skillfs/skillfs/verify"
)

// A tree is one immutable snapshot of an origin's catalog as a file tree.
type tree struct {
	nodes map[string]*node // origin-relative path → node; "" is the origin root
	// built are the nodes in the order they were made, while the tree is
	// being built (a slice walks faster than the map), and up their
	// parents (nil for the root); nil after.
	built, up []*node
	skills    []*skillNode // placed skills, in catalog order
	// held are the skills held back from the tree for want of an approval
	// (approval: required), with their approval state; order is every
	// skill of the catalog, placed or held back, in catalog order.
	waiting []heldBack
	order   []*skillNode
	// pendingDirs are the directories of held-back skills: directory reads
	// must not bring them (or anything of theirs) back.
	pendingDirs map[string]bool
	byDir       map[string]*skillNode // every skill of order, by directory
	// rejected are the entries left out of the tree, with the reason.
	rejected []resolver.Rejection
	// placement indexes the rejections buildTree added itself (skills
	// whose paths collide with another skill's).
	placement []int
	// rejectedDirs are the directories of rejected skills: directory reads
	// must not bring them back as empty directories.
	rejectedDirs map[string]bool
	truncated    string
	source       string // "live" or "saved"
	at           time.Time
	// scope is the listing's cacheScope; resources and bytes what it cost
	// against the listing caps.
	scope     string
	resources int
	bytes     int64
	// withheld, when set, says why the catalog is not shown (a private
	// listing on a shared mount); held keeps it for saving and rebuilding.
	withheld string
	held     *resolver.Catalog
}

type node struct {
	path     string
	ino      uint64
	mtime    stamp
	children []string // sorted names, directories only
	file     *fileNode
	skill    *skillNode // set on a skill's root directory
}

func (n *node) isDir() bool { return n.file == nil }

// A stamp is a node's time in unix nanoseconds (8 bytes and no pointer
// for the collector, against time.Time's 24 and a location pointer); 0 is
// none.
type stamp int64

func stampOf(t time.Time) stamp { return stamp(t.UnixNano()) }

func (s stamp) Time() time.Time    { return time.Unix(0, int64(s)) }
func (s stamp) Unix() int64        { return int64(s) / int64(time.Second) }
func (s stamp) IsZero() bool       { return s == 0 }
func (s stamp) After(o stamp) bool { return s > o }
func (s stamp) Equal(o stamp) bool { return s == o }

type fileNode struct {
	// f is the manifest's entry for the file, shared with the skill that
	// listed it first.
	f *verify.File
	// owners are the skills whose manifest lists this file (an enclosing
	// and a nested skill both list the nested skill's files).
	owners []*skillNode
	// entryOf are the skills whose SKILL.md this file is; its frontmatter
	// is checked against each of them.
	entryOf []*skillNode
	// conflict is set when two manifests disagree about the file.
	conflict string
	dynamic  bool
	// frontmatter hashes the frontmatter of each entry whose SKILL.md this
	// file is (zero for other files); with the resource, conflict and
	// dynamic it makes the file's version (see version).
	frontmatter *[sha256.Size]byte // nil for other files
	key         string             // version().key(), once
	// checked is the outcome of the checks that depend on the entry, for
	// the bytes of one digest: set on the first serve under this tree.
	checked atomic.Pointer[checkResult]
}

// A checkResult is what serving one digest's bytes under a file node's
// entries found: the frontmatter comparison and, for a SKILL.md, the
// content flags.
type checkResult struct {
	digest string
	err    error
	flags  []string
}

// A heldBack skill is held in the catalog but not placed in the tree: it
// waits for the user's approval ("pending", "changed") or cannot have one
// ("refused": a dynamic skill).
type heldBack struct {
	sn    *skillNode
	state string
}

type skillNode struct {
	s      *verify.Skill
	path   string // origin-relative path of the skill directory
	source string // "list", "pin" or "get"
	// approval is the skill's approval state when this tree was built (""
	// when its origin does not require approval).
	approval string
	// digest caches the Binding.Digest of s (see bindingDigest).
	digest atomic.Pointer[string]
}

func (s *skillNode) uri() string { return s.s.URI.String() }

// inoFor derives a stable inode number from the origin, the path and the
// kind, so that a path keeps its inode across catalog swaps and restarts.
func inoFor(label, p string, dir bool) uint64 { return inoVersion(label, p, dir, nil) }

// inoVersion is inoFor for one version of a file: a file keeps its inode
// while its version does, and gets a new one when its content or entry
// changes, as a file replaced by rename does on a local filesystem.
func inoVersion(label, p string, dir bool, v *fileVersion) uint64 {
	// FNV-1a over label, p and the version, written out by hand: this runs
	// for every node of every tree built.
	h := fnvAdd(fnvOffset, label)
	h = fnvAdd(h, "\x00")
	h = fnvAdd(h, p)
	if dir {
		h = fnvAdd(h, "\x01")
	}
	if v != nil && !v.dynamic {
		var buf [24]byte
		h = fnvAdd(h, "\x02")
		h = fnvAdd(h, string(v.res.Digest))
		h = fnvAdd(h, "\x00")
		h = fnvAddBytes(h, strconv.AppendInt(buf[:0], v.res.Size, 10))
		h = fnvAdd(h, "\x00")
		h = fnvAdd(h, strconv.FormatBool(v.res.HasSize))
		h = fnvAdd(h, "\x00")
		h = fnvAdd(h, v.conflict)
		h = fnvAdd(h, "\x00")
		h = fnvAddBytes(h, v.frontmatter[:])
	}
	ino := h &^ (1 << 63) // below go-fuse's automatic range
	if ino < 2 {
		ino += 2 // 1 is the root
	}
	return ino
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnvAdd(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

func fnvAddBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

// buildTree lays out the skills of a catalog. A skill whose files cannot be
// placed (a path that is a file for one skill and a directory for another)
// is rejected with verify.Collision naming the skill already there; earlier
// entries in the catalog keep their place.
func buildTree(label string, cat *resolver.Catalog, source string, prev *tree, now time.Time, confirmed map[string]bool) *tree {
	return buildGated(label, cat, source, prev, now, confirmed, nil, nil)
}

// buildGated is buildTree with an approval gate: admit returns a skill's
// approval state, and only skills whose state is "" (not required) or
// "approved" are placed. The others are held back whole — not one file of
// theirs is placed, so a nested skill approved inside a pending one shows
// exactly its own manifest. A nil admit places every skill. Files take
// their times from times (see stamp); nil gives them now.
func buildGated(label string, cat *resolver.Catalog, source string, prev *tree, now time.Time, confirmed map[string]bool, admit func(*verify.Skill) string, times *timeBook) *tree {
	t := &tree{
		nodes:     make(map[string]*node, 1+cat.Resources+cat.Resources/2),
		rejected:  slices.Clone(cat.Rejected),
		truncated: cat.Truncated,
		source:    source,
		at:        cat.At,
		scope:     cat.CacheScope,
		resources: cat.Resources,
		bytes:     cat.Bytes,
	}
	root := &node{path: "", ino: inoFor(label, "", true)}
	t.nodes[""] = root
	t.built = make([]*node, 1, 1+cat.Resources+cat.Resources/2)
	t.up = make([]*node, 1, cap(t.built))
	t.built[0] = root
	if cat.Withheld != "" {
		// Not one name of a private listing reaches a shared mount: no
		// skill, no rejection, no directory.
		t.withheld, t.held, t.rejected = cat.Withheld, cat, nil
		t.stamp(prev, now, nil)
		t.built, t.up = nil, nil
		return t
	}
	t.rejectedDirs = map[string]bool{}
	for _, r := range cat.Rejected {
		if u, err := verify.ParseURI(r.URI); err == nil {
			if d, ok := u.Parent(); ok {
				t.rejectedDirs[d.Path()] = true
			}
		}
	}
	t.pendingDirs = map[string]bool{}
	t.byDir = map[string]*skillNode{}
	for _, s := range cat.Skills {
		sn := &skillNode{s: s, path: s.Dir.Path(), source: "list"}
		switch u := s.URI.String(); {
		case cat.Pinned[u]:
			sn.source = "pin"
		case cat.Named[u]:
			sn.source = sourceNamed
		case confirmed[u]:
			sn.source = "get"
		}
		if admit != nil {
			sn.approval = admit(s)
			if st := sn.approval; st != "" && st != approvalApproved {
				t.waiting = append(t.waiting, heldBack{sn: sn, state: st})
				t.order = append(t.order, sn)
				t.pendingDirs[sn.path] = true
				t.byDir[sn.path] = sn
				continue
			}
		}
		if err := t.place(label, sn); err != nil {
			t.placement = append(t.placement, len(t.rejected))
			t.rejected = append(t.rejected, resolver.Rejection{URI: s.URI.String(), Reason: verify.Collision, Detail: err.Error()})
			t.rejectedDirs[sn.path] = true
			continue
		}
		t.skills = append(t.skills, sn)
		t.order = append(t.order, sn)
		t.byDir[sn.path] = sn
	}
	for _, n := range t.built {
		if n.isDir() {
			slices.Sort(n.children)
		} else {
			n.file.setVersion()
			v := n.file.version()
			n.ino = inoVersion(label, n.path, false, &v)
		}
	}
	t.stamp(prev, now, times)
	t.built, t.up = nil, nil
	return t
}

// stamp sets the nodes' times. A file's is when this host first held an
// entry naming its content (times; see timeBook), so that it is the same
// across re-lists, server restarts and remounts and changes only with the
// digest. A file with no digest to go by (dynamic), or when times is nil,
// gets now, or the time it had in prev if it is the same there. A
// directory's is the newest of its children's, so that a change anywhere
// below shows on every directory above it; an empty one (only an origin
// root can be) keeps its time in prev while it stays empty, and otherwise
// takes the catalog's listing time (the empty tree before any catalog has
// the start time, which the first catalog does not keep).
func (t *tree) stamp(prev *tree, now time.Time, times *timeBook) {
	first := times.snapshot()
	for _, n := range t.built {
		if n.isDir() {
			continue
		}
		if at, ok := first.at(n.file.f.Resource.Digest); ok && !n.file.dynamic {
			n.mtime = stampOf(at)
			continue
		}
		n.mtime = stampOf(now)
		if prev != nil {
			if old := prev.nodes[n.path]; old != nil && sameContent(old, n) {
				n.mtime = old.mtime
			}
		}
	}
	t.dirTimes()
	root := t.nodes[""]
	if !root.mtime.IsZero() {
		return
	}
	root.mtime = stampOf(now)
	if !t.at.IsZero() {
		root.mtime = stampOf(t.at)
	}
	if prev != nil && prev.source != "none" {
		if old := prev.nodes[""]; old != nil && sameContent(old, root) {
			root.mtime = old.mtime
		}
	}
}

// dirTimes sets each directory's time to the newest of its children's
// (zero when it has none), deepest directories first so that each passes
// its time up once.
func (t *tree) dirTimes() {
	var byDepth [][]int // depth → indexes into built of the directories
	for i, n := range t.built {
		if n.isDir() {
			n.mtime = 0
			if n.path == "" {
				continue
			}
			d := strings.Count(n.path, "/")
			for len(byDepth) <= d {
				byDepth = append(byDepth, nil)
			}
			byDepth[d] = append(byDepth[d], i)
		}
	}
	raise := func(i int) {
		if up := t.up[i]; up != nil && t.built[i].mtime.After(up.mtime) {
			up.mtime = t.built[i].mtime
		}
	}
	for i, n := range t.built {
		if !n.isDir() {
			raise(i)
		}
	}
	for d := len(byDepth) - 1; d >= 0; d-- {
		for _, i := range byDepth[d] {
			raise(i)
		}
	}
}

func sameContent(a, b *node) bool {
	if a.isDir() != b.isDir() {
		return false
	}
	if a.isDir() {
		return slices.Equal(a.children, b.children)
	}
	return a.file.version() == b.file.version()
}

// A fileVersion is what a file serves: the resource, any conflict between
// manifests, and a hash of the frontmatter of each entry whose SKILL.md it
// is. Two versions are the same file content checked the same way exactly
// when they are ==.
type fileVersion struct {
	res         skill.Resource
	conflict    string
	dynamic     bool
	frontmatter [sha256.Size]byte // zero unless the file is some entry's SKILL.md
}

// setVersion hashes the frontmatter the node is checked against and
// computes its key, once its owners are known.
func (f *fileNode) setVersion() {
	if len(f.entryOf) > 0 {
		var b []byte
		for _, sn := range f.entryOf {
			b = appendValue(b, sn.s.Entry.Frontmatter)
			b = append(b, 0)
		}
		sum := sha256.Sum256(b)
		f.frontmatter = &sum
	}
	f.key = f.version().key()
}

// appendValue appends an encoding of a frontmatter value (the JSON data
// model: nil, bool, string, json.Number, []any, map[string]any with its
// keys sorted) that two values share exactly when they are equal: each
// part is tagged and strings carry their length. Any other type, which
// decoding never makes, is tagged with its printed form.
func appendValue(b []byte, v any) []byte {
	str := func(b []byte, s string) []byte {
		b = binary.AppendUvarint(b, uint64(len(s)))
		return append(b, s...)
	}
	switch v := v.(type) {
	case nil:
		return append(b, 'z')
	case bool:
		if v {
			return append(b, 't')
		}
		return append(b, 'f')
	case string:
		return str(append(b, 's'), v)
	case json.Number:
		return str(append(b, 'n'), string(v))
	case []any:
		b = binary.AppendUvarint(append(b, 'a'), uint64(len(v)))
		for _, e := range v {
			b = appendValue(b, e)
		}
		return b
	case map[string]any:
		b = binary.AppendUvarint(append(b, 'm'), uint64(len(v)))
		for _, k := range slices.Sorted(maps.Keys(v)) {
			b = appendValue(str(b, k), v[k])
		}
		return b
	}
	return str(append(b, '?'), fmt.Sprintf("%T %v", v, v))
}

// version names what the file serves under this tree: its resource and,
// for a SKILL.md, the frontmatter of every entry it is checked against.
// A change of either is a new version: a new inode number, and the older
// version's reads fail rather than mix (see File).
func (f *fileNode) version() fileVersion {
	v := fileVersion{res: *f.f.Resource, conflict: f.conflict, dynamic: f.dynamic}
	if f.frontmatter != nil {
		v.frontmatter = *f.frontmatter
	}
	return v
}

// key names the version in the saved flags and in what reading learnt:
// the digest with the frontmatter it was checked against. A file that is
// no entry's SKILL.md is checked against no frontmatter, and its digest
// alone names it (a key that shares the digest's bytes).
func (v fileVersion) key() string {
	if v.frontmatter == ([sha256.Size]byte{}) {
		return string(v.res.Digest)
	}
	return string(v.res.Digest) + "/" + hex.EncodeToString(v.frontmatter[:])
}

// place adds one skill's directory and files, all or nothing.
func (t *tree) place(label string, sn *skillNode) error {
	files := sn.s.Files
	if sn.s.Dynamic {
		// A dynamic skill publishes no manifest; its SKILL.md is the one
		// file known from the entry itself, read under the entry's spelling.
		files = []verify.File{{Resource: &skill.Resource{URI: sn.s.Entry.URI}, URI: sn.s.URI}}
	}
	// Check first, so that a rejected skill leaves no trace.
	if n := t.nodes[sn.path]; n != nil && !n.isDir() {
		return fmt.Errorf("its directory %s is a file of another skill", sn.path)
	}
	paths := make([]string, len(files))
	for i := range files {
		p := filePath(&files[i])
		paths[i] = p
		if n := t.nodes[p]; n != nil && n.isDir() {
			return fmt.Errorf("%s is a file here and a directory of another skill", p)
		}
		// A directory node's ancestors are all directories: the walk
		// up stops at the first node there is.
		for d := parentOf(p); d != ""; d = parentOf(d) {
			if n := t.nodes[d]; n != nil {
				if !n.isDir() {
					return fmt.Errorf("%s is a directory here and a file of another skill", d)
				}
				break
			}
		}
	}
	t.dir(label, sn.path).skill = sn
	self := sn.s.URI
	for i := range files {
		f := &files[i]
		p := paths[i]
		n := t.nodes[p]
		if n == nil {
			parent := t.dir(label, parentOf(p))
			parent.children = append(parent.children, path.Base(p))
			// The inode number follows the version, known once every
			// owner is placed (buildGated).
			// One allocation for both parts.
			leaf := &struct {
				node
				fileNode
			}{node: node{path: p}, fileNode: fileNode{f: f, dynamic: sn.s.Dynamic}}
			n = &leaf.node
			n.file = &leaf.fileNode
			t.nodes[p] = n
			t.built = append(t.built, n)
			t.up = append(t.up, parent)
		} else if *n.file.f.Resource != *f.Resource && n.file.conflict == "" {
			n.file.conflict = fmt.Sprintf("the entries of %s and %s disagree about this file", n.file.owners[0].uri(), sn.uri())
		}
		n.file.owners = append(n.file.owners, sn)
		if f.URI.Equal(self) {
			n.file.entryOf = append(n.file.entryOf, sn)
		}
	}
	return nil
}

// filePath is f.URI.Path(). A skill URI spelled canonically, as servers
// spell nearly all of them, holds the path as is after "skill://"; the
// node then shares those bytes of the resource instead of holding a copy.
func filePath(f *verify.File) string {
	const prefix = verify.SkillScheme + "://"
	if f.URI.Scheme == verify.SkillScheme && strings.HasPrefix(f.Resource.URI, prefix) {
		if rest := f.Resource.URI[len(prefix):]; spellsPath(rest, f.URI) {
			return rest
		}
	}
	return f.URI.Path()
}

// spellsPath reports whether s is exactly u's authority and segments
// joined by "/".
func spellsPath(s string, u verify.URI) bool {
	s, ok := strings.CutPrefix(s, u.Authority)
	if !ok {
		return false
	}
	for _, seg := range u.Segments {
		if s, ok = strings.CutPrefix(s, "/"); !ok {
			return false
		}
		if s, ok = strings.CutPrefix(s, seg); !ok {
			return false
		}
	}
	return s == ""
}

// dir returns the directory node at p, creating it and its ancestors.
func (t *tree) dir(label, p string) *node {
	if n := t.nodes[p]; n != nil {
		return n
	}
	n := &node{path: p, ino: inoFor(label, p, true)}
	t.nodes[p] = n
	i := len(t.built)
	t.built = append(t.built, n)
	t.up = append(t.up, nil)
	parent := t.dir(label, parentOf(p))
	t.up[i] = parent
	parent.children = append(parent.children, path.Base(p))
	return n
}

func parentOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// skillAt returns the innermost skill whose directory holds p.
func (t *tree) skillAt(p string) *skillNode {
	for {
		if n := t.nodes[p]; n != nil && n.skill != nil {
			return n.skill
		}
		if p == "" {
			return nil
		}
		p = parentOf(p)
	}
}

// enclosing returns the innermost skill, placed or held back, whose
// directory strictly contains p.
func (t *tree) enclosing(p string) *skillNode {
	if p == "" {
		return nil
	}
	for p = parentOf(p); ; p = parentOf(p) {
		if sn := t.byDir[p]; sn != nil {
			return sn
		}
		if p == "" {
			return nil
		}
	}
}

// heldAt reports whether p is, or is inside, the directory of a skill held
// back for want of an approval, with no placed skill in between.
func (t *tree) heldAt(p string) bool {
	for {
		if t.pendingDirs[p] {
			return true
		}
		if n := t.nodes[p]; n != nil && n.skill != nil {
			return false
		}
		if p == "" {
			return false
		}
		p = parentOf(p)
	}
}

// catalog returns the skills of the tree as a catalog, for rebuilding it
// with one entry replaced and for saving it.
func (t *tree) catalog() *resolver.Catalog {
	if t.held != nil {
		c := *t.held
		return &c
	}
	c := &resolver.Catalog{Truncated: t.truncated, At: t.at, CacheScope: t.scope, Resources: t.resources, Bytes: t.bytes}
	for _, sn := range t.order {
		c.Skills = append(c.Skills, sn.s)
		if sn.source == "pin" {
			if c.Pinned == nil {
				c.Pinned = map[string]bool{}
			}
			c.Pinned[sn.uri()] = true
		}
		if sn.source == sourceNamed {
			if c.Named == nil {
				c.Named = map[string]bool{}
			}
			c.Named[sn.uri()] = true
		}
	}
	for _, r := range t.rejected {
		if r.Reason != verify.Collision {
			c.Rejected = append(c.Rejected, r)
		}
	}
	return c
}

// entries returns the paths that appeared in their directory and those that
// left it between two trees of one origin (a path whose kind changed is in
// both), so that the kernel forgets its negative and positive entries for
// them; a directory that directory reads showed before the catalog held its
// skill back or rejected it has left too.
func entries(old, new *tree) (added, removed []string) {
	if old == nil {
		return nil, nil
	}
	for p, o := range old.nodes {
		if n := new.nodes[p]; p != "" && (n == nil || n.isDir() != o.isDir()) {
			removed = append(removed, p)
		}
	}
	for p, n := range new.nodes {
		if o := old.nodes[p]; p != "" && (o == nil || o.isDir() != n.isDir()) {
			added = append(added, p)
		}
	}
	for _, held := range []struct{ old, new map[string]bool }{{old.rejectedDirs, new.rejectedDirs}, {old.pendingDirs, new.pendingDirs}} {
		for p := range held.new {
			if !held.old[p] && new.nodes[p] == nil {
				removed = append(removed, p)
			}
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	return added, slices.Compact(removed)
}

// changes lists what differs between two trees: files whose content or
// metadata changed or that went away, and directories whose children or
// time changed.
func changes(old, new *tree) (files, dirs []string) {
	if old == nil {
		return nil, nil
	}
	for p, o := range old.nodes {
		n := new.nodes[p]
		switch {
		case n == nil || n.isDir() != o.isDir():
			if o.isDir() {
				dirs = append(dirs, p)
			} else {
				files = append(files, p)
			}
		case o.isDir():
			// A directory's time follows its newest descendant: the
			// kernel must forget the attributes it holds.
			if !slices.Equal(o.children, n.children) || !o.mtime.Equal(n.mtime) {
				dirs = append(dirs, p)
			}
		case o.file.version() != n.file.version():
			files = append(files, p)
		}
	}
	for p, n := range new.nodes {
		if old.nodes[p] == nil && n.isDir() {
			dirs = append(dirs, p)
		}
	}
	// A directory that directory reads showed before the catalog rejected
	// its skill must leave the kernel's caches too: lookup, getattr and
	// readdir then agree that it does not exist.
	for p := range new.rejectedDirs {
		if !old.rejectedDirs[p] && new.nodes[p] == nil {
			dirs = append(dirs, p, parentOf(p))
		}
	}
	for p := range new.pendingDirs {
		if !old.pendingDirs[p] && new.nodes[p] == nil {
			dirs = append(dirs, p, parentOf(p))
		}
	}
	slices.Sort(files)
	slices.Sort(dirs)
	return files, slices.Compact(dirs)
}
