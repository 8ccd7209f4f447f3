//go:build linux

package integration

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skillfs/skillfs/integration/hostile"
)

// TestHostileRedirectKeepsCredentials: a server that answers 307 to
// another, real, MCP server on another port (another origin) takes
// neither skillfs nor its configured Authorization header there, over
// streamable HTTP and over legacy SSE; nothing of the other server
// appears under its label, status.json says why, and the other server,
// configured under its own label, is mounted as usual.
func TestHostileRedirectKeepsCredentials(t *testing.T) {
	t.Parallel()
	none := []string{}
	headerLog := filepath.Join(t.TempDir(), "headers.log")
	other := hostileHTTP(t, hostile.Options{Fixtures: none, HeaderLog: headerLog})
	otherURL := strings.TrimSuffix(other["url"].(string), "/")
	evil := hostileHTTP(t, hostile.Options{Fixtures: none, RedirectTo: otherURL})
	evilURL := strings.TrimSuffix(evil["url"].(string), "/")

	const stolen = "Bearer only-for-the-redirecting-server"
	auth := map[string]string{"Authorization": stolen}
	cfg := writeConfig(t, map[string]any{
		"evil":     map[string]any{"type": "http", "url": evilURL + "/mcp", "headers": auth},
		"evil-sse": map[string]any{"type": "sse", "url": evilURL + hostile.SSEPath, "headers": auth},
		"other":    map[string]any{"type": "http", "url": otherURL + "/mcp", "headers": map[string]string{"Authorization": "Bearer other-own"}},
	}, nil)
	m := startMount(t, cfg)
	m.warnings = true // the refused origins make the daemon warn, as they should

	// Wait until each redirecting origin has either failed or connected
	// (which would be the bug), then look at what the other server saw.
	for _, label := range []string{"evil", "evil-sse"} {
		waitFor(t, 60*time.Second, label+" to fail or connect", func() bool {
			st := readStatus(t, m)[label]
			return st.LastError != "" || st.State == "connected"
		})
	}
	if b, err := os.ReadFile(m.Path("other", "honest-a", "SKILL.md")); err != nil || len(b) == 0 {
		t.Errorf("the other server under its own label: %v", err)
	}

	b, err := os.ReadFile(headerLog)
	if err != nil {
		t.Fatal(err)
	}
	own := 0
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if strings.Contains(line, strconv.Quote(stolen)) {
			t.Errorf("the other server received the redirecting server's credential: %s", line)
		}
		if strings.HasSuffix(line, strconv.Quote("Bearer other-own")) {
			own++
		}
	}
	if own == 0 {
		t.Errorf("the header log recorded no request of the other server's own origin:\n%s", b)
	}
	for _, label := range []string{"evil", "evil-sse"} {
		st := readStatus(t, m)[label]
		if !strings.Contains(st.LastError, "refused to leave the configured server's origin") ||
			!strings.Contains(st.LastError, evilURL) || !strings.Contains(st.LastError, otherURL) {
			t.Errorf("%s: state %q, last_error %q; want the cross-origin refusal naming %s and %s", label, st.State, st.LastError, evilURL, otherURL)
		}
		if ents, err := os.ReadDir(m.Path(label)); err != nil || len(ents) != 0 {
			t.Errorf("%s/ holds %v (%v); want nothing of the other server", label, ents, err)
		}
		if _, err := os.Stat(m.Path(label, "honest-a", "SKILL.md")); !os.IsNotExist(err) {
			t.Errorf("%s/honest-a/SKILL.md: %v; want ENOENT", label, err)
		}
	}
	if st := readStatus(t, m)["other"]; st.State != "connected" {
		t.Errorf("other: state %q, last_error %q", st.State, st.LastError)
	}
}
