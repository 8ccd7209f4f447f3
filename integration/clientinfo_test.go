//go:build linux

package integration

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// clientInfoServer is a real MCP server on loopback HTTP (go-sdk's, not
// ours) that records the clientInfo of every session's initialize.
type clientInfoServer struct {
	url  string
	mu   sync.Mutex
	seen []mcp.Implementation
}

func newClientInfoServer(t *testing.T) *clientInfoServer {
	t.Helper()
	s := &clientInfoServer{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "clientinfo", Version: "1"}, &mcp.ServerOptions{
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
			if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil {
				s.mu.Lock()
				s.seen = append(s.seen, *p.ClientInfo)
				s.mu.Unlock()
			}
		},
	})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	s.url = hs.URL
	return s
}

// first waits for the first session's clientInfo.
func (s *clientInfoServer) first(t *testing.T) mcp.Implementation {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		if len(s.seen) > 0 {
			ci := s.seen[0]
			s.mu.Unlock()
			return ci
		}
		s.mu.Unlock()
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no session initialized within a minute")
	return mcp.Implementation{}
}

// TestClientInfoNamesSkillfs: the mount and skillfs mcp each tell a server
// who they are, name "skillfs" and the version `skillfs --version` prints,
// so that a server's logs and policies can tell skillfs's sessions apart.
func TestClientInfoNamesSkillfs(t *testing.T) {
	t.Parallel()
	out, err := run(t, skillfsBin, "--version")
	if err != nil {
		t.Fatalf("skillfs --version: %v\n%s", err, out)
	}
	fields := strings.Fields(out)
	if len(fields) < 2 {
		t.Fatalf("skillfs --version printed %q", out)
	}
	version := fields[len(fields)-1]
	check := func(t *testing.T, who string, ci mcp.Implementation) {
		if ci.Name != "skillfs" || ci.Version == "" || ci.Version != version {
			t.Errorf("%s's clientInfo is %+v, want name skillfs and version %q", who, ci, version)
		}
	}
	t.Run("mount", func(t *testing.T) {
		t.Parallel()
		s := newClientInfoServer(t)
		cfg := writeConfig(t, map[string]any{"ci": map[string]any{"type": "http", "url": s.url}}, nil)
		m := startMount(t, cfg)
		check(t, "the mount", s.first(t))
		m.Stop(t)
	})
	t.Run("mcp", func(t *testing.T) {
		t.Parallel()
		s := newClientInfoServer(t)
		cfg := writeConfig(t, map[string]any{"ci": map[string]any{"type": "http", "url": s.url}}, nil)
		mcpSession(t, "--config", cfg, "--attach", "never", "--cache-dir", filepath.Join(t.TempDir(), "cache"))
		check(t, "skillfs mcp", s.first(t))
	})
}
