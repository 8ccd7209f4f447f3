package skillserver_test

import (
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"testing"
)

// postInitialize sends an initialize request with the given Origin
// header (none when empty) and returns the HTTP status.
func postInitialize(t *testing.T, u, origin string) int {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`
	req, err := http.NewRequest("POST", u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestServeHTTPOrigin(t *testing.T) {
	fx := newFixture(t, 1)
	u, _, stderr := startHTTPServer(t, fx.dir, "--allow-origin", "https://app.example", "--allow-origin", "http://tool.example:8080")
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	port := pu.Port()
	for _, c := range []struct {
		origin string
		want   int
	}{
		{"", 200},
		{"http://127.0.0.1:" + port, 200},
		{"http://localhost:" + port, 200},
		{"https://app.example", 200},
		{"HTTPS://APP.EXAMPLE", 200},
		{"http://tool.example:8080", 200},
		{"http://evil.example", 403},
		{"http://tool.example", 403},
		{"http://app.example", 403},
		{"http://127.0.0.1:1", 403},
		{"https://127.0.0.1:" + port, 403},
		{"null", 403},
		{"http://127.0.0.1:" + port + ".evil.example", 403},
	} {
		if got := postInitialize(t, u, c.origin); got != c.want {
			t.Errorf("Origin %q: HTTP %d, want %d; stderr:\n%s", c.origin, got, c.want, stderr)
		}
	}
}

func TestServeHTTPOriginAllowRemote(t *testing.T) {
	fx := newFixture(t, 1)
	// --allow-remote lifts the loopback-address rule, not the Origin
	// check: an unlisted foreign origin is still refused.
	u, _, stderr := startHTTPServer(t, fx.dir, "--allow-remote", "--allow-origin", "https://app.example")
	if got := postInitialize(t, u, "https://app.example"); got != 200 {
		t.Errorf("listed origin: HTTP %d, want 200; stderr:\n%s", got, stderr)
	}
	if got := postInitialize(t, u, "http://evil.example"); got != 403 {
		t.Errorf("unlisted origin: HTTP %d, want 403; stderr:\n%s", got, stderr)
	}
}

func TestServeAllowOriginUsage(t *testing.T) {
	dir := t.TempDir()
	for _, o := range []string{"evil.example", "ftp://x.example", "https://x.example/path", "https://"} {
		out, err := exec.Command(skillfsBin, "serve", dir, "--http", "127.0.0.1:0", "--allow-origin", o).CombinedOutput()
		if code := exitCode(t, err); code != 2 {
			t.Errorf("--allow-origin %q: exit %d, want 2; output:\n%s", o, code, out)
		}
	}
}
