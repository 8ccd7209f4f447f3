package vfs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/skillfs/skillfs/resolver"
	"github.com/skillfs/skillfs/skill"
	"github.com/skillfs/skillfs/store"
	"github.com/skillfs/skillfs/verify"
)

// DefaultStaleRetry bounds how often a failed read may ask the server for a
// fresh entry of one skill (Options.StaleRetry).
const DefaultStaleRetry = 10 * time.Second

// A ReadError is a failed read: the file exists but its bytes could not be
// served. Reason is the stable word index.json shows.
type ReadError struct {
	Path   string
	Reason string
	Err    error
	// fetched are the bytes of a fetch that failed its check, which a
	// fresh entry may yet match.
	fetched []byte
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
	ReasonBusy      = "busy"
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
	case errors.Is(err, errBusy):
		return ReasonBusy
	case errors.Is(err, errDynamicTotal):
		return ReasonTooLarge
	}
	return ReasonServer
}

// ReadFile returns the whole verified content of the file at p: what a
// reader that opens it now and reads to the end gets. The slice must not be
// modified.
func (f *FS) ReadFile(ctx context.Context, p string) ([]byte, error) {
	if strings.HasPrefix(p, MetaDir+"/") {
		return f.renderMeta(p)
	}
	_, fl, err := f.Lookup(ctx, p)
	if err != nil {
		return nil, err
	}
	if fl == nil {
		return nil, ErrIsDir
	}
	defer fl.Forget()
	return fl.Read(ctx, 0, math.MaxInt)
}

// ErrIsDir is returned when a file operation names a directory.
var ErrIsDir = errors.New("is a directory")

// load returns the verified bytes of a file node, from the store or the
// server, with the node they were verified against: n, or the node that
// replaced it when a failed check led to a fresh entry. The checks that
// depend on the entry (a SKILL.md's frontmatter) run here, on every load,
// whichever cache the bytes came from.
func (o *origin) load(ctx context.Context, n *node) ([]byte, *node, error) {
	if c := n.file.conflict; c != "" {
		return nil, n, o.fail(n.path, &ReadError{Path: n.path, Reason: ReasonConflict, Err: errors.New(c)})
	}
	b, err := o.obtain(ctx, n, nil)
	if err == nil {
		if err = o.checkEntry(n, b); err == nil {
			return b, n, nil
		}
		err = &ReadError{Path: n.path, Reason: reasonOf(err), Err: err}
	}
	if !isStale(err) {
		return nil, n, o.fail(n.path, err)
	}
	first := err
	fresh, changed := o.refreshOwners(ctx, n)
	if !changed {
		return nil, n, o.fail(n.path, first)
	}
	if fresh == nil {
		return nil, n, o.fail(n.path, &ReadError{Path: n.path, Reason: ReasonRemoved,
			Err: fmt.Errorf("%v; the server's current entry no longer lists the file", first)})
	}
	o.log.Info("entry refreshed after a failed check; retrying once", "op", "read", "path", n.path, "err", first)
	var have []byte
	var re *ReadError
	if errors.As(first, &re) {
		have = re.fetched
	}
	if b, err = o.obtain(ctx, fresh, have); err == nil {
		if err = o.checkEntry(fresh, b); err != nil {
			err = &ReadError{Path: n.path, Reason: reasonOf(err), Err: err}
		}
	}
	if err != nil {
		return nil, fresh, o.fail(n.path, err)
	}
	return b, fresh, nil
}

// obtain returns bytes that match n's resource: from the store (re-hashed
// on every load from disk), from have when they match, or fetched. Only
// content is checked here; see checkEntry.
func (o *origin) obtain(ctx context.Context, n *node, have []byte) ([]byte, error) {
	r := n.file.f.Resource
	if have != nil && verify.CheckContent(r, have) == nil {
		o.keep(n, have)
		return have, nil
	}
	if b, err := o.store.Get(r.Digest); err == nil {
		o.noteLength(r, b)
		return b, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		o.log.Warn("store read failed", "op", "read", "path", n.path, "err", err)
	}
	return o.flight.do(ctx, string(r.Digest)+"\x00"+n.path, func(fctx context.Context) ([]byte, error) {
		// A fetch that finished just before this one started has kept the
		// bytes already.
		if b, ok := o.store.Cached(r.Digest); ok {
			return b, nil
		}
		return o.fetch(fctx, n)
	})
}

// fetch reads a file from the server within the origin's bounds and checks
// it against the resource.
func (o *origin) fetch(ctx context.Context, n *node) ([]byte, error) {
	r := n.file.f.Resource
	release, err := o.gate.enter(ctx, o.expected(r))
	if err != nil {
		return nil, &ReadError{Path: n.path, Reason: reasonOf(err), Err: err}
	}
	b, err := o.res.Fetch(ctx, r)
	release()
	if err != nil {
		return nil, &ReadError{Path: n.path, Reason: reasonOf(err), Err: err}
	}
	if err := verify.CheckContent(r, b); err != nil {
		return nil, &ReadError{Path: n.path, Reason: reasonOf(err), Err: err, fetched: b}
	}
	o.keep(n, b)
	return b, nil
}

// expected is the most a fetch of r can bring.
func (o *origin) expected(r skill.Resource) int64 {
	if r.HasSize {
		return r.Size
	}
	return o.cfg.Limits.MaxFileSize
}

// isStale reports whether a failed check may come from a stale listing.
func isStale(err error) bool {
	switch verify.ReasonOf(err) {
	case verify.SizeMismatch, verify.DigestMismatch, verify.FrontmatterMismatch:
		return true
	}
	return errors.Is(err, resolver.ErrTooLarge) || errors.Is(err, resolver.ErrNotServed)
}

// checkEntry runs the checks that belong to the entry a file is served
// under rather than to its bytes: a SKILL.md's frontmatter must equal each
// entry's whose SKILL.md it is, and its content flags are recorded for that
// (entry, digest). The outcome is kept on the node, which lives as long as
// the tree it belongs to.
func (o *origin) checkEntry(n *node, b []byte) error {
	f := n.file
	d := string(f.f.Resource.Digest)
	if c := f.checked.Load(); c != nil && c.digest == d {
		return c.err
	}
	c := &checkResult{digest: d}
	for _, sn := range f.entryOf {
		if err := verify.CompareFrontmatter(b, sn.s.Entry.Frontmatter); err != nil {
			c.err = err
			break
		}
	}
	if c.err == nil && len(f.entryOf) > 0 {
		for _, fl := range verify.ContentFlags(b, true) {
			c.flags = append(c.flags, string(fl))
		}
	}
	f.checked.Store(c)
	if c.err == nil {
		o.noteVerified(f, c.flags)
	}
	return c.err
}

// keep stores bytes that match their resource.
func (o *origin) keep(n *node, b []byte) {
	o.store.Keep(n.file.f.Resource.Digest, b)
	if len(b) >= largeFetch {
		releaseMemory()
	}
	o.noteLength(n.file.f.Resource, b)
	o.mu.Lock()
	delete(o.failures, n.path)
	o.mu.Unlock()
}

// noteLength learns the length of a file whose entry declares none.
func (o *origin) noteLength(r skill.Resource, b []byte) {
	if r.HasSize || r.Digest == "" {
		return
	}
	o.mu.Lock()
	o.lengths[string(r.Digest)] = int64(len(b))
	o.mu.Unlock()
}

// noteVerified records that a file version passed every check, and the
// content flags of a SKILL.md, which are kept with the store across
// restarts.
func (o *origin) noteVerified(f *fileNode, flags []string) {
	k := f.version.key()
	o.mu.Lock()
	o.verified[k] = struct{}{}
	changed := false
	if len(f.entryOf) > 0 {
		old, had := o.flags[k]
		changed = !had || !slices.Equal(old, flags)
		o.flags[k] = flags
	}
	o.mu.Unlock()
	if changed {
		o.saveFlags()
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
// once per Options.StaleRetry each. When an entry changed, it swaps in a tree with
// the new entry and returns the node now at n's path (nil when the file is
// no longer listed) and true.
func (o *origin) refreshOwners(ctx context.Context, n *node) (*node, bool) {
	changed := false
	for _, sn := range n.file.owners {
		uri := sn.uri()
		o.mu.Lock()
		last, ok := o.gotAt[uri]
		due := !ok || o.fs.now().Sub(last) >= o.fs.staleRetry
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
// The bytes are not stored; the File that asked serves them for its life.
// What the live Files of one dynamic skill hold together is bounded by the
// per-skill total (16 MiB), as the SEP asks of what a host retrieves.
func (o *origin) fetchDynamic(ctx context.Context, n *node, gen uint64) ([]byte, error) {
	r := skill.Resource{URI: n.file.f.Resource.URI}
	o.mu.Lock()
	if o.dynGen[n.path] == gen {
		o.dynGen[n.path] = gen + 1
	}
	o.mu.Unlock()
	release, err := o.gate.enter(ctx, o.expected(r))
	if err != nil {
		return nil, o.fail(n.path, &ReadError{Path: n.path, Reason: reasonOf(err), Err: err})
	}
	b, err := o.res.Fetch(ctx, r)
	release()
	if err != nil {
		return nil, o.fail(n.path, &ReadError{Path: n.path, Reason: reasonOf(err), Err: err})
	}
	for _, sn := range n.file.entryOf {
		if err := verify.CompareFrontmatter(b, sn.s.Entry.Frontmatter); err != nil {
			return nil, o.fail(n.path, &ReadError{Path: n.path, Reason: reasonOf(err), Err: err})
		}
	}
	skillURI := n.file.owners[0].uri()
	o.mu.Lock()
	held := o.dynHeld[skillURI]
	if held+int64(len(b)) > verify.DefaultMaxTotalSize {
		o.mu.Unlock()
		return nil, o.fail(n.path, &ReadError{Path: n.path, Reason: ReasonTooLarge,
			Err: fmt.Errorf("%w: %d bytes more would pass the %d held for the dynamic skill %s", errDynamicTotal, len(b), verify.DefaultMaxTotalSize, skillURI)})
	}
	o.dynHeld[skillURI] = held + int64(len(b))
	if len(n.file.entryOf) > 0 {
		var flags []string
		for _, fl := range verify.ContentFlags(b, true) {
			flags = append(flags, string(fl))
		}
		o.flags[n.file.version.key()] = flags
	}
	o.mu.Unlock()
	return b, nil
}

// errDynamicTotal: the files of one dynamic skill held at once passed the
// per-skill total.
var errDynamicTotal = errors.New("over the per-skill total")

// releaseDynamic gives back what a File of a dynamic skill held.
func (o *origin) releaseDynamic(n *node, size int64) {
	uri := n.file.owners[0].uri()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dynHeld[uri] -= size; o.dynHeld[uri] <= 0 {
		delete(o.dynHeld, uri)
	}
}

// dynamicGen is the generation new Files of a dynamic file start at.
func (o *origin) dynamicGen(p string) uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.dynGen[p]
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
