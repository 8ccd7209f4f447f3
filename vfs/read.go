package vfs

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/skillfs/skillfs/resolver"
	"github.com/skillfs/skillfs/skill"
	"github.com/skillfs/skillfs/store"
	"github.com/skillfs/skillfs/verify"
)

// staleRetry bounds how often a failed read may ask the server for a fresh
// entry of one skill.
const staleRetry = 10 * time.Second

// A ReadError is a failed read: the file exists but its bytes could not be
// served. Reason is the stable word index.json shows.
type ReadError struct {
	Path   string
	Reason string
	Err    error
}

func (e *ReadError) Error() string { return fmt.Sprintf("read %s: %s: %v", e.Path, e.Reason, e.Err) }
func (e *ReadError) Unwrap() error { return e.Err }

// Reasons for failed reads beyond verify's.
const (
	ReasonOffline   = "offline"
	ReasonBudget    = "over-budget"
	ReasonTooLarge  = "over-limit"
	ReasonTimeout   = "timeout"
	ReasonNotServed = "not-served"
	ReasonMalformed = "malformed-response"
	ReasonConflict  = "conflict"
	ReasonRemoved   = "removed"
	ReasonServer    = "server-error"
)

func reasonOf(err error) string {
	if r := verify.ReasonOf(err); r != "" {
		return string(r)
	}
	switch {
	case errors.Is(err, resolver.ErrOffline):
		return ReasonOffline
	case errors.Is(err, resolver.ErrOverBudget):
		return ReasonBudget
	case errors.Is(err, resolver.ErrTooLarge):
		return ReasonTooLarge
	case errors.Is(err, resolver.ErrTimeout):
		return ReasonTimeout
	case errors.Is(err, resolver.ErrNotServed):
		return ReasonNotServed
	case errors.Is(err, resolver.ErrMalformed):
		return ReasonMalformed
	}
	return ReasonServer
}

// A Handle is an open file. It is bound to the tree node it was opened on;
// its bytes are loaded on the first ReadAt and kept for the life of the
// handle.
type Handle struct {
	fs   *FS
	o    *origin
	n    *node
	meta []byte // generated files

	mu   sync.Mutex
	data []byte
	err  error
}

// Open opens the file at a mount-relative path. It fetches nothing.
func (f *FS) Open(ctx context.Context, p string) (*Handle, error) {
	if strings.HasPrefix(p, MetaDir+"/") {
		b, err := f.renderMeta(p)
		if err != nil {
			return nil, err
		}
		return &Handle{fs: f, meta: b}, nil
	}
	o, rest, ok := f.resolve(p)
	if !ok {
		return nil, ErrNotExist
	}
	n, err := o.lookup(ctx, rest)
	if err != nil {
		return nil, err
	}
	if n.isDir() {
		return nil, ErrIsDir
	}
	return &Handle{fs: f, o: o, n: n}, nil
}

// ReadAt reads verified bytes of the file at p, loading it on the first
// read. The mount reads this way: it keeps no open handles.
func (f *FS) ReadAt(ctx context.Context, p string, dst []byte, off int64) (int, error) {
	b, err := f.ReadFile(ctx, p)
	if err != nil {
		return 0, err
	}
	if off >= int64(len(b)) {
		return 0, nil
	}
	return copy(dst, b[off:]), nil
}

// ReadFile returns the whole verified content of the file at p. The slice
// must not be modified.
func (f *FS) ReadFile(ctx context.Context, p string) ([]byte, error) {
	h, err := f.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	return h.Bytes(ctx)
}

// ErrIsDir is returned when a file operation names a directory.
var ErrIsDir = errors.New("is a directory")

// ReadAt reads verified bytes at off. The first call loads the file.
func (h *Handle) ReadAt(ctx context.Context, dst []byte, off int64) (int, error) {
	b, err := h.bytes(ctx)
	if err != nil {
		return 0, err
	}
	if off >= int64(len(b)) {
		return 0, nil
	}
	return copy(dst, b[off:]), nil
}

// Bytes returns the whole verified content, loading it if needed. The
// slice must not be modified.
func (h *Handle) Bytes(ctx context.Context) ([]byte, error) { return h.bytes(ctx) }

func (h *Handle) bytes(ctx context.Context) ([]byte, error) {
	if h.meta != nil {
		return h.meta, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.data != nil {
		return h.data, nil
	}
	b, err := h.o.load(ctx, h.n)
	if err != nil {
		return nil, err
	}
	h.data = b
	return b, nil
}

// load returns the verified bytes of a file node, from the store or the
// server.
func (o *origin) load(ctx context.Context, n *node) ([]byte, error) {
	f := n.file
	if f.conflict != "" {
		return nil, o.fail(n.path, &ReadError{Path: n.path, Reason: ReasonConflict, Err: errors.New(f.conflict)})
	}
	if f.dynamic {
		return o.flight.do(ctx, "dyn\x00"+n.path, func(fctx context.Context) ([]byte, error) {
			return o.fetchDynamic(fctx, n)
		})
	}
	if b, err := o.store.Get(f.f.Resource.Digest); err == nil {
		o.noteVerified(f.f.Resource, b)
		return b, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		o.log.Warn("store read failed", "op", "read", "path", n.path, "err", err)
	}
	return o.flight.do(ctx, string(f.f.Resource.Digest)+"\x00"+n.path, func(fctx context.Context) ([]byte, error) {
		return o.fetchVerified(fctx, n)
	})
}

// fetchVerified fetches a file, checks it against the held entry and
// stores it. A failed check gets one chance through skills/get.
func (o *origin) fetchVerified(ctx context.Context, n *node) ([]byte, error) {
	// A fetch that finished just before this one started has kept the
	// bytes already.
	if b, ok := o.store.Cached(n.file.f.Resource.Digest); ok {
		return b, nil
	}
	b, err := o.fetchAndCheck(ctx, n, nil)
	if err == nil || !isStale(err) {
		return b, o.fail(n.path, err)
	}
	first := err
	fresh, changed := o.refreshOwners(ctx, n)
	if !changed {
		return nil, o.fail(n.path, first)
	}
	if fresh == nil {
		return nil, o.fail(n.path, &ReadError{Path: n.path, Reason: ReasonRemoved,
			Err: fmt.Errorf("%v; the server's current entry no longer lists the file", first)})
	}
	o.log.Info("entry refreshed after a failed check; retrying once", "op", "read", "path", n.path, "err", first)
	b, err = o.fetchAndCheck(ctx, fresh, b)
	return b, o.fail(n.path, err)
}

// isStale reports whether a failed check may come from a stale listing.
func isStale(err error) bool {
	switch verify.ReasonOf(err) {
	case verify.SizeMismatch, verify.DigestMismatch, verify.FrontmatterMismatch:
		return true
	}
	return errors.Is(err, resolver.ErrTooLarge) || errors.Is(err, resolver.ErrNotServed)
}

// fetchAndCheck checks have (bytes already fetched, if any) and otherwise
// fetches the file; the bytes it returns passed every check and are stored.
func (o *origin) fetchAndCheck(ctx context.Context, n *node, have []byte) ([]byte, error) {
	f := n.file
	if have != nil && o.check(n, have) == nil {
		o.keep(n, have)
		return have, nil
	}
	b, err := o.res.Fetch(ctx, f.f.Resource)
	if err != nil {
		return nil, &ReadError{Path: n.path, Reason: reasonOf(err), Err: err}
	}
	if err := o.check(n, b); err != nil {
		return nil, &ReadError{Path: n.path, Reason: reasonOf(err), Err: err}
	}
	o.keep(n, b)
	return b, nil
}

// check verifies bytes against the node's resource and, for a SKILL.md,
// the frontmatter of every entry whose SKILL.md it is.
func (o *origin) check(n *node, b []byte) error {
	if err := verify.CheckContent(n.file.f.Resource, b); err != nil {
		return err
	}
	for _, sn := range n.file.entryOf {
		if err := verify.CompareFrontmatter(b, sn.s.Entry.Frontmatter); err != nil {
			return err
		}
	}
	return nil
}

// keep stores verified bytes and records what reading them taught us.
func (o *origin) keep(n *node, b []byte) {
	o.store.Keep(n.file.f.Resource.Digest, b)
	if len(b) >= largeFetch {
		releaseMemory()
	}
	o.noteVerified(n.file.f.Resource, b)
	o.noteFlags(n, b)
	o.mu.Lock()
	delete(o.failures, n.path)
	o.mu.Unlock()
}

func (o *origin) noteVerified(r skill.Resource, b []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.verified[string(r.Digest)] = struct{}{}
	if !r.HasSize {
		o.lengths[string(r.Digest)] = int64(len(b))
	}
}

// noteFlags records content flags of a SKILL.md for the index.
func (o *origin) noteFlags(n *node, b []byte) {
	if len(n.file.entryOf) == 0 {
		return
	}
	var flags []string
	for _, f := range verify.ContentFlags(b, true) {
		flags = append(flags, string(f))
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, sn := range n.file.entryOf {
		o.flags[sn.uri()] = flags
	}
}

// fail records a failed read for index.json and logs it once per change.
func (o *origin) fail(p string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	var re *ReadError
	if !errors.As(err, &re) {
		re = &ReadError{Path: p, Reason: reasonOf(err), Err: err}
	}
	o.mu.Lock()
	prev, seen := o.failures[p]
	o.failures[p] = failure{reason: re.Reason, detail: re.Err.Error(), at: o.fs.now()}
	o.mu.Unlock()
	if !seen || prev.reason != re.Reason {
		uri := ""
		if n := o.tree.Load().nodes[p]; n != nil && n.file != nil {
			uri = n.file.f.URI.String()
		}
		o.log.Warn("read failed", "op", "read", "path", joinPath(o.cfg.Label, p), "uri", uri, "reason", re.Reason, "err", re.Err)
	}
	return re
}

// refreshOwners asks the server again for the skills that list n, at most
// once per staleRetry each. When an entry changed, it swaps in a tree with
// the new entry and returns the node now at n's path (nil when the file is
// no longer listed) and true.
func (o *origin) refreshOwners(ctx context.Context, n *node) (*node, bool) {
	changed := false
	for _, sn := range n.file.owners {
		uri := sn.uri()
		o.mu.Lock()
		last, ok := o.gotAt[uri]
		due := !ok || o.fs.now().Sub(last) >= staleRetry
		if due {
			o.gotAt[uri] = o.fs.now()
		}
		o.mu.Unlock()
		if !due {
			continue
		}
		s, err := o.res.GetSkill(ctx, uri)
		if err != nil {
			o.log.Warn("skills/get after a failed check", "op", "get", "uri", uri, "err", err)
			continue
		}
		if sameSkill(sn.s, s) {
			continue
		}
		changed = true
		o.replace(sn.s, s)
	}
	if !changed {
		return nil, false
	}
	fresh := o.tree.Load().nodes[n.path]
	if fresh == nil || fresh.isDir() || fresh.file.f.Resource.URI != n.file.f.Resource.URI {
		return nil, true
	}
	return fresh, true
}

func sameSkill(a, b *verify.Skill) bool {
	return sameEntryJSON(a.Entry, b.Entry)
}

// replace swaps one held entry for a fresh one and saves the catalog.
func (o *origin) replace(old, fresh *verify.Skill) {
	o.swap(func(t *tree) (*resolver.Catalog, string) {
		c := t.catalog()
		for i, s := range c.Skills {
			if s.URI.String() == old.URI.String() {
				c.Skills[i] = fresh
			}
		}
		return c, t.source
	})
	o.saveCatalog()
}

// fetchDynamic reads a file of a dynamic skill: there is no digest to check
// against, so only the caps and, for the SKILL.md, the frontmatter apply.
// The bytes are not stored.
func (o *origin) fetchDynamic(ctx context.Context, n *node) ([]byte, error) {
	b, err := o.res.Fetch(ctx, skill.Resource{URI: n.file.f.Resource.URI})
	if err != nil {
		return nil, o.fail(n.path, &ReadError{Path: n.path, Reason: reasonOf(err), Err: err})
	}
	for _, sn := range n.file.entryOf {
		if err := verify.CompareFrontmatter(b, sn.s.Entry.Frontmatter); err != nil {
			return nil, o.fail(n.path, &ReadError{Path: n.path, Reason: reasonOf(err), Err: err})
		}
	}
	o.noteFlags(n, b)
	return b, nil
}

// largeFetch is the size from which a fetch is worth returning its
// transient memory to the system: decoding a response of n bytes briefly
// takes several times n, and without this the daemon's RSS would stay at
// the high-water mark of its largest fetch.
const largeFetch = 1 << 20

var (
	releaseMu   sync.Mutex
	releaseNext time.Time
	releaseDue  bool
)

// releaseMemory returns freed memory to the system soon, at most once every
// two seconds, off the read path.
func releaseMemory() {
	releaseMu.Lock()
	defer releaseMu.Unlock()
	if releaseDue {
		return
	}
	releaseDue = true
	wait := max(time.Until(releaseNext), 100*time.Millisecond)
	time.AfterFunc(wait, func() {
		debug.FreeOSMemory()
		releaseMu.Lock()
		releaseDue = false
		releaseNext = time.Now().Add(2 * time.Second)
		releaseMu.Unlock()
	})
}
