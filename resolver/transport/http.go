package transport

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// maxPeek bounds how much of a POST body is read to learn its request id.
// skillfs's own requests are small; a larger body is passed on unread, and
// its response gets MaxFrame.
const maxPeek = 1 << 20

// HTTPClient returns a client for go-sdk's StreamableClientTransport and
// SSEClientTransport (field HTTPClient). It sets opts.Headers on every
// request and bounds every response body as the package doc describes.
//
// Use one client per connection: it keeps the per-call limits of the calls
// it carries in one table, keyed by JSON-RPC id, and ids restart with each
// session. Set the SDK transport's MaxEventSize above MaxFrame (MaxFrame plus
// 1 MiB is plenty): this client keeps every event it passes under MaxFrame
// plus a few KiB, and the SDK ends the session on an event over its own cap.
// And note that go-sdk's SSEClientTransport makes its GET stream with the
// context given to Client.Connect: a connect timeout on that context ends the
// legacy SSE session when it fires.
//
// The client talks to one origin only, opts.URL's (see Options.URL): it
// follows at most maxRedirects redirects within that origin, and fails a
// request with ErrCrossOrigin — before anything is sent, so before any
// configured header could leave — when a redirect, or a legacy SSE endpoint
// event, points anywhere else.
func HTTPClient(opts Options) *http.Client {
	rt := &roundTripper{
		base:    http.DefaultTransport,
		headers: opts.Headers,
		max:     opts.maxFrame(),
		log:     opts.logger(),
		limits:  new(limitTable),
		notes:   newNotifyLimiter(opts),
	}
	if u, err := url.Parse(opts.URL); err == nil && opts.URL != "" {
		rt.home, rt.origin = u, originOf(u)
	}
	return &http.Client{Transport: rt, CheckRedirect: rt.checkRedirect}
}

// maxRedirects bounds the redirects followed within the origin.
const maxRedirects = 5

// ErrCrossOrigin is the error (wrapped) of a request that would have left
// the configured server's origin: a redirect to another scheme, host or
// port, or a legacy SSE endpoint elsewhere.
var ErrCrossOrigin = errors.New("refused to leave the configured server's origin")

type roundTripper struct {
	base    http.RoundTripper
	headers map[string]string
	max     int64
	log     *slog.Logger
	limits  *limitTable
	notes   *notifyLimiter

	mu     sync.Mutex
	home   *url.URL // the configured URL; nil until known
	origin string   // home's origin
}

// originOf is u's scheme, host and port, the port made explicit, all in
// lower case: two URLs are the same origin when these are equal.
func originOf(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host + ":" + port
}

// home returns the configured URL and its origin, taking req's when none
// was configured.
func (rt *roundTripper) homeFor(req *http.Request) (*url.URL, string) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.home == nil {
		rt.home, rt.origin = req.URL, originOf(req.URL)
	}
	return rt.home, rt.origin
}

// checkRedirect is the client's CheckRedirect: redirects within the origin
// are followed, up to maxRedirects; any other fails the request.
func (rt *roundTripper) checkRedirect(req *http.Request, via []*http.Request) error {
	from := via[len(via)-1].URL
	_, home := rt.homeFor(via[0])
	if to := originOf(req.URL); to != home {
		return fmt.Errorf("%w: %s redirected to %s, which is not %s", ErrCrossOrigin, redact(from), redact(req.URL), home)
	}
	if len(via) > maxRedirects {
		return fmt.Errorf("stopped after %d redirects (from %s)", maxRedirects, redact(via[0].URL))
	}
	return nil
}

// redact is u without user info, query or fragment, which may carry secrets.
func redact(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = nil, "", false, "", ""
	return c.String()
}

// httpCall is what a POST carrying a JSON-RPC call says about its response.
type httpCall struct {
	rawID []byte
	id    jsonrpc.ID
	limit int64
}

func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	// The last line of defence, whatever asked for req: configured headers
	// never leave the origin, because nothing does.
	if _, home := rt.homeFor(req); originOf(req.URL) != home {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("%w: request to %s, which is not %s", ErrCrossOrigin, redact(req.URL), home)
	}
	r := req.Clone(req.Context())
	for k, v := range rt.headers {
		r.Header.Set(k, v)
	}
	var call *httpCall
	if req.Method == http.MethodPost && req.Body != nil && req.Body != http.NoBody {
		var err error
		if call, err = rt.peek(r); err != nil {
			return nil, err
		}
	}
	resp, err := rt.base.RoundTrip(r)
	if err != nil {
		if call != nil {
			rt.limits.take(call.id)
		}
		return nil, err
	}
	rt.bound(resp, call)
	return resp, nil
}

// checkEndpoint refuses a legacy SSE endpoint event that names another
// origin. go-sdk resolves the event's data against the configured URL.
func (rt *roundTripper) checkEndpoint(data string) error {
	rt.mu.Lock()
	home, origin := rt.home, rt.origin
	rt.mu.Unlock()
	if home == nil {
		return nil // no request has been made: cannot happen
	}
	u, err := home.Parse(strings.TrimSpace(data))
	if err != nil {
		return fmt.Errorf("SSE endpoint event %q: %w", data, err)
	}
	if originOf(u) != origin {
		return fmt.Errorf("%w: the SSE endpoint event names %s, which is not %s", ErrCrossOrigin, redact(u), origin)
	}
	return nil
}

// peek reads r's (small) body to learn whether it carries a call, records the
// call's limit, and puts the body back.
func (rt *roundTripper) peek(r *http.Request) (*httpCall, error) {
	body := r.Body
	b, err := io.ReadAll(io.LimitReader(body, maxPeek+1))
	if err != nil {
		body.Close()
		return nil, fmt.Errorf("read request body for %s: %w", r.URL.Redacted(), err)
	}
	if len(b) > maxPeek {
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(b), body), body}
		r.GetBody = nil
		return nil, nil
	}
	body.Close()
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	r.ContentLength = int64(len(b))

	var sc idScanner
	sc.feed(b)
	if !sc.object || !sc.method || sc.id == nil {
		return nil, nil // a notification, a response, a batch
	}
	id, ok := parseID(sc.id)
	if !ok {
		return nil, nil
	}
	call := &httpCall{rawID: sc.id, id: id, limit: rt.max}
	if l, ok := responseLimit(r.Context()); ok && l < rt.max {
		call.limit = l
	}
	if sink := contentsOf(r.Context()); call.limit < rt.max || sink != nil {
		// The event stream's filter finds the limit and the sink here,
		// on the POST's own response or (legacy SSE) the GET stream.
		rt.limits.add(r.Context(), id, call.limit, sink)
	}
	return call, nil
}

// bound wraps resp.Body according to what it carries.
func (rt *roundTripper) bound(resp *http.Response, call *httpCall) {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case ct == "text/event-stream":
		f := newSSEFilter(resp.Body, rt.max, rt.limits, rt.log)
		f.endpoint = rt.checkEndpoint
		f.notes = rt.notes
		resp.Body = f
	case ct == "application/json" && call != nil:
		// The response is this body: the table entry is not needed.
		rt.limits.take(call.id)
		resp.Body = &jsonBody{rc: resp.Body, call: call, log: rt.log}
	default:
		resp.Body = &cappedBody{rc: resp.Body, max: rt.max}
		return
	}
	// The body may be rewritten.
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
}

// jsonBody is the application/json response to a call. It reads at most the
// call's limit plus one byte; past that it closes the real body and reads as
// a refusal for the call's id.
type jsonBody struct {
	rc   io.ReadCloser
	call *httpCall
	log  *slog.Logger
	r    *bytes.Reader
	err  error
}

func (b *jsonBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.r == nil {
		data, over, err := readCapped(b.rc, b.call.limit)
		if err != nil {
			b.err = fmt.Errorf("read response body: %w", err)
			return 0, b.err
		}
		if over {
			b.rc.Close()
			b.log.Debug("response over the limit refused", "op", "read", "id", string(b.call.rawID), "limit", b.call.limit)
			data = refusal(b.call.rawID, b.call.limit)
		}
		b.r = bytes.NewReader(data)
	}
	return b.r.Read(p)
}

func (b *jsonBody) Close() error { return b.rc.Close() }

// readCapped reads r to its end if that comes within limit bytes, and
// reports over otherwise, having read limit+1 bytes.
func readCapped(r io.Reader, limit int64) (data []byte, over bool, err error) {
	max := limit + 1
	buf := make([]byte, 0, min(max, 64<<10))
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) >= max {
				return nil, true, nil
			}
			nb := make([]byte, len(buf), min(2*int64(cap(buf)), max))
			copy(nb, buf)
			buf = nb
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case int64(len(buf)) > limit:
			return nil, true, nil
		case err == io.EOF:
			return buf, false, nil
		case err != nil:
			return nil, false, err
		}
	}
}

// cappedBody passes a body through and fails once it passes max bytes:
// bodies that carry no call's response (error pages, 202 bodies) are not
// expected to be large at all.
type cappedBody struct {
	rc  io.ReadCloser
	max int64
	n   int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.n > b.max {
		return 0, fmt.Errorf("read response body: larger than %d bytes", b.max)
	}
	if rem := b.max + 1 - b.n; int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := b.rc.Read(p)
	b.n += int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }
