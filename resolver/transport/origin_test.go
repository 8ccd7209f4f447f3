package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const secret = "Bearer s3cret-token"

// recorder is another origin: an honest MCP server (streamable HTTP, or
// legacy SSE under /sse) that records the Authorization header of every
// request it receives.
type recorder struct {
	srv  *httptest.Server
	mu   sync.Mutex
	auth []string
}

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	rec := &recorder{}
	get := func(*http.Request) *mcp.Server { return newServer() }
	streamable := mcp.NewStreamableHTTPHandler(get, nil)
	sse := mcp.NewSSEHandler(get, nil)
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.auth = append(rec.auth, r.Header.Get("Authorization"))
		rec.mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/sse") {
			sse.ServeHTTP(w, r)
			return
		}
		streamable.ServeHTTP(w, r)
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

func (rec *recorder) requests() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.auth...)
}

// leaked reports whether rec ever received the configured header.
func (rec *recorder) leaked() bool {
	for _, a := range rec.requests() {
		if a == secret {
			return true
		}
	}
	return false
}

// TestCrossOriginRedirectRefused: a server that answers 307 to another
// origin gets neither the request nor the configured header there, and
// the caller learns why; same-origin redirects are followed, boundedly.
func TestCrossOriginRedirectRefused(t *testing.T) {
	other := newRecorder(t)
	var homeAuth []string
	var mu sync.Mutex
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		homeAuth = append(homeAuth, r.Header.Get("Authorization"))
		mu.Unlock()
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.srv.URL+"/mcp", http.StatusTemporaryRedirect)
		case "/away-302":
			http.Redirect(w, r, other.srv.URL+"/mcp", http.StatusFound)
		case "/same":
			http.Redirect(w, r, "/target", http.StatusTemporaryRedirect)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusTemporaryRedirect)
		case "/target":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
		}
	}))
	defer home.Close()
	log, _ := newTestLog(t)
	client := HTTPClient(Options{URL: home.URL + "/mcp", Headers: map[string]string{"Authorization": secret}, Logger: log})
	post := func(path string) (*http.Response, error) {
		req, err := http.NewRequest(http.MethodPost, home.URL+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		return resp, err
	}

	for _, path := range []string{"/away", "/away-302"} {
		_, err := post(path)
		if !errors.Is(err, ErrCrossOrigin) {
			t.Errorf("POST %s: err %v, want ErrCrossOrigin", path, err)
		} else if !strings.Contains(err.Error(), home.URL+path) || !strings.Contains(err.Error(), other.srv.URL+"/mcp") {
			t.Errorf("POST %s: %v; want both origins named", path, err)
		}
	}
	if reqs := other.requests(); len(reqs) != 0 {
		t.Errorf("the other origin received %d requests (Authorization %q)", len(reqs), reqs)
	}

	resp, err := post("/same")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("same-origin redirect: %v, %v", resp, err)
	}
	mu.Lock()
	if n := len(homeAuth); n < 2 || homeAuth[n-1] != secret {
		t.Errorf("same-origin redirect target got Authorization %q", homeAuth)
	}
	mu.Unlock()

	if _, err := post("/loop"); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("stopped after %d redirects", maxRedirects)) {
		t.Errorf("redirect loop: %v", err)
	}

	// Whatever asks (a custom CheckRedirect, a bug), the round tripper
	// itself sends nothing to another origin.
	req, _ := http.NewRequest(http.MethodGet, other.srv.URL+"/mcp", nil)
	if _, err := client.Transport.RoundTrip(req); !errors.Is(err, ErrCrossOrigin) {
		t.Errorf("direct request to another origin: %v", err)
	}
	if other.leaked() || len(other.requests()) != 0 {
		t.Errorf("the other origin was reached: %q", other.requests())
	}
}

func TestOriginOf(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{"http://h/x", "http://H:80/y", true},
		{"https://h/", "HTTPS://h:443/z?q", true},
		{"http://[::1]:8080/", "http://[::1]:8080/mcp", true},
		{"http://h/", "https://h/", false},
		{"http://h/", "http://h:8080/", false},
		{"http://h/", "http://h.evil/", false},
		{"http://127.0.0.1:1/", "http://127.0.0.1:2/", false},
		{"http://h@evil/", "http://h/", false},
	}
	for _, tt := range tests {
		a, err := url.Parse(tt.a)
		if err != nil {
			t.Fatal(err)
		}
		b, err := url.Parse(tt.b)
		if err != nil {
			t.Fatal(err)
		}
		if got := originOf(a) == originOf(b); got != tt.same {
			t.Errorf("%s, %s: same origin %v (%s, %s), want %v", tt.a, tt.b, got, originOf(a), originOf(b), tt.same)
		}
	}
}

// TestSSECrossOrigin: the legacy SSE transport, through a real go-sdk
// client, redirected to another origin on its GET stream or its POST
// endpoint, or told by the endpoint event to POST elsewhere: the session
// fails with ErrCrossOrigin and the other origin never sees the header.
func TestSSECrossOrigin(t *testing.T) {
	other := newRecorder(t)
	honest := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return newServer() }, nil)
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/get-away":
			http.Redirect(w, r, other.srv.URL+"/sse", http.StatusTemporaryRedirect)
		case r.URL.Path == "/endpoint-away":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: endpoint\ndata: %s/sse?sessionid=x\n\n", other.srv.URL)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		case r.URL.Path == "/post-away" && r.Method == http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: endpoint\ndata: /post-away?sessionid=x\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		case r.URL.Path == "/post-away":
			http.Redirect(w, r, other.srv.URL+"/sse?sessionid=x", http.StatusTemporaryRedirect)
		default:
			honest.ServeHTTP(w, r)
		}
	}))
	defer home.Close()

	// refused records the redirects the client refused. When the POST of
	// a legacy SSE session fails, go-sdk also closes the session, and
	// which of the two errors Connect returns is a race inside go-sdk
	// ("client is closing: EOF" on a loaded machine); the refusal itself
	// is what must have happened.
	var refusedMu sync.Mutex
	var refused []error
	connect := func(path string) error {
		log, _ := newTestLog(t, "SSE endpoint refused")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "v0"}, nil)
		hc := HTTPClient(Options{URL: home.URL + path, Headers: map[string]string{"Authorization": secret}, Logger: log})
		check := hc.CheckRedirect
		hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
			err := check(req, via)
			if err != nil {
				refusedMu.Lock()
				refused = append(refused, err)
				refusedMu.Unlock()
			}
			return err
		}
		cs, err := client.Connect(ctx, &mcp.SSEClientTransport{Endpoint: home.URL + path, HTTPClient: hc}, nil)
		if err == nil {
			_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: smallURI})
			cs.Close()
		}
		return err
	}
	names := func(err error) bool {
		return err != nil && strings.Contains(err.Error(), ErrCrossOrigin.Error()) && strings.Contains(err.Error(), other.srv.URL)
	}
	if err := connect("/sse"); err != nil {
		t.Fatalf("honest SSE on the home origin: %v", err)
	}
	for _, path := range []string{"/get-away", "/endpoint-away", "/post-away"} {
		refusedMu.Lock()
		refused = nil
		refusedMu.Unlock()
		err := connect(path)
		refusedMu.Lock()
		redirectRefused := slices.ContainsFunc(refused, names)
		refusedMu.Unlock()
		switch {
		case err == nil:
			t.Errorf("%s: the session worked; want the cross-origin refusal naming %s", path, other.srv.URL)
		case names(err):
		case path == "/post-away" && redirectRefused:
			t.Logf("%s: the refusal happened; go-sdk reported the session's close instead: %v", path, err)
		default:
			t.Errorf("%s: %v; want the cross-origin refusal naming %s", path, err, other.srv.URL)
		}
	}
	if reqs := other.requests(); len(reqs) != 0 {
		t.Errorf("the other origin received %d requests (Authorization %q)", len(reqs), reqs)
	}
}

// TestStreamableCrossOrigin: a real streamable HTTP session whose server
// redirects to another, real, MCP server fails to connect.
func TestStreamableCrossOrigin(t *testing.T) {
	other := newRecorder(t)
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.srv.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer home.Close()
	log, _ := newTestLog(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   home.URL + "/mcp",
		HTTPClient: HTTPClient(Options{URL: home.URL + "/mcp", Headers: map[string]string{"Authorization": secret}, Logger: log}),
		MaxRetries: -1,
	}, nil)
	if err == nil {
		cs.Close()
		t.Fatal("connected through a cross-origin redirect")
	}
	if !strings.Contains(err.Error(), ErrCrossOrigin.Error()) {
		t.Errorf("connect: %v; want the cross-origin refusal", err)
	}
	if reqs := other.requests(); len(reqs) != 0 {
		t.Errorf("the other origin received %d requests (Authorization %q)", len(reqs), reqs)
	}
}
