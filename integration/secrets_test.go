//go:build linux

package integration

import (
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/skillfs/skillfs/integration/hostile"
)

// TestURLSecretsStayInConfig: a server URL's user info, query values and
// fragment, and the user info and query of a URL a server redirects to,
// appear in none of the files a model reads (status.json, index.md,
// servers/LABEL.md, index.json), in `skillfs status` or in the daemon's
// log, whether the server refuses the connection, answers 500, drops the
// connection, or redirects (within its origin) to a URL that carries
// secrets and then drops it. The errors still say what happened, with the
// URL masked as `skillfs config check` masks it.
func TestURLSecretsStayInConfig(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := ln.Addr().String()
	ln.Close() // nothing listens there now: connections are refused

	const (
		user  = "configuser"
		pass  = "configpass"
		query = "configquery"
		frag  = "configfrag"
	)
	secrets := []string{user, pass, query, frag, hostile.RedirectUser, hostile.RedirectPass, hostile.RedirectToken}
	secretURL := func(hostport string) string {
		return "http://" + user + ":" + pass + "@" + hostport + "/mcp?api_key=" + query + "&x=1#" + frag
	}
	hostOf := func(entry map[string]any) string {
		u := strings.TrimPrefix(entry["url"].(string), "http://")
		return strings.TrimSuffix(u, "/")
	}
	none := []string{}
	servers := map[string]any{
		"refused": map[string]any{"type": "http", "url": secretURL(refused)},
		"sse":     map[string]any{"type": "sse", "url": secretURL(refused)},
	}
	for label, mode := range map[string]string{"fivehundred": hostile.ModeHTTP500, "closes": hostile.ModeHTTPClose, "redirects": hostile.ModeRedirectSecret} {
		servers[label] = map[string]any{"type": "http", "url": secretURL(hostOf(hostileHTTP(t, hostile.Options{Fixtures: none, Mode: mode})))}
	}
	env := runtimeEnv(t)
	m := startMountEnv(t, env, writeConfig(t, servers, nil))
	m.warnings = true // every server fails, and the daemon says so

	for label := range servers {
		waitFor(t, 2*time.Minute, label+" to fail", func() bool {
			return readStatus(t, m)[label].LastError != ""
		})
	}
	// What the user sees says what happened, the URL masked.
	st := readStatus(t, m)
	if e := st["refused"].LastError; !strings.Contains(e, "api_key=***&x=***") || !strings.Contains(e, "connection refused") {
		t.Errorf("refused: last_error %q; want the refusal with the URL masked", e)
	}
	if e := st["redirects"].LastError; !strings.Contains(e, "/moved?token=***") {
		t.Errorf("redirects: last_error %q; want the redirect's URL, masked", e)
	}

	seen := map[string]string{}
	for _, p := range []string{"status.json", "index.md", "index.json"} {
		b, err := os.ReadFile(m.Path(".skillfs", p))
		if err != nil {
			t.Fatal(err)
		}
		seen[".skillfs/"+p] = string(b)
	}
	for label := range servers {
		b, err := os.ReadFile(m.Path(".skillfs", "servers", label+".md"))
		if err != nil {
			t.Fatal(err)
		}
		seen[".skillfs/servers/"+label+".md"] = string(b)
	}
	for _, args := range [][]string{{"status"}, {"status", "--json"}} {
		out, errOut, code := ctl(t, env, args...)
		if code != 0 {
			t.Errorf("skillfs %v: exit %d: %s", args, code, errOut)
		}
		seen["skillfs "+strings.Join(args, " ")] = out + errOut
	}
	m.Stop(t)
	seen["the daemon's log"] = m.log.String()
	for where, text := range seen {
		for _, s := range secrets {
			if i := strings.Index(text, s); i >= 0 {
				t.Errorf("%s holds the secret %q: …%s…", where, s, text[max(0, i-120):min(len(text), i+40)])
			}
		}
	}
	if t.Failed() {
		t.Logf("status.json:\n%s", seen[".skillfs/status.json"])
	}
}
