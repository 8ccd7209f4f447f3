package skillserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/skillfs/skillfs/internal/skill"
)

// Options configures a Server.
type Options struct {
	// PageSize is the number of items per page of skills/list,
	// resources/directory/read and resources/list; 0 means 100.
	PageSize int
	// PollInterval is how often Watch polls DIR for changes when it cannot
	// watch it (or NoWatch is set); 0 means 2s. A negative value disables
	// change detection altogether, watching included.
	PollInterval time.Duration
	// NoWatch makes Watch poll every PollInterval instead of asking the
	// system for file notifications.
	NoWatch bool
	// Logger receives the server's log; nil discards it.
	Logger *slog.Logger
	// Name and Version are reported as serverInfo; empty means "skillfs"
	// and "(devel)".
	Name, Version string
	// AccessLog, when set, receives one line per request: the method and
	// the URI it names (or the cursor), e.g. "resources/read skill://a/SKILL.md".
	// Authors use it to see what agents read; tests count requests with it.
	AccessLog io.Writer
	// Instructions are sent as the instructions of the initialize result:
	// text for the model about this server. The Final SEP-2640 text lets
	// them point to skills by URI (skill://…/SKILL.md), which a host
	// confirms with skills/get.
	Instructions string
	// AllowOrigins lists the origins (scheme://host[:port], as a browser
	// sends them in the Origin header) whose HTTP requests are served
	// besides the server's own loopback origin. See Handler.
	AllowOrigins []string
}

// A Problem is a file or skill left out of what the server publishes, and
// why. Path is DIR as given to New joined with the path below it.
type Problem struct{ Path, Reason string }

func (p Problem) String() string { return p.Path + ": " + p.Reason }

// A Server publishes the skills in one local folder over MCP.
type Server struct {
	opts    Options
	log     *slog.Logger
	mcp     *mcp.Server
	lib     *library
	watcher watcher
}

// New scans dir once and returns a server for it. An unreadable dir is an
// error; anything below it that cannot be published is reported by
// Problems (and logged at Info) while the rest is served.
func New(dir string, opts Options) (*Server, error) {
	if opts.PageSize <= 0 {
		opts.PageSize = 100
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 2 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Name == "" {
		opts.Name = "skillfs"
	}
	if opts.Version == "" {
		opts.Version = "(devel)"
	}
	sc, err := newScanner(dir)
	if err != nil {
		return nil, err
	}
	cat, err := sc.scan()
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, log: opts.Logger}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: opts.Name, Version: opts.Version}, &mcp.ServerOptions{
		Logger:       opts.Logger,
		PageSize:     opts.PageSize,
		Instructions: opts.Instructions,
		Capabilities: &mcp.ServerCapabilities{
			// Declared even for an empty folder: a client subscribes to
			// list_changed only when the capability says it may, and the
			// folder may fill later.
			Resources:  &mcp.ResourceCapabilities{ListChanged: true},
			Extensions: map[string]any{skill.ExtensionID: skill.Settings{DirectoryRead: true}},
		},
	})
	if err := s.addMethods(); err != nil {
		return nil, err
	}
	// Added first, so that it is the innermost: it sees every handler's
	// error before the SDK's own wrapping.
	s.mcp.AddReceivingMiddleware(internalErrors)
	// Outside internalErrors, so that the SDK's lookup of the resource
	// sees the canonical URI.
	s.mcp.AddReceivingMiddleware(canonicalRead)
	s.mcp.AddReceivingMiddleware(legacyCacheFields)
	if opts.AccessLog != nil {
		s.mcp.AddReceivingMiddleware(accessLogger(opts.AccessLog))
	}
	s.lib = &library{log: opts.Logger, mcp: s.mcp, sc: sc}
	s.watcher = watcher{lib: s.lib, log: opts.Logger, interval: opts.PollInterval, noWatch: opts.NoWatch,
		newWatcher: fsnotify.NewWatcher, safetyPoll: safetyPoll}
	s.lib.install(nil, cat)
	for _, p := range cat.problems {
		s.log.Info("skipped", "path", p.Path, "err", p.Reason)
	}
	for _, p := range cat.warnings {
		s.log.Warn("ambiguous", "path", p.Path, "err", p.Reason)
	}
	return s, nil
}

// Warnings returns what the latest scan published but a client may read
// otherwise (frontmatter scalars YAML 1.1 and 1.2 type differently).
func (s *Server) Warnings() []Problem { return slices.Clone(s.lib.cat.Load().warnings) }

// Problems returns what the latest scan left out, sorted by path.
func (s *Server) Problems() []Problem { return slices.Clone(s.lib.cat.Load().problems) }

// Skills returns the current catalog: every published skill's entry, sorted
// by URI. The entries are copies; changing them changes nothing served.
func (s *Server) Skills() []skill.Entry {
	cat := s.lib.cat.Load()
	out := make([]skill.Entry, len(cat.skills))
	for i, e := range cat.skills {
		out[i] = cloneEntry(e)
	}
	return out
}

// ServeStdio serves one session over standard input and output. It returns
// nil when the client hangs up or ctx ends.
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.serve(ctx, &mcp.StdioTransport{})
}

// ServeConn serves one session over rwc, newline-delimited JSON-RPC
// (mcp.IOTransport); the mount's demo uses it with net.Pipe. It returns nil
// when the peer hangs up or ctx ends, and closes rwc.
func (s *Server) ServeConn(ctx context.Context, rwc io.ReadWriteCloser) error {
	return s.serve(ctx, &mcp.IOTransport{Reader: rwc, Writer: rwc})
}

func (s *Server) serve(ctx context.Context, t mcp.Transport) error {
	ss, err := s.mcp.Connect(ctx, t, nil)
	if err != nil {
		if hungUp(err) {
			return nil
		}
		return fmt.Errorf("serve: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case <-ctx.Done():
		// go-sdk's Close waits for every handler to return, and a client's
		// subscriptions/listen stream may not notice the session ending:
		// give handlers a moment, then stop waiting.
		go ss.Close()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			s.log.Info("session did not close within 2s; leaving it", "op", "serve")
		}
		return nil
	case err := <-done:
		if err != nil && !hungUp(err) {
			return fmt.Errorf("serve: %w", err)
		}
		return nil
	}
}

// hungUp reports whether a session ended because the client went away,
// which is how sessions end, not an error.
func hungUp(err error) bool {
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe)
}

// Handler returns a streamable HTTP handler for any number of sessions.
//
// A request with an Origin header (a browser's) is answered 403 unless the
// origin is in Options.AllowOrigins or is the server's own loopback
// origin: http, a loopback host (localhost, 127.0.0.0/8, [::1]) and the
// port the request came in on, when the server listens on a loopback
// address. This is the MCP streamable HTTP transport's defence against DNS
// rebinding; requests without Origin (non-browser clients) are served.
//
// go-sdk serves the 2026-07-28 protocol over HTTP only statelessly, and the
// list_changed stream of the 2025-11-25 protocol only statefully, so the
// handler routes each request by its Mcp-Protocol-Version header: requests
// of the new protocol go to a stateless handler (their notifications ride
// subscriptions/listen), everything else (initialize and later legacy
// requests) to a stateful one. Both serve the same catalog.
func (s *Server) Handler() http.Handler {
	get := func(*http.Request) *mcp.Server { return s.mcp }
	stateful := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Logger: s.log})
	stateless := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{Logger: s.log, Stateless: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !s.originAllowed(r, o) {
			http.Error(w, fmt.Sprintf("Forbidden: Origin %q is not allowed (skillfs serve --allow-origin)", o), http.StatusForbidden)
			return
		}
		if r.Header.Get("Mcp-Protocol-Version") >= "2026-07-28" {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})
}

// Rescan scans DIR once and publishes what changed; clients are notified
// with notifications/resources/list_changed when anything did. Unchanged
// files are not read again. It fails only when DIR itself is unreadable,
// in which case the previous catalog stays.
func (s *Server) Rescan() error {
	return s.lib.rescan()
}

func cloneEntry(e skill.Entry) skill.Entry {
	e.Frontmatter, _ = cloneJSON(e.Frontmatter).(map[string]any)
	e.Resources = slices.Clone(e.Resources)
	return e
}

func cloneJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, x := range v {
			m[k] = cloneJSON(x)
		}
		return m
	case []any:
		s := make([]any, len(v))
		for i, x := range v {
			s[i] = cloneJSON(x)
		}
		return s
	}
	return v
}

// canonicalRead makes resources/read take every spelling of a URI that
// skills/get and resources/directory/read take: the request's URI is
// replaced by its canonical form (verify.ParseURI, then String) before
// go-sdk looks the resource up, and the contents answer with the URI as
// the client spelled it. A URI verify.ParseURI refuses is left as it is,
// and so is not found.
func canonicalRead(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		rr, ok := req.(*mcp.ReadResourceRequest)
		if method != "resources/read" || !ok || rr.Params == nil {
			return next(ctx, method, req)
		}
		asked := rr.Params.URI
		uri, ok := canonicalURI(asked)
		if !ok || uri == asked {
			return next(ctx, method, req)
		}
		rr.Params.URI = uri
		res, err := next(ctx, method, req)
		rr.Params.URI = asked
		if r, ok := res.(*mcp.ReadResourceResult); ok && err == nil {
			for _, c := range r.Contents {
				if c != nil && c.URI == uri {
					c.URI = asked
				}
			}
		}
		return res, err
	}
}

// legacyCacheFields keeps ttlMs and cacheScope out of 2025-11-25 answers.
// They belong to the 2026-07-28 protocol's CacheableResult, which the
// Final text makes REQUIRED on skills/list, skills/get, resources/list and
// resources/read there; the older protocol has no such fields, and serve
// sends them on no method in it (the SEP-2640 methods leave them out on
// their own, go-sdk would put them on resources/read and resources/list).
func legacyCacheFields(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || res == nil || (method != "resources/read" && method != "resources/list" && method != "resources/templates/list") {
			return res, err
		}
		if p := req.GetParams(); p != nil && !reflect.ValueOf(p).IsNil() && newProtocol(p.GetMeta()) {
			return res, err
		}
		return withoutCacheFields{res}, nil
	}
}

// withoutCacheFields is a result marshalled without ttlMs and cacheScope.
type withoutCacheFields struct{ mcp.Result }

func (r withoutCacheFields) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.Result)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	delete(m, "ttlMs")
	delete(m, "cacheScope")
	return json.Marshal(m)
}

// internalErrors gives every error a handler returns without a JSON-RPC
// code the code SEP-2640 asks for, -32603 (Internal error): go-sdk would
// send a plain Go error with code 0. Errors that carry a code (-32602 for
// an unknown skill, directory or file; the SDK's own) keep it.
func internalErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		var je *jsonrpc.Error
		if err != nil && !errors.As(err, &je) && ctx.Err() == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		return res, err
	}
}

// accessLogger writes one line per request received.
func accessLogger(w io.Writer) mcp.Middleware {
	var mu sync.Mutex
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			var subject struct {
				URI    string `json:"uri"`
				Cursor string `json:"cursor"`
			}
			if p := req.GetParams(); p != nil {
				if b, err := json.Marshal(p); err == nil {
					json.Unmarshal(b, &subject)
				}
			}
			line := method
			if subject.URI != "" {
				line += " " + subject.URI
			} else if subject.Cursor != "" {
				line += " cursor=" + subject.Cursor
			}
			mu.Lock()
			fmt.Fprintln(w, line)
			mu.Unlock()
			return next(ctx, method, req)
		}
	}
}

// originAllowed tells whether a request with Origin o is served.
func (s *Server) originAllowed(r *http.Request, o string) bool {
	for _, a := range s.opts.AllowOrigins {
		if strings.EqualFold(strings.TrimSuffix(a, "/"), o) {
			return true
		}
	}
	u, err := url.Parse(o)
	if err != nil || u.Scheme != "http" || u.Path != "" || u.User != nil || u.RawQuery != "" {
		return false
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	lhost, lport, err := net.SplitHostPort(local.String())
	if err != nil || !isLoopbackHost(lhost) {
		return false
	}
	return u.Port() == lport && isLoopbackHost(u.Hostname())
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// CheckOrigin tells whether o can be given as an allowed origin: an
// http or https origin with a host, no path, query or credentials.
func CheckOrigin(o string) error {
	u, err := url.Parse(o)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q is not an origin (scheme://host[:port], http or https)", o)
	}
	return nil
}
