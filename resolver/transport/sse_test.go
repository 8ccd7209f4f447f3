package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func filterSSE(t *testing.T, in string, max int64, limits *limitTable, log *slog.Logger) string {
	t.Helper()
	f := newSSEFilter(io.NopCloser(strings.NewReader(in)), max, limits, log)
	out, err := io.ReadAll(f)
	if err != nil {
		t.Fatalf("read filtered stream: %v", err)
	}
	return string(out)
}

func TestSSEFilter(t *testing.T) {
	big := strings.Repeat("B", 2000)
	msg := `{"jsonrpc":"2.0","id":1,"result":{}}`
	tests := []struct {
		name   string
		in     string
		limits map[int64]int64
		want   string
		warns  int
	}{
		{
			name: "message passes",
			in:   "event: message\nid: 7\ndata: " + msg + "\n\n",
			want: "event: message\nid: 7\ndata: " + msg + "\n\n",
		},
		{
			name: "CRLF, no name, no space after colon",
			in:   "data:" + msg + "\r\n\r\n",
			want: "data: " + msg + "\n\n",
		},
		{
			name: "data over several lines joined",
			in:   "data: {\"jsonrpc\":\"2.0\",\ndata: \"id\":1,\"result\":{}}\n\n",
			want: "data: {\"jsonrpc\":\"2.0\", \"id\":1,\"result\":{}}\n\n",
		},
		{
			name: "endpoint kept",
			in:   "event: endpoint\ndata: /messages?session=abc\n\n",
			want: "event: endpoint\ndata: /messages?session=abc\n\n",
		},
		{
			name: "name after data",
			in:   "data: /m?s=1\nevent: endpoint\n\n",
			want: "event: endpoint\ndata: /m?s=1\n\n",
		},
		{
			name: "other events lose their data",
			in:   "event: ping\nid: 3\ndata: hello\n\n",
			want: "event: ping\nid: 3\n\n",
		},
		{
			name: "comments, unknown fields and lines without colon dropped",
			in:   ": keepalive\nfoo: bar\njunk\ndata: " + msg + "\n\n",
			want: "data: " + msg + "\n\n",
		},
		{
			name: "priming event with id only",
			in:   "id: 0\nretry: 500\ndata:\n\n",
			want: "id: 0\nretry: 500\n\n",
		},
		{
			name: "over the cap with id: refusal, event id kept",
			in:   "id: 9\ndata: {\"jsonrpc\":\"2.0\",\"id\":4,\"result\":\"" + big + "\"}\n\n",
			want: "id: 9\ndata: " + string(refusal([]byte("4"), 1000)) + "\n\n",
		},
		{
			name:   "per-call limit",
			in:     "data: " + response("5", 300) + "\n\ndata: " + response("6", 300) + "\n\n",
			limits: map[int64]int64{5: 200},
			want:   "data: " + string(refusal([]byte("5"), 200)) + "\n\ndata: " + response("6", 300) + "\n\n",
		},
		{
			name:  "notification over the cap dropped, id kept",
			in:    "id: 2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":\"" + big + "\"}\n\n",
			want:  "id: 2\n\n",
			warns: 1,
		},
		{
			name:  "non-JSON data dropped",
			in:    "data: {\"jsonrpc\":\"2.0\",\"id\":1\n\ndata: hello\n\n",
			warns: 1, // the second is counted, not logged
		},
		{
			name:  "over-long id field dropped",
			in:    "id: " + strings.Repeat("i", maxField+1) + "\ndata: " + msg + "\n\n",
			want:  "data: " + msg + "\n\n",
			warns: 1,
		},
		{
			name: "stream ends inside an event",
			in:   "data: " + msg,
			want: "data: " + msg + "\n\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, rec := newTestLog(t, "dropped")
			limits := &limitTable{}
			for id, l := range tt.limits {
				limits.add(context.Background(), intID(id), l, nil)
			}
			if got := filterSSE(t, tt.in, 1000, limits, log); got != tt.want {
				t.Errorf("filtered\n%q\nwant\n%q", got, tt.want)
			}
			if n := len(rec.Matching(slog.LevelWarn, "dropped")); n != tt.warns {
				t.Errorf("%d warnings, want %d: %v", n, tt.warns, rec.Records())
			}
			if n := limits.len(); n != 0 {
				t.Errorf("%d limits left", n)
			}
		})
	}
}

// TestSSEFilterEndlessEvent feeds an event whose data never ends: the filter
// reads on without holding more than the cap.
func TestSSEFilterEndlessEvent(t *testing.T) {
	const limit = 1 << 20
	log, _ := newTestLog(t)
	g := &generator{prefix: "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"", fill: 40 * limit, suffix: "\"}\n\ndata: " + sentinel + "\n\n"}
	f := newSSEFilter(io.NopCloser(g), limit, &limitTable{}, log)
	out, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	want := "data: " + string(refusal([]byte("1"), limit)) + "\n\ndata: " + sentinel + "\n\n"
	if string(out) != want {
		t.Errorf("filtered %q, want %q", out, want)
	}
	if f.f.peak > limit+maxOtherData {
		t.Errorf("held %d bytes", f.f.peak)
	}
}

// TestHTTPBodies covers the bodies go-sdk reads whole: a call's JSON
// response, and anything else (error pages).
func TestHTTPBodies(t *testing.T) {
	huge := strings.Repeat("H", 5000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case strings.Contains(string(body), `"method":"big"`):
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", fmt.Sprint(len(response("\"x\"", 3000))))
			io.WriteString(w, response(`"x"`, 3000))
		case strings.Contains(string(body), `"method":"small"`):
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			io.WriteString(w, response(`"y"`, 100))
		default:
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, huge)
		}
	}))
	defer srv.Close()
	log, _ := newTestLog(t)
	client := HTTPClient(Options{MaxFrame: 4000, Logger: log})
	post := func(ctx context.Context, body string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	ctx := context.Background()
	tests := []struct {
		name    string
		ctx     context.Context
		body    string
		want    string
		wantErr bool
	}{
		{"within MaxFrame", ctx, `{"jsonrpc":"2.0","id":"x","method":"big"}`, response(`"x"`, 3000), false},
		{"over the call's limit", WithResponseLimit(ctx, 2999), `{"jsonrpc":"2.0","id":"x","method":"big"}`, string(refusal([]byte(`"x"`), 2999)), false},
		{"at the call's limit", WithResponseLimit(ctx, 3000), `{"jsonrpc":"2.0","id":"x","method":"big"}`, response(`"x"`, 3000), false},
		{"small", WithResponseLimit(ctx, 100), `{"jsonrpc":"2.0","id":"y","method":"small"}`, response(`"y"`, 100), false},
		{"error page over MaxFrame", ctx, `{"jsonrpc":"2.0","method":"notifications/x"}`, huge[:4001], true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := post(tt.ctx, tt.body)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("body %d bytes %.60q, err %v; want %d bytes %.60q, error %v", len(got), got, err, len(tt.want), tt.want, tt.wantErr)
			}
		})
	}
}

// cutReader yields s, then fails with err.
type cutReader struct {
	s   string
	err error
}

func (r *cutReader) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, r.err
	}
	n := copy(p, r.s)
	r.s = r.s[n:]
	return n, nil
}

// An event cut off by a failed read (a call cancelled, a mount stopping
// with reads in flight) is dropped quietly and the read's error returned:
// the server sent no bad message, and a warning that it had showed at
// every stop. A stream the server ends inside an event still ends the
// event, as go-sdk's does, and a bad one is then the server's.
func TestSSEFilterCutEvent(t *testing.T) {
	partial := "event: message\nid: 4\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"contents\":[{\"text\":\"abc"
	cut := errors.New("http: read on closed response body")
	log, _ := newTestLog(t) // no warning expected
	f := newSSEFilter(io.NopCloser(&cutReader{s: partial, err: cut}), 1<<20, &limitTable{}, log)
	out, err := io.ReadAll(f)
	if !errors.Is(err, cut) || len(out) != 0 {
		t.Errorf("cut event: %q, %v; want nothing and the read's error", out, err)
	}
	ended, _ := newTestLog(t, "non-JSON-RPC message from server dropped")
	f = newSSEFilter(io.NopCloser(&cutReader{s: partial, err: io.EOF}), 1<<20, &limitTable{}, ended)
	if out, err := io.ReadAll(f); err != nil || strings.Contains(string(out), "data:") {
		t.Errorf("event ended by EOF: %q, %v; want it dropped as invalid, no error", out, err)
	}
}
