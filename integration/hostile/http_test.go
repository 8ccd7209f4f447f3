package hostile_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillfs/skillfs/integration/hostile"
)

// serveHTTP runs s's Handler on 127.0.0.1 and returns its URL.
func serveHTTP(t *testing.T, s *hostile.Server) string {
	t.Helper()
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		// A hung read holds its request open; drop the connections first.
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL
}

func connectHTTP(t *testing.T, url, era string) (*mcp.ClientSession, error) {
	t.Helper()
	cs, err := newClient(t).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// TestHTTP drives the streamable HTTP handler in both protocol eras: the
// listing, honest and misbehaving reads, a hung read that the client
// cancels, and the stale phases.
func TestHTTP(t *testing.T) {
	for _, era := range []string{eraOld, eraNew} {
		t.Run(era, func(t *testing.T) {
			state := t.TempDir() + "/state.json"
			s := newServer(t, hostile.Options{
				Fixtures:  []string{hostile.Rotating, hostile.DigestMismatch, hostile.HangRead, hostile.Stale},
				StateFile: state,
			})
			cs, err := connectHTTP(t, serveHTTP(t, s), era)
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			raws, _ := listAll(t, cs, 10)
			if len(raws) != 6 {
				t.Errorf("listed %d skills, want 6", len(raws))
			}
			for _, raw := range raws {
				e := decodeEntry(t, raw)
				skills, err := hostile.Describe(fixtureOf(e.URI), "")
				if err != nil {
					t.Fatal(err)
				}
				for _, sk := range skills {
					if sk.Entry.URI != e.URI {
						continue
					}
					for _, f := range sk.Files {
						checkFile(t, cs, noRawSession(t), e, f)
					}
				}
			}
			if err := hostile.WriteState(state, hostile.State{Phase: "b"}); err != nil {
				t.Fatal(err)
			}
			skills, _ := hostile.Describe(hostile.Stale, "")
			if got, err := read(ctx, cs, "skill://stale/data.txt"); err != nil || string(got) != string(skills[0].Files[1].Updated()) {
				t.Errorf("phase b over HTTP: %q, %v", got, err)
			}
		})
	}
}

// noRawSession is checkFile's raw for fixtures without big texts.
func noRawSession(t *testing.T) func() *rawClient {
	return func() *rawClient {
		t.Fatal("a big text to stream, where no raw session is served")
		return nil
	}
}

// fixtureOf maps a test skill URI back to its fixture, for the few
// fixtures TestHTTP serves (each named after its only skill).
func fixtureOf(uri string) string {
	name := uri[len("skill://"):]
	return name[:len(name)-len("/SKILL.md")]
}

// TestHTTPDie: over HTTP a dying server drops the connection in the
// middle of the response (die-mid-read) or before it (die-after-list), and
// answers nothing after.
func TestHTTPDie(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts hostile.Options
		uri  string
	}{
		{"die-mid-read", hostile.Options{Fixtures: []string{hostile.DieMidRead}}, "skill://die-mid-read/SKILL.md"},
		{"die-after-list", hostile.Options{Fixtures: []string{}, Mode: hostile.ModeDieAfterList}, "skill://honest-a/SKILL.md"},
	} {
		for _, era := range []string{eraOld, eraNew} {
			t.Run(tc.name+"/"+era, func(t *testing.T) {
				var exited atomic.Int32
				opts := tc.opts
				opts.Exit = func(code int) { exited.Store(int32(code)) }
				opts.Logger = testLogger(t)
				url := serveHTTP(t, newServer(t, opts))
				cs, err := connectHTTP(t, url, era)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
				defer cancel()
				if raws, _ := listAll(t, cs, 10); len(raws) == 0 {
					t.Error("nothing listed before the death")
				}
				if _, err := read(ctx, cs, tc.uri); err == nil {
					t.Error("the read answered")
				} else if errors.Is(err, context.DeadlineExceeded) {
					t.Error("the read hung instead of failing")
				}
				if got := exited.Load(); got != hostile.ExitDied {
					t.Errorf("exit code %d, want %d", got, hostile.ExitDied)
				}
				if cs, err := connectHTTP(t, url, era); err == nil {
					if _, err := read(ctx, cs, "skill://honest-a/SKILL.md"); err == nil {
						t.Error("a new session still reads after the server died")
					}
				}
			})
		}
	}
}
