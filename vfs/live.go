package vfs

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/skillfs/skillfs/resolver"
	"github.com/skillfs/skillfs/skill"
	"github.com/skillfs/skillfs/verify"
)

// Directory reads (servers that declare directoryRead) add what no manifest
// covers: directories above and between skills that the listing did not
// mention, and the files of "dynamic" skills. Inside a skill with a
// manifest they add nothing — the manifest is the skill. Their results are
// kept for liveTTL.
//
// A directory read that shows a SKILL.md in a directory no held skill owns
// makes skillfs ask for that skill with skills/get; a confirmed entry joins
// the origin's catalog like a listed one (source "get").

// liveTTL is how long a directory read is trusted.
const liveTTL = 30 * time.Second

// confirmRetry bounds how often skills/get is asked about one unlisted URI.
const confirmRetry = 30 * time.Second

type liveListing struct {
	at       time.Time
	children map[string]bool // name → is a directory
	ok       bool            // false: the server said no such directory
}

// liveable reports whether directory reads may add children under p: the
// server supports them and p is not inside a skill with a manifest.
func (o *origin) liveable(t *tree, p string) bool {
	if !o.res.DirectoryRead() {
		return false
	}
	sn := t.skillAt(p)
	return sn == nil || sn.s.Dynamic
}

// lookup returns the node at p: from the tree, or from directory reads.
func (o *origin) lookup(ctx context.Context, p string) (*node, error) {
	t := o.tree.Load()
	if n := t.nodes[p]; n != nil {
		return n, nil
	}
	if p == "" {
		return nil, ErrNotExist
	}
	parent := parentOf(p)
	name := p[len(parent):]
	if parent != "" {
		name = name[1:]
	}
	if !o.liveable(t, parent) || o.hidden(t, p) {
		return nil, ErrNotExist
	}
	if parent == "" {
		// The scheme root has no URI to list; ask for the child itself.
		return o.liveDirAt(ctx, p)
	}
	l := o.listing(ctx, parent)
	if l == nil || !l.ok {
		return nil, ErrNotExist
	}
	if t2 := o.tree.Load(); t2 != t {
		// A directory read may have confirmed a skill.
		if n := t2.nodes[p]; n != nil {
			return n, nil
		}
		t = t2
	}
	isDir, ok := l.children[name]
	if !ok {
		return nil, ErrNotExist
	}
	if isDir {
		return o.liveDirAt(ctx, p)
	}
	sn := t.skillAt(parent)
	if sn == nil || !sn.s.Dynamic {
		// A file outside any skill's manifest is not shown: there is
		// nothing to verify it against.
		return nil, ErrNotExist
	}
	return o.dynamicFile(sn, p)
}

// liveDirAt answers for a directory that directory reads found at p. It
// reads p itself first: a directory holding a SKILL.md is a skill, which
// must be confirmed with skills/get before it is shown, so that lookup,
// getattr and readdir agree from the first answer on — a skill that
// cannot be confirmed never appears as a directory at all.
func (o *origin) liveDirAt(ctx context.Context, p string) (*node, error) {
	l := o.listing(ctx, p)
	if l == nil || !l.ok {
		return nil, ErrNotExist
	}
	t := o.tree.Load()
	if n := t.nodes[p]; n != nil {
		return n, nil
	}
	if o.hidden(t, p) {
		return nil, ErrNotExist
	}
	return o.liveDir(p), nil
}

func (o *origin) liveDir(p string) *node {
	return &node{path: p, ino: inoFor(o.cfg.Label, p, true), mtime: o.fs.started}
}

func (o *origin) dynamicFile(sn *skillNode, p string) (*node, error) {
	u, err := verify.URIFromPath(p)
	if err != nil {
		return nil, ErrNotExist
	}
	f := &fileNode{f: &verify.File{URI: u, Resource: skill.Resource{URI: u.String()}}, owners: []*skillNode{sn}, dynamic: true}
	if u.String() == sn.uri() {
		f.entryOf = []*skillNode{sn}
	}
	return &node{path: p, ino: inoFor(o.cfg.Label, p, false), mtime: o.fs.started, file: f}, nil
}

// liveChildren returns the children directory reads add under p (sorted),
// with whether each is a directory.
func (o *origin) liveChildren(ctx context.Context, t *tree, p string) map[string]bool {
	if p == "" || !o.liveable(t, p) {
		return nil
	}
	l := o.listing(ctx, p)
	if l == nil || !l.ok {
		return nil
	}
	t = o.tree.Load()
	sn := t.skillAt(p)
	out := map[string]bool{}
	for name, isDir := range l.children {
		if o.hidden(t, joinPath(p, name)) {
			continue
		}
		if isDir || (sn != nil && sn.s.Dynamic) {
			out[name] = isDir
		}
	}
	return out
}

// hidden reports whether a directory directory reads found is a skill
// skillfs rejected (from the listing, or when skills/get could not confirm
// it): it stays out of the tree rather than show up empty.
func (o *origin) hidden(t *tree, p string) bool {
	if t.rejectedDirs[p] {
		return true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.unconfirmed[p]
}

// listing returns the directory read of p, from the cache or the server;
// nil when the server could not be asked.
func (o *origin) listing(ctx context.Context, p string) *liveListing {
	o.mu.Lock()
	l := o.live[p]
	o.mu.Unlock()
	if l != nil && o.fs.now().Sub(l.at) < liveTTL {
		return l
	}
	u, err := verify.URIFromPath(p)
	if err != nil {
		return nil
	}
	kids, err := o.res.ReadDir(ctx, u)
	switch {
	case errors.Is(err, resolver.ErrNotServed):
		l = &liveListing{at: o.fs.now()}
	case err != nil:
		if !errors.Is(err, context.Canceled) {
			o.log.Warn("directory read failed", "op", "readdir", "path", joinPath(o.cfg.Label, p), "err", err)
		}
		return nil
	default:
		l = &liveListing{at: o.fs.now(), ok: true, children: map[string]bool{}}
		for _, k := range kids {
			l.children[k.URI.Name()] = k.Dir
		}
	}
	o.mu.Lock()
	o.live[p] = l
	o.mu.Unlock()
	if l.ok {
		if isDir, ok := l.children["SKILL.md"]; ok && !isDir {
			if t := o.tree.Load(); t.nodes[p] == nil || t.nodes[p].skill == nil {
				if sm, err := u.Child("SKILL.md"); err == nil {
					o.confirm(ctx, sm.String())
				}
			}
		}
	}
	return l
}

// confirm asks for an unlisted skill with skills/get and, when the entry
// passes, holds it like a listed one.
func (o *origin) confirm(ctx context.Context, uri string) {
	o.mu.Lock()
	last, asked := o.confirmedAt[uri]
	due := !asked || o.fs.now().Sub(last) >= confirmRetry
	if due {
		o.confirmedAt[uri] = o.fs.now()
	}
	o.mu.Unlock()
	if !due {
		return
	}
	s, err := o.res.GetSkill(ctx, uri)
	if err != nil {
		o.log.Warn("unlisted skill not confirmed", "op", "get", "uri", uri, "err", err)
		if u, perr := verify.ParseURI(uri); perr == nil && !errors.Is(err, resolver.ErrOffline) && !errors.Is(err, context.Canceled) {
			if d, ok := u.Parent(); ok {
				o.mu.Lock()
				was := o.unconfirmed[d.Path()]
				o.unconfirmed[d.Path()] = true
				o.mu.Unlock()
				if !was {
					// The kernel may already know the directory.
					o.changed(nil, []string{parentOf(d.Path())})
				}
			}
		}
		return
	}
	o.log.Info("unlisted skill confirmed with skills/get", "op", "get", "uri", uri)
	o.mu.Lock()
	o.extra[s.URI.String()] = s
	o.mu.Unlock()
	o.swap(func(t *tree) (*resolver.Catalog, string) {
		return t.catalog(), t.source
	})
	o.saveCatalog()
}

// withExtra adds the skills confirmed with skills/get that a catalog does
// not carry itself.
func (o *origin) withExtra(c *resolver.Catalog) *resolver.Catalog {
	o.mu.Lock()
	extra := maps.Clone(o.extra)
	o.mu.Unlock()
	if len(extra) == 0 {
		return c
	}
	out := *c
	out.Skills = slices.Clone(c.Skills)
	for _, s := range c.Skills {
		delete(extra, s.URI.String())
	}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		out.Skills = append(out.Skills, extra[k])
	}
	return &out
}
