package resolver

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/resolver/transport"
	"github.com/skillfs/skillfs/verify"
)

// Fetch reads one file with resources/read and returns its raw bytes,
// unverified. The response is refused before it is decoded when it is
// larger than the file's declared size allows (or the per-file cap, when
// the size is unknown), and the bytes are charged to the origin's budget.
func (o *Session) Fetch(ctx context.Context, r skill.Resource) ([]byte, error) {
	return o.fetch(ctx, r, o.budget)
}

// FetchToKeep is Fetch for a file fetched in the background only to be
// kept (the approved version of a file, for the diff of a later change):
// its bytes are charged to the origin's keep budget, a quarter of its
// budget with its own window (KeepBudget), and never to the budget the
// reads of the mount's users spend. Over the keep budget it fails with
// ErrOverBudget before anything is sent.
func (o *Session) FetchToKeep(ctx context.Context, r skill.Resource) ([]byte, error) {
	return o.fetch(ctx, r, o.keepBudget)
}

// KeepBudget is the keep budget of an origin whose budget is limit: a
// quarter of it (at least one byte, so that a budget is never unlimited
// for keeps).
func KeepBudget(limit int64) int64 { return max(limit/4, 1) }

func (o *Session) fetch(ctx context.Context, r skill.Resource, acct *budget) (_ []byte, err error) {
	defer func() { err = redact(err) }()
	cap := o.limits.MaxFileSize
	if r.HasSize {
		if r.Size > cap {
			return nil, fmt.Errorf("read %s: %w: declared size %d is over the per-file cap of %d bytes", r.URI, ErrTooLarge, r.Size, cap)
		}
		cap = r.Size
	}
	reserve := cap
	if !r.HasSize {
		// Unknown sizes reserve nothing up front; the bytes are charged
		// when they arrive.
		reserve = 0
	}
	slice, err := acct.take(o.now(), reserve)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", r.URI, err)
	}
	b, err := o.read(ctx, r.URI, cap)
	acct.settle(o.now(), slice, reserve, int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", r.URI, err)
	}
	return b, nil
}

func (o *Session) read(ctx context.Context, uri string, cap int64) ([]byte, error) {
	l, err := o.board.session(ctx)
	if err != nil {
		return nil, err
	}
	want, err := verify.ParseURI(uri)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, o.limits.CallTimeout)
	defer cancel()
	o.reads.Add(1)
	lctx := transport.WithResponseLimit(cctx, readLimit(cap, maxFrame(o.limits.MaxFileSize)))
	// The transport decodes the file's string itself, into strings
	// (transport.WithContents), and go-sdk decodes the rest.
	var strs transport.Contents
	lctx = transport.WithContents(lctx, &strs)
	// The server's own spelling, as its entry listed it: a server may match
	// URIs as exact strings (go-sdk's resource table does), so a host that
	// sent its canonical form instead would miss a file listed as %2A where
	// the canonical form has "*". The answer is matched canonically.
	unlock := o.reading.lock(uri)
	res, err := l.cs.ReadResource(lctx, &mcp.ReadResourceParams{URI: uri})
	items, taken := strs.Items()
	if err == nil {
		if taken {
			// What go-sdk cached has "" for the file: gone before another
			// read of the URI can ask go-sdk for it (the lock), whatever
			// ttlMs the server gave (go-sdk's cache holds this very result,
			// and drops one whose ttlMs is 0 when it is looked up).
			res.TTLMs = 0
			evict(l.cs, uri)
		} else {
			evictLater(l.cs, uri, res)
		}
	}
	unlock()
	if err != nil {
		return nil, o.board.lost(l, classify(err))
	}
	found := -1
	for i, c := range res.Contents {
		if c == nil {
			continue
		}
		if u, err := verify.ParseURI(c.URI); err == nil && u.String() == want.String() {
			if found >= 0 {
				return nil, fmt.Errorf("%w: two contents for the one URI", ErrMalformed)
			}
			found = i
		}
	}
	if found < 0 {
		return nil, fmt.Errorf("%w: no contents for the URI asked for", ErrMalformed)
	}
	c := res.Contents[found]
	text, blob, hasBlob := textBytes(c.Text), c.Blob, c.Blob != nil
	if taken {
		if len(items) != len(res.Contents) || items[found].URI != c.URI {
			// Both decoded one message: this would be a bug, not the server.
			return nil, fmt.Errorf("%w: the contents decoded twice do not agree", ErrMalformed)
		}
		it := items[found]
		text, blob, hasBlob = it.Text, it.Blob, it.HasBlob
	}
	b := text
	switch {
	case hasBlob && len(text) > 0:
		return nil, fmt.Errorf("%w: contents carry both text and blob", ErrMalformed)
	case hasBlob:
		b = blob
	}
	if int64(len(b)) > cap {
		return nil, fmt.Errorf("%w: %d bytes, more than the %d allowed", ErrTooLarge, len(b), cap)
	}
	return b, nil
}

// uriLocks holds one read of a URI at a time, so that no read finds in
// go-sdk's cache what another read left there for the moment between its
// answer and its eviction.
type uriLocks struct {
	mu sync.Mutex
	m  map[string]*uriLock
}

type uriLock struct {
	mu    sync.Mutex
	users int
}

// lock waits for the URI's other reads and returns what lets the next in.
func (t *uriLocks) lock(uri string) (unlock func()) {
	t.mu.Lock()
	if t.m == nil {
		t.m = map[string]*uriLock{}
	}
	l := t.m[uri]
	if l == nil {
		l = &uriLock{}
		t.m[uri] = l
	}
	l.users++
	t.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		t.mu.Lock()
		if l.users--; l.users == 0 {
			delete(t.m, uri)
		}
		t.mu.Unlock()
	}
}

// textBytes returns the bytes of a text content without copying them:
// the decoded string is the one copy of the file the response leaves, and
// fetched bytes are never written to (the store, the checks and the mount
// only read them), so the string's immutability holds.
func textBytes(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// go-sdk v1.8.0 keeps every resources/read result of a 2026-07-28 session
// in a per-session cache, and removes an entry only when the same URI is
// read again. skillfs reads a URI once and keeps the verified bytes itself,
// so that cache would grow by every file ever read. Calling ReadResource
// with an eviction context makes the SDK drop the entry (its lookup deletes
// an expired one) and then stops the call in dropEvictions before anything
// is sent. An entry with a ttlMs is evicted when it expires.

type evictKey struct{}

var errEvicted = errors.New("eviction only: not sent")

func evictLater(cs *mcp.ClientSession, uri string, res *mcp.ReadResourceResult) {
	if ttl := res.GetTTLMs(); ttl > 0 {
		time.AfterFunc(time.Duration(ttl)*time.Millisecond+time.Millisecond, func() { evict(cs, uri) })
		return
	}
	evict(cs, uri)
}

func evict(cs *mcp.ClientSession, uri string) {
	ctx := context.WithValue(context.Background(), evictKey{}, true)
	cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
}

// dropEvictions ends eviction calls before they reach the transport.
func dropEvictions(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ctx.Value(evictKey{}) != nil {
			return nil, errEvicted
		}
		return next(ctx, method, req)
	}
}
