//go:build linux

package integration

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillfs/skillfs/integration/hostile"
)

// TestURLSecretsStayInConfig: a server URL's user info, query values and
// fragment, and the user info and query of a URL a server redirects to,
// appear in none of the files a model reads (status.json, index.md,
// servers/LABEL.md, index.json), in `skillfs status`, on the ready line or
// in the daemon's log, whether the server refuses the connection, answers 500, drops the
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

	seen := map[string]string{"the ready line": m.Ready}
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

// TestStdioServerOwnEnvironment: a stdio server is started with the base
// environment, its own env and the variables its pass_env names, and
// nothing else of the daemon's: not ACME_TOKEN, which the daemon holds for
// another server's header (and does send there).
func TestStdioServerOwnEnvironment(t *testing.T) {
	t.Parallel()
	const token = "acme-token-for-acme-only"
	headerLog := filepath.Join(t.TempDir(), "headers.log")
	environ := filepath.Join(t.TempDir(), "environ")
	acme := hostileHTTP(t, hostile.Options{Fixtures: []string{}, HeaderLog: headerLog})
	acme["headers"] = map[string]string{"Authorization": "Bearer ${ACME_TOKEN}"}
	local := hostileStdio(t, hostile.Options{Fixtures: []string{}})
	local["env"].(map[string]string)[hostile.EnvEnvironFile] = environ
	local["env"].(map[string]string)["OWN_SETTING"] = "own-value"
	cfg := writeConfig(t, map[string]any{"acme": acme, "local": local}, map[string]any{
		"servers": map[string]any{"local": map[string]any{"pass_env": []string{"PASSED_ON"}}},
	})
	env := append(runtimeEnv(t), "ACME_TOKEN="+token, "PASSED_ON=passed-value", "NOT_PASSED=kept-back", "LC_MESSAGES=C")
	m := startMountEnv(t, env, cfg)
	for _, label := range []string{"acme", "local"} {
		if st := readStatus(t, m)[label]; st.State != "connected" {
			t.Fatalf("%s: state %q, last_error %q", label, st.State, st.LastError)
		}
	}
	b, err := os.ReadFile(environ)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, kv := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}
	for k, v := range got {
		if strings.Contains(v, token) {
			t.Errorf("the stdio server received the other server's token in %s", k)
		}
	}
	for _, k := range []string{"ACME_TOKEN", "NOT_PASSED"} {
		if _, ok := got[k]; ok {
			t.Errorf("the stdio server received %s", k)
		}
	}
	for k, want := range map[string]string{"OWN_SETTING": "own-value", "PASSED_ON": "passed-value", "LC_MESSAGES": "C", "PATH": os.Getenv("PATH")} {
		if got[k] != want {
			t.Errorf("the stdio server's %s is %q, want %q", k, got[k], want)
		}
	}
	// The daemon did hold the token, for the server whose header names it.
	hl, err := os.ReadFile(headerLog)
	if err != nil || !strings.Contains(string(hl), strconv.Quote("Bearer "+token)) {
		t.Errorf("acme's header log (%v) does not show its token:\n%s", err, hl)
	}
}
