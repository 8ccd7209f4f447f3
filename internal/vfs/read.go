package vfs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/internal/store"
	"github.com/skillfs/skillfs/resolver"
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
func (c *Core) ReadFile(ctx context.Context, p string) ([]byte, error) {
	if at := c.route(p); at.kind == atMeta && p != MetaDir {
		return c.gen.renderMeta(p)
	}
	_, fl, err := c.Lookup(ctx, p)
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

// A reader is one origin's read path: it loads a file's verified bytes
// from the store or the server (one fetch for concurrent first reads,
// within the origin's gate), runs the checks that belong to the entry, and
// asks for a fresh entry when a check suggests the listing is stale.
type reader struct {
	cfg        config.Origin
	mem        *memory // the mount's
	res        *resolver.Session
	store      *store.Bucket
	cat        *catalog
	flags      *flagBook
	failures   *failureLog
	dyn        *dynamics
	log        *slog.Logger
	now        func() time.Time
	staleRetry time.Duration
	flight     flight
	gate       *gate
	// life is the origin's (branch.life): fetches end with it.
	life context.Context

	retries throttle // skill uri → last staleness skills/get

	rejected rejections // entries whose SKILL.md failed verification (rejected.go)
	timedOut timeouts   // fetches that ran out of call_timeout
	learned  learned    // lengths and verified versions
}

// learned is what reading taught in this run.
type learned struct {
	mu       sync.Mutex
	lengths  map[string]int64    // digest → verified length, for entries without size
	verified map[string]struct{} // fileVersion.key → passed every check in this run
	// gen counts the additions to verified (see failureLog.gen).
	gen atomic.Uint64
}

// A throttle lets something happen for a key at most once per interval.
type throttle struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// due reports whether key may go now, and if so records that it went.
func (t *throttle) due(key string, now time.Time, every time.Duration) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if last, ok := t.last[key]; ok && now.Sub(last) < every {
		return false
	}
	if t.last == nil {
		t.last = map[string]time.Time{}
	}
	t.last[key] = now
	return true
}

// load returns the verified bytes of a file node, from the store or the
// server, with the node they were verified against: n, or the node that
// replaced it when a failed check led to a fresh entry. The checks that
// depend on the entry (a SKILL.md's frontmatter) run here, on every load,
// whichever cache the bytes came from.
func (rd *reader) load(ctx context.Context, n *node) ([]byte, *node, error) {
	if c := n.file.conflict; c != "" {
		return nil, n, rd.failures.record(n.path, &ReadError{Path: n.path, Reason: ReasonConflict, Err: errors.New(c)})
	}
	if err := rd.rejected.check(n); err != nil {
		return nil, n, rd.failures.record(n.path, err)
	}
	b, used, err := rd.loadChecked(ctx, n)
	rd.rejected.note(used, err)
	return b, used, err
}

// loadChecked is load for a file whose skill is not rejected.
func (rd *reader) loadChecked(ctx context.Context, n *node) ([]byte, *node, error) {
	b, err := rd.obtain(ctx, n, nil)
	if err == nil {
		if err = rd.checkEntry(n, b); err == nil {
			return b, n, nil
		}
		err = &ReadError{Path: n.path, Reason: reasonOf(err), Err: err}
	}
	if !isStale(err) {
		return nil, n, rd.failures.record(n.path, err)
	}
	first := err
	fresh, changed := rd.refreshOwners(ctx, n)
	if !changed {
		return nil, n, rd.failures.record(n.path, first)
	}
	if fresh == nil {
		if rd.cat.current().heldAt(n.path) {
			return nil, n, rd.failures.record(n.path, &ReadError{Path: n.path, Reason: ReasonNotApproved,
				Err: fmt.Errorf("%v; the server's current entry differs from the approved one, so the skill waits in skillfs pending", first)})
		}
		return nil, n, rd.failures.record(n.path, &ReadError{Path: n.path, Reason: ReasonRemoved,
			Err: fmt.Errorf("%v; the server's current entry no longer lists the file", first)})
	}
	rd.log.Info("entry refreshed after a failed check; retrying once", "op", "read", "path", n.path, "err", first)
	var have []byte
	var re *ReadError
	if errors.As(first, &re) {
		have = re.fetched
	}
	if b, err = rd.obtain(ctx, fresh, have); err == nil {
		if err = rd.checkEntry(fresh, b); err != nil {
			err = &ReadError{Path: n.path, Reason: reasonOf(err), Err: err}
		}
	}
	if err != nil {
		return nil, fresh, rd.failures.record(n.path, err)
	}
	return b, fresh, nil
}

// obtain returns bytes that match n's resource: from the store (re-hashed
// on every load from disk), from have when they match, or fetched. Only
// content is checked here; see checkEntry.
func (rd *reader) obtain(ctx context.Context, n *node, have []byte) ([]byte, error) {
	return rd.obtainFor(ctx, n, have, forRead)
}

// A purpose says whom a fetch is for, and so which of the origin's
// budgets it is charged to.
type purpose int

const (
	// forRead: a read of the mount, or a person's review; the origin's
	// budget.
	forRead purpose = iota
	// forKeep: the keeper of approved files (review.go); the keep budget,
	// which reads never spend.
	forKeep
)

// obtainFor is obtain for a fetch of the given purpose. A keep never
// shares a fetch with reads: a read that joined one would fail with the
// keep budget's refusal, and a keep that joined a read's would not be
// what it is charged as. The two fetching one file at once is rare (the
// keeper runs right after an approval) and costs one more fetch.
func (rd *reader) obtainFor(ctx context.Context, n *node, have []byte, why purpose) ([]byte, error) {
	r := *n.file.f.Resource
	if have != nil && verify.CheckContent(r, have) == nil {
		rd.keep(n, have)
		return have, nil
	}
	if b, err := rd.store.Get(r.Digest); err == nil {
		rd.learned.noteLength(r, b)
		return b, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		rd.log.Warn("store read failed", "op", "read", "path", n.path, "err", err)
	}
	key := string(r.Digest) + "\x00" + n.path
	if why == forKeep {
		key = "keep\x00" + key
	}
	if err := rd.timedOut.recent(key, rd.now()); err != nil {
		return nil, &ReadError{Path: n.path, Reason: ReasonTimeout, Err: err}
	}
	b, err := rd.flight.do(ctx, key, func(fctx context.Context) ([]byte, error) {
		// A fetch that finished just before this one started has kept the
		// bytes already.
		if b, ok := rd.store.Cached(r.Digest); ok {
			return b, nil
		}
		fctx, cancel := rd.detached(fctx)
		defer cancel()
		b, err := rd.fetch(fctx, n, why)
		var re *ReadError
		if errors.As(err, &re) && errors.Is(err, resolver.ErrTimeout) {
			rd.timedOut.note(key, re.Err, rd.now())
		}
		return b, err
	})
	return b, err
}

// detached returns the context of a fetch that no reader's cancellation
// ends (a reader interrupted while it waits gives up waiting, not the
// fetch): ctx's values without its cancellation, ended with the origin.
func (rd *reader) detached(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if rd.life == nil {
		return ctx, cancel
	}
	unhook := context.AfterFunc(rd.life, cancel)
	return ctx, func() {
		unhook()
		cancel()
	}
}

// timeoutMemory is how long a fetch that ran out of call_timeout is
// remembered for its file: reads of the file within it fail at once with
// the same error instead of asking the server again. It covers the
// kernel's retry of a read whose readahead failed, so one read(2) waits
// for call_timeout at most once (SEMANTICS.md).
const timeoutMemory = 5 * time.Second

type timedOutFetch struct {
	at  time.Time
	err error
}

// timeouts remembers, for timeoutMemory, the fetches that ran out of
// call_timeout, by flight key: the kernel re-issues a read whose
// readahead failed, and that retry must not wait call_timeout again.
type timeouts struct {
	mu sync.Mutex
	m  map[string]timedOutFetch
}

// note remembers a fetch that timed out at now.
func (t *timeouts) note(key string, err error, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]timedOutFetch{}
	}
	for k, f := range t.m {
		if now.Sub(f.at) >= timeoutMemory {
			delete(t.m, k)
		}
	}
	t.m[key] = timedOutFetch{at: now, err: err}
}

// recent returns the error of a fetch of key that timed out less than
// timeoutMemory before now, or nil.
func (t *timeouts) recent(key string, now time.Time) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	f, ok := t.m[key]
	if !ok {
		return nil
	}
	if ago := now.Sub(f.at); ago < timeoutMemory {
		return fmt.Errorf("%w (%s ago; not asked again for %s)", f.err, ago.Round(time.Millisecond), timeoutMemory)
	}
	delete(t.m, key)
	return nil
}

// fetch reads a file from the server within the origin's bounds and checks
// it against the resource.
func (rd *reader) fetch(ctx context.Context, n *node, why purpose) ([]byte, error) {
	r := *n.file.f.Resource
	release, err := rd.gate.enter(ctx, expected(r, rd.cfg.Limits.MaxFileSize))
	if err != nil {
		return nil, &ReadError{Path: n.path, Reason: reasonOf(err), Err: err}
	}
	fetch := rd.res.Fetch
	if why == forKeep {
		fetch = rd.res.FetchToKeep
	}
	b, err := fetch(ctx, r)
	release()
	if err != nil {
		return nil, &ReadError{Path: n.path, Reason: reasonOf(err), Err: err}
	}
	if err := verify.CheckContent(r, b); err != nil {
		return nil, &ReadError{Path: n.path, Reason: reasonOf(err), Err: err, fetched: b}
	}
	rd.keep(n, b)
	return b, nil
}

// expected is the most a fetch of r can bring, when the origin's files
// are at most maxFile bytes.
func expected(r skill.Resource, maxFile int64) int64 {
	if r.HasSize {
		return r.Size
	}
	return maxFile
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
func (rd *reader) checkEntry(n *node, b []byte) error {
	f := n.file
	if len(f.entryOf) == 0 {
		// No entry's SKILL.md: nothing to check, and no outcome to keep on
		// every node the kernel has had read.
		rd.noteVerified(f, nil)
		return nil
	}
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
	if c.err == nil {
		for _, fl := range verify.ContentFlags(b, true) {
			c.flags = append(c.flags, string(fl))
		}
	}
	f.checked.Store(c)
	if c.err == nil {
		rd.noteVerified(f, c.flags)
	}
	return c.err
}

// keep stores bytes that match their resource.
func (rd *reader) keep(n *node, b []byte) {
	rd.store.Keep(n.file.f.Resource.Digest, b)
	if len(b) >= largeFetch {
		rd.mem.releaseSoon()
	}
	rd.mem.releaseWhenQuiet(len(b))
	rd.learned.noteLength(*n.file.f.Resource, b)
	rd.failures.forget(n.path)
}

// noteLength learns the length of a file whose entry declares none.
func (l *learned) noteLength(r skill.Resource, b []byte) {
	if r.HasSize || r.Digest == "" {
		return
	}
	l.mu.Lock()
	l.lengths[string(r.Digest)] = int64(len(b))
	l.mu.Unlock()
}

// noteVerified records that a file version passed every check, and the
// content flags of a SKILL.md, which are kept with the store across
// restarts.
func (rd *reader) noteVerified(f *fileNode, flags []string) {
	k := f.key
	rd.learned.verify(k)
	if len(f.entryOf) > 0 && rd.flags.note(k, flags) {
		rd.flags.saveSoon(rd.cat.current())
	}
}

// verify records that the file version with key passed every check.
func (l *learned) verify(key string) {
	l.mu.Lock()
	if _, ok := l.verified[key]; !ok {
		l.verified[key] = struct{}{}
		l.gen.Add(1)
	}
	l.mu.Unlock()
}

// length is the verified length of a file whose entry declares no size,
// once it has been read.
func (l *learned) length(d skill.Digest) (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, ok := l.lengths[string(d)]
	return n, ok
}

// isVerified reports whether a file version passed every check in this run.
func (l *learned) isVerified(f *fileNode) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.verified[f.key]
	return ok
}

// refreshOwners asks the server again for the skills that list n, at most
// once per Options.StaleRetry each. When an entry changed, it swaps in a tree with
// the new entry and returns the node now at n's path (nil when the file is
// no longer listed) and true.
func (rd *reader) refreshOwners(ctx context.Context, n *node) (*node, bool) {
	changed := false
	for _, sn := range n.file.owners {
		uri := sn.uri()
		if !rd.retries.due(uri, rd.now(), rd.staleRetry) {
			continue
		}
		s, err := rd.res.GetSkill(ctx, sn.s.Entry.URI) // as the server spelled it
		if err != nil {
			rd.log.Warn("skills/get after a failed check", "op", "get", "uri", uri, "err", err)
			continue
		}
		if sameSkill(sn.s, s) {
			continue
		}
		changed = true
		rd.cat.replace(sn.s, s)
	}
	if !changed {
		return nil, false
	}
	fresh := rd.cat.current().nodes[n.path]
	if fresh == nil || fresh.isDir() || fresh.file.f.Resource.URI != n.file.f.Resource.URI {
		return nil, true
	}
	return fresh, true
}

func sameSkill(a, b *verify.Skill) bool {
	return a.Entry.Equal(b.Entry)
}

// fetchDynamic reads a file of a dynamic skill: there is no digest to check
// against, so only the caps and, for the SKILL.md, the frontmatter apply.
// The bytes are not stored; the File that asked serves them for its life.
// What the live Files of one dynamic skill hold together is bounded by the
// per-skill total (16 MiB), as the SEP asks of what a host retrieves.
func (rd *reader) fetchDynamic(ctx context.Context, n *node, gen uint64) ([]byte, error) {
	r := skill.Resource{URI: n.file.f.Resource.URI}
	rd.dyn.fetched(n.path, gen)
	release, err := rd.gate.enter(ctx, expected(r, rd.cfg.Limits.MaxFileSize))
	if err != nil {
		return nil, rd.failures.record(n.path, &ReadError{Path: n.path, Reason: reasonOf(err), Err: err})
	}
	b, err := rd.res.Fetch(ctx, r)
	release()
	if err != nil {
		return nil, rd.failures.record(n.path, &ReadError{Path: n.path, Reason: reasonOf(err), Err: err})
	}
	for _, sn := range n.file.entryOf {
		if err := verify.CompareFrontmatter(b, sn.s.Entry.Frontmatter); err != nil {
			return nil, rd.failures.record(n.path, &ReadError{Path: n.path, Reason: reasonOf(err), Err: err})
		}
	}
	if err := rd.dyn.hold(n, int64(len(b))); err != nil {
		return nil, rd.failures.record(n.path, &ReadError{Path: n.path, Reason: ReasonTooLarge, Err: err})
	}
	if len(n.file.entryOf) > 0 {
		var flags []string
		for _, fl := range verify.ContentFlags(b, true) {
			flags = append(flags, string(fl))
		}
		rd.flags.note(n.file.key, flags)
	}
	return b, nil
}
