package transport

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/skillfs/skillfs/internal/testkit"
)

const (
	bigURI   = "skill://big/SKILL.md"   // 20 MiB
	overURI  = "skill://over/SKILL.md"  // 4 MiB: over a 1 MiB limit, cheap to render six times
	midURI   = "skill://mid/SKILL.md"   // midSize()
	smallURI = "skill://small/SKILL.md" // "hello"
	mib      = 1 << 20
)

// midSize is the size of the mid resource and of the echo results of
// TestCallLimits, whose limits are all set relative to it: 128 KiB, two
// read windows (readBufSize) and more, or 512 KiB under -soak. It is not
// tied to any limit of the package; TestCallLimits makes about a hundred
// calls of it, which at 512 KiB cost a second of CPU.
func midSize() int { return testkit.Size(128<<10, 512<<10) }

// contents are the served files, made on first use: not at init, where
// every child this test binary runs of itself would pay for their MiBs.
var contents = sync.OnceValue(func() map[string]string {
	return map[string]string{
		bigURI:   strings.Repeat("b", 20*mib),
		overURI:  strings.Repeat("o", 4*mib),
		midURI:   strings.Repeat("m", midSize()),
		smallURI: "hello",
	}
})

// echoParams and echoResult make a custom method whose result is as large as
// asked, like the extension's skills/get.
type echoParams struct {
	mcp.ParamsBase
	Size int `json:"size"`
}

type echoResult struct {
	mcp.ResultBase
	Text string `json:"text"`
}

const echoMethod = "test/echo"

// newServer is an honest MCP server with resources of the sizes above.
func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "transport-test", Version: "v0"}, nil)
	for uri := range contents() {
		s.AddResource(&mcp.Resource{URI: uri, Name: uri, MIMEType: "text/markdown"},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
					{URI: req.Params.URI, MIMEType: "text/markdown", Text: contents()[req.Params.URI]},
				}}, nil
			})
	}
	err := mcp.AddReceivingCustomMethod(s, echoMethod,
		func(_ context.Context, _ *mcp.ServerSession, p *echoParams) (*echoResult, error) {
			return &echoResult{Text: strings.Repeat("e", p.Size)}, nil
		})
	if err != nil {
		panic(err)
	}
	return s
}

func newClient(t *testing.T) *mcp.Client {
	c := mcp.NewClient(&mcp.Implementation{Name: "skillfs-test", Version: "v0"}, nil)
	if err := mcp.AddSendingCustomMethod[*echoParams, *echoResult](c, echoMethod); err != nil {
		t.Fatal(err)
	}
	return c
}

// headerLog records, per HTTP method, the test header's values the server saw.
type headerLog struct {
	mu   sync.Mutex
	seen map[string][]string
}

func (h *headerLog) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		if h.seen == nil {
			h.seen = map[string][]string{}
		}
		h.seen[r.Method] = append(h.seen[r.Method], r.Header.Get("Authorization")+"|"+r.Header.Get("X-Skillfs-Test"))
		h.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

type setup struct {
	name    string
	version string // protocol version the client asks for; "" for go-sdk's latest
	connect func(t *testing.T, opts Options, hl *headerLog) mcp.Transport
	http    bool
	// whole: read the 20 MiB resource whole too, to show that MaxFrame's
	// default admits it (slow under the race detector, so not everywhere).
	whole bool
	// get says the client holds a GET stream open (legacy SSE; streamable
	// before 2026-07-28).
	get bool
	// noCustom: go-sdk's legacy SSE server answers a POST of a method it
	// does not know as standard with 400, which ends the client's session.
	noCustom bool
}

func streamSetup(t *testing.T, opts Options, _ *headerLog) mcp.Transport {
	serverEnd, clientEnd := net.Pipe()
	ss, err := newServer().Connect(context.Background(), &mcp.IOTransport{Reader: serverEnd, Writer: serverEnd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	return Stream(clientEnd, opts)
}

func streamableSetup(jsonResponse bool) func(*testing.T, Options, *headerLog) mcp.Transport {
	return func(t *testing.T, opts Options, hl *headerLog) mcp.Transport {
		server := newServer()
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
			&mcp.StreamableHTTPOptions{JSONResponse: jsonResponse})
		srv := httptest.NewServer(hl.wrap(h))
		t.Cleanup(srv.Close)
		return &mcp.StreamableClientTransport{
			Endpoint:     srv.URL,
			HTTPClient:   HTTPClient(opts),
			MaxEventSize: int(opts.maxFrame()) + mib,
			MaxRetries:   -1,
		}
	}
}

func sseSetup(t *testing.T, opts Options, hl *headerLog) mcp.Transport {
	server := newServer()
	h := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return server }, nil)
	srv := httptest.NewServer(hl.wrap(h))
	t.Cleanup(srv.Close)
	return &mcp.SSEClientTransport{
		Endpoint:     srv.URL,
		HTTPClient:   HTTPClient(opts),
		MaxEventSize: int(opts.maxFrame()) + mib,
	}
}

var setups = []setup{
	{name: "stream", connect: streamSetup, whole: true},
	{name: "stream/2025-11-25", version: "2025-11-25", connect: streamSetup},
	{name: "streamable-json", connect: streamableSetup(true), http: true},
	{name: "streamable-sse", connect: streamableSetup(false), http: true, whole: true},
	{name: "streamable-sse/2025-11-25", version: "2025-11-25", connect: streamableSetup(false), http: true, get: true},
	{name: "legacy-sse", connect: sseSetup, http: true, get: true, noCustom: true},
}

func connectSession(t *testing.T, s setup, opts Options, hl *headerLog) *mcp.ClientSession {
	t.Helper()
	// Not a context that ends after Connect: go-sdk's legacy SSE client makes
	// its GET stream with it.
	cs, err := newClient(t).Connect(t.Context(), s.connect(t, opts, hl), &mcp.ClientSessionOptions{ProtocolVersion: s.version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func readResource(ctx context.Context, cs *mcp.ClientSession, uri string) (string, error) {
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return "", err
	}
	if len(res.Contents) != 1 {
		return "", nil
	}
	return res.Contents[0].Text, nil
}

// TestOverlongResponseKeepsSession is the package's reason to exist: a
// 4 MiB resources/read response to a call limited to 1 MiB fails that call
// with CodeResponseTooLarge, and the same session then serves a small read.
func TestOverlongResponseKeepsSession(t *testing.T) {
	t.Parallel()
	for _, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			log, _ := newTestLog(t)
			hl := &headerLog{}
			opts := Options{Logger: log, Headers: map[string]string{"Authorization": "Bearer t0ken", "X-Skillfs-Test": "yes"}}
			cs := connectSession(t, s, opts, hl)
			// A bound only against a hang: 20 MiB under the race detector on
			// a loaded machine can take well over a minute.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()

			_, err := readResource(WithResponseLimit(ctx, mib), cs, overURI)
			if !IsResponseTooLarge(err) {
				t.Fatalf("read of 4 MiB with a 1 MiB limit: %v, want a response-too-large error", err)
			}
			got, err := readResource(ctx, cs, smallURI)
			if err != nil || got != "hello" {
				t.Fatalf("small read on the same session: %q, %v", got, err)
			}
			if s.whole {
				// Without a per-call limit the default MaxFrame (24 MiB)
				// admits it.
				got, err = readResource(ctx, cs, bigURI)
				if err != nil || got != contents()[bigURI] {
					t.Fatalf("read of 20 MiB without a limit: %d bytes, %v", len(got), err)
				}
			}

			if !s.http {
				return
			}
			hl.mu.Lock()
			defer hl.mu.Unlock()
			if len(hl.seen["POST"]) == 0 || (s.get && len(hl.seen["GET"]) == 0) {
				t.Errorf("requests seen: %v", hl.seen)
			}
			for method, vals := range hl.seen {
				for _, v := range vals {
					if v != "Bearer t0ken|yes" {
						t.Errorf("%s request carried headers %q", method, v)
					}
				}
			}
		})
	}
}

// TestCallLimits shows that the context of a ClientSession call reaches the
// connection (stdio: Connection.Write; HTTP: the POST): the same response of
// midSize() bytes passes or fails by the limit on the call's context alone.
func TestCallLimits(t *testing.T) {
	type call struct {
		limit int64 // 0: no WithResponseLimit
		ok    bool
	}
	midSize := midSize()
	mid := int64(midSize)
	tests := []struct {
		name     string
		maxFrame int64
		calls    []call
	}{
		{"per-call limit decides", 0, []call{{mid / 2, false}, {mib, true}, {0, true}, {mid + 4<<10, true}, {mid, false}}},
		{"MaxFrame caps every call", mid / 2, []call{{0, false}, {mib, false}, {mid / 4, false}}},
	}
	for _, s := range setups {
		for _, tt := range tests {
			t.Run(s.name+"/"+tt.name, func(t *testing.T) {
				log, _ := newTestLog(t)
				cs := connectSession(t, s, Options{Logger: log, MaxFrame: tt.maxFrame}, &headerLog{})
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				defer cancel()
				for _, c := range tt.calls {
					cctx := ctx
					if c.limit > 0 {
						cctx = WithResponseLimit(ctx, c.limit)
					}
					got, err := readResource(cctx, cs, midURI)
					if c.ok && (err != nil || got != contents()[midURI]) {
						t.Errorf("read with limit %d: %d bytes, %v", c.limit, len(got), err)
					}
					if !c.ok && !IsResponseTooLarge(err) {
						t.Errorf("read with limit %d: %v, want response-too-large", c.limit, err)
					}
					if s.noCustom {
						continue
					}
					res, err := mcp.CallCustomMethod[*echoParams, *echoResult](cctx, cs, echoMethod, &echoParams{Size: midSize})
					if c.ok && (err != nil || len(res.Text) != midSize) {
						t.Errorf("custom call with limit %d: %v", c.limit, err)
					}
					if !c.ok && !IsResponseTooLarge(err) {
						t.Errorf("custom call with limit %d: %v, want response-too-large", c.limit, err)
					}
				}
				if got, err := readResource(ctx, cs, smallURI); err != nil || got != "hello" {
					t.Errorf("small read afterwards: %q, %v", got, err)
				}
			})
		}
	}
}
