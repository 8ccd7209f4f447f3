package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// DefaultMaxFrame is the cap on one inbound message when Options.MaxFrame is
// zero: a 16 MiB file base64-encoded (4/3) plus room for the envelope.
const DefaultMaxFrame = 24 << 20

// CodeResponseTooLarge is the JSON-RPC error code of the error response this
// package substitutes for an inbound response that exceeded its limit. The SDK
// returns it to the caller as a *jsonrpc.Error.
//
// JSON-RPC leaves -32000..-32099 to implementations. go-sdk uses -32001..-32005
// for its own transport errors, MCP uses -32002 (resource not found) and
// -32020..-32022 and -32042; -32010 is taken by nobody.
const CodeResponseTooLarge = -32010

// Options configure the transports of this package.
type Options struct {
	// MaxFrame is the hard cap in bytes on any inbound JSON-RPC message. Zero
	// selects DefaultMaxFrame.
	MaxFrame int64
	// Headers are set on every HTTP request (Authorization and the like). The
	// stdio transports ignore them.
	Headers map[string]string
	// URL is the configured server URL. An HTTP client sends requests only
	// to its origin (scheme, host and port): a redirect to another origin,
	// or a legacy SSE endpoint event naming one, fails the request and
	// never carries Headers there. Empty: the origin of the first request.
	URL string
	// OnListChanged is called (from the read loop: it must not block) for
	// every dropped notification that may have been
	// notifications/resources/list_changed; see notifyRate.
	OnListChanged func()
	// Logger receives dropped-message warnings and, for Command, the server's
	// stderr lines (at Info, key "stderr"). Nil discards.
	Logger *slog.Logger
	// OnExit, for Command, is called once (from a goroutine of its own)
	// when the server ends on its own, with its exit status and the last
	// lines of its stderr; not when Close stopped it.
	OnExit func(Exit)
	// OnStderr, for Command, is called with each line the server writes
	// to its stderr while it runs (cut at 4 KiB, without its newline),
	// exactly as written: the caller escapes it before anyone sees it.
	// It is called from the one goroutine that reads stderr, in order.
	OnStderr func(line string)
	// termGrace, when set, replaces Command's termGrace (tests only).
	termGrace time.Duration
}

func (o Options) maxFrame() int64 {
	if o.MaxFrame > 0 {
		return o.MaxFrame
	}
	return DefaultMaxFrame
}

func (o Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

type responseLimitKey struct{}

// WithResponseLimit returns a context that limits the raw response to a call
// made with it to n bytes (the JSON-RPC message, envelope included). The
// connection's MaxFrame still applies when it is smaller. n <= 0 sets no
// limit.
func WithResponseLimit(ctx context.Context, n int64) context.Context {
	return context.WithValue(ctx, responseLimitKey{}, n)
}

func responseLimit(ctx context.Context) (int64, bool) {
	n, ok := ctx.Value(responseLimitKey{}).(int64)
	return n, ok && n > 0
}

// IsResponseTooLarge reports whether err carries the error response this
// package substitutes for an over-long response.
func IsResponseTooLarge(err error) bool {
	var werr *jsonrpc.Error
	return errors.As(err, &werr) && werr.Code == CodeResponseTooLarge
}

// refusal is the error response delivered in place of the response with the
// given raw id that exceeded limit bytes. rawID is a JSON string or number as
// the peer wrote it, so the SDK decodes the same id it would have decoded
// from the original.
func refusal(rawID []byte, limit int64) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`,
		rawID, CodeResponseTooLarge, refusalMessage(limit))
}

func refusalMessage(limit int64) string {
	return fmt.Sprintf("response larger than %d bytes refused", limit)
}

// parseID converts a raw JSON id as the SDK does (numbers through float64).
func parseID(raw []byte) (jsonrpc.ID, bool) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(v)
	if err != nil || !id.IsValid() {
		return jsonrpc.ID{}, false
	}
	return id, true
}

// limitTable maps the ids of calls in flight to the limit their caller set,
// and the Contents their responses' strings are decoded into, if any.
// An entry lives from the write of the call until its response is seen or
// the call's context ends, whichever comes first.
type limitTable struct {
	mu sync.Mutex
	m  map[jsonrpc.ID]*limitEntry
}

type limitEntry struct {
	limit int64
	sink  *Contents
	stop  func() bool
}

// add records limit and sink (nil: none) for id until the response arrives
// or ctx ends.
func (t *limitTable) add(ctx context.Context, id jsonrpc.ID, limit int64, sink *Contents) {
	e := &limitEntry{limit: limit, sink: sink}
	t.mu.Lock()
	if t.m == nil {
		t.m = make(map[jsonrpc.ID]*limitEntry)
	}
	if old := t.m[id]; old != nil {
		old.stop()
	}
	t.m[id] = e
	// Registered under the lock so that remove can never see e without its
	// stop function.
	e.stop = context.AfterFunc(ctx, func() { t.remove(id, e) })
	t.mu.Unlock()
}

// get returns the limit recorded for id.
func (t *limitTable) get(id jsonrpc.ID) (int64, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.m[id]
	if !ok {
		return 0, false
	}
	return e.limit, true
}

// take forgets id, its response having been seen, and returns the Contents
// its call registered.
func (t *limitTable) take(id jsonrpc.ID) *Contents {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.m[id]
	if !ok {
		return nil
	}
	e.stop()
	delete(t.m, id)
	return e.sink
}

func (t *limitTable) remove(id jsonrpc.ID, e *limitEntry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m[id] == e {
		delete(t.m, id)
	}
}

func (t *limitTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}
