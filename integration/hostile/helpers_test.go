package hostile_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillfs/skillfs/integration/hostile"
	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/internal/testkit"
)

func TestMain(m *testing.M) {
	if os.Getenv(hostile.EnvServe) != "" {
		os.Exit(hostile.Main())
	}
	testkit.Main(m)
}

// The protocol eras go-sdk v1.8.0 speaks.
const (
	eraOld = "2025-11-25"
	eraNew = "2026-07-28"
)

// Wire types of a plain SEP-2640 client. Results keep raw JSON so the
// tests see exactly what the server sent.
type listParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type listResult struct {
	mcp.ResultBase
	ResultType string          `json:"resultType,omitempty"`
	Skills     json.RawMessage `json:"skills"`
	NextCursor string          `json:"nextCursor,omitempty"`
	TTLMs      *int            `json:"ttlMs,omitempty"`
	CacheScope string          `json:"cacheScope,omitempty"`
}

type getParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

type getResult struct {
	mcp.ResultBase
	Skill json.RawMessage `json:"skill"`
}

type dirParams struct {
	mcp.ParamsBase
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

type dirResult struct {
	mcp.ResultBase
	Resources  []*mcp.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor,omitempty"`
}

// testLogger fails the test on any Warn or Error, unless allowed says
// the message is expected.
func testLogger(t *testing.T, allowed ...string) *slog.Logger {
	return testkit.NewLog(t, allowed...).Logger()
}

func newServer(t *testing.T, opts hostile.Options) *hostile.Server {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	if opts.Exit == nil {
		opts.Exit = func(code int) { t.Errorf("the server exited with %d", code) }
	}
	s, err := hostile.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func newClient(t *testing.T) *mcp.Client {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "hostile-test", Version: "0"}, nil)
	for _, err := range []error{
		mcp.AddSendingCustomMethod[*listParams, *listResult](c, "skills/list"),
		mcp.AddSendingCustomMethod[*getParams, *getResult](c, "skills/get"),
		mcp.AddSendingCustomMethod[*dirParams, *dirResult](c, "resources/directory/read"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// connect serves one in-memory session of s and returns its client.
func connect(t *testing.T, s *hostile.Server, era string) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	return connectTransports(t, s, st, ct, era)
}

func connectTransports(t *testing.T, s *hostile.Server, st, ct mcp.Transport, era string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, st) }()
	cs, err := newClient(t).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return cs
}

func sha(b []byte) skill.Digest {
	sum := sha256.Sum256(b)
	return skill.Digest("sha256:" + hex.EncodeToString(sum[:]))
}

// listAll follows skills/list to its end (at most maxPages pages).
func listAll(t *testing.T, cs *mcp.ClientSession, maxPages int) ([]json.RawMessage, []string) {
	t.Helper()
	var entries []json.RawMessage
	var cursors []string
	cursor := ""
	for range maxPages {
		res, err := mcp.CallCustomMethod[*listParams, *listResult](t.Context(), cs, "skills/list", &listParams{Cursor: cursor})
		if err != nil {
			t.Fatalf("skills/list cursor %q: %v", cursor, err)
		}
		var page []json.RawMessage
		if err := json.Unmarshal(res.Skills, &page); err != nil {
			t.Fatalf("skills/list cursor %q: skills is not an array: %v", cursor, err)
		}
		entries = append(entries, page...)
		if res.NextCursor == "" {
			return entries, cursors
		}
		cursors = append(cursors, res.NextCursor)
		cursor = res.NextCursor
	}
	t.Fatalf("skills/list did not end within %d pages", maxPages)
	return nil, nil
}

func decodeEntry(t *testing.T, raw json.RawMessage) skill.Entry {
	t.Helper()
	var e skill.Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatalf("entry %.200s: %v", raw, err)
	}
	return e
}

func getSkill(ctx context.Context, cs *mcp.ClientSession, uri string) (skill.Entry, error) {
	res, err := mcp.CallCustomMethod[*getParams, *getResult](ctx, cs, "skills/get", &getParams{URI: uri})
	if err != nil {
		return skill.Entry{}, err
	}
	var e skill.Entry
	err = json.Unmarshal(res.Skill, &e)
	return e, err
}

// read reads uri and returns its one content's bytes.
func read(ctx context.Context, cs *mcp.ClientSession, uri string) ([]byte, error) {
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, err
	}
	if len(res.Contents) != 1 || res.Contents[0].URI != uri {
		return nil, fmt.Errorf("read %s: %d contents, first for %q", uri, len(res.Contents), res.Contents[0].URI)
	}
	c := res.Contents[0]
	if c.Blob != nil {
		return c.Blob, nil
	}
	return []byte(c.Text), nil
}

func isCode(err error, code int64) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && we.Code == code
}

// rawClient speaks newline-delimited JSON-RPC by hand, to see the bytes a
// go-sdk client would refuse to decode.
type rawClient struct {
	w  io.Writer
	r  *bufio.Reader
	id int
}

type rawResponse struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func newRawClient(t *testing.T, w io.Writer, r io.Reader) *rawClient {
	t.Helper()
	c := &rawClient{w: w, r: bufio.NewReader(r)}
	if _, err := c.call("initialize", map[string]any{
		"protocolVersion": eraOld,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "raw", "version": "0"},
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *rawClient) send(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = c.w.Write(append(b, '\n'))
	return err
}

// call sends a request and returns its response, skipping notifications.
func (c *rawClient) call(method string, params any) (*rawResponse, error) {
	c.id++
	if err := c.send(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	for {
		line, err := c.r.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("%s: %w after %q", method, err, truncate(line))
		}
		var resp rawResponse
		if err := json.Unmarshal(line, &resp); err != nil {
			return nil, fmt.Errorf("%s: %w in %q", method, err, truncate(line))
		}
		if resp.ID == c.id {
			return &resp, nil
		}
	}
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// lockedBuffer collects a subprocess's stderr while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o644) }
