package skillserver_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/skillfs/skillfs/internal/testkit"
)

// skillfsBin is the skillfs binary built once for this test run.
var skillfsBin string

func TestMain(m *testing.M) {
	cleanup, err := testkit.Isolate() // never the user's HOME or XDG directories
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := runTests(m)
	cleanup()
	os.Exit(code)
}

func runTests(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "skillserver-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	skillfsBin = filepath.Join(tmp, "skillfs")
	if err := testkit.Build("./cmd/skillfs", skillfsBin); err != nil {
		fmt.Fprintln(os.Stderr, "building skillfs:", err)
		return 1
	}
	// The parallel tests talk to server processes and wait on them.
	testkit.WaitingParallel(4)
	return m.Run()
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

// A peer is one running `skillfs serve` and a client session with it.
type peer struct {
	cs       *mcp.ClientSession
	cmd      *exec.Cmd // the server, when it is the client's subprocess
	stderr   *lockedBuffer
	changed  chan struct{} // one value per notifications/resources/list_changed
	listened chan struct{} // closed when subscriptions/listen is acknowledged
}

// newClient returns a go-sdk client that knows the SEP-2640 methods and
// reports list_changed notifications (and, in the 2026-07-28 protocol, the
// acknowledgement of its subscriptions/listen) to p.
func newClient(t *testing.T, p *peer) *mcp.Client {
	t.Helper()
	p.changed = make(chan struct{}, 64)
	p.listened = make(chan struct{})
	var once sync.Once
	c := mcp.NewClient(&mcp.Implementation{Name: "skillserver-test", Version: "0"}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			select {
			case p.changed <- struct{}{}:
			default:
			}
		},
	})
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/subscriptions/acknowledged" {
				once.Do(func() { close(p.listened) })
			}
			return next(ctx, method, req)
		}
	})
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

// startStdio runs `skillfs serve DIR args...` with a client on its stdio.
func startStdio(t *testing.T, dir, era string, args ...string) *peer {
	t.Helper()
	p := &peer{stderr: &lockedBuffer{}}
	cmd := exec.Command(skillfsBin, append([]string{"serve", dir}, args...)...)
	cmd.Stderr = p.stderr
	cs, err := newClient(t, p).Connect(t.Context(), &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatalf("connect over stdio: %v\nstderr:\n%s", err, p.stderr)
	}
	p.cs, p.cmd = cs, cmd
	t.Cleanup(func() {
		cs.Close()
		if cmd.Process != nil {
			cmd.Process.Kill()
		}
	})
	return p
}

var servingLine = regexp.MustCompile(`^serving (.+) on (http://\S+/)$`)

// startHTTPServer runs `skillfs serve DIR --http 127.0.0.1:0 args...` and
// returns its URL once it prints that it is listening.
func startHTTPServer(t *testing.T, dir string, args ...string) (string, *exec.Cmd, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(skillfsBin, append([]string{"serve", dir, "--http", "127.0.0.1:0"}, args...)...)
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	stderr := &lockedBuffer{}
	url := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			fmt.Fprintln(stderr, sc.Text())
			if m := servingLine.FindStringSubmatch(sc.Text()); m != nil {
				url <- m[2]
			}
		}
		close(url)
		io.Copy(io.Discard, errPipe)
	}()
	u, ok := <-url
	if !ok {
		t.Fatalf("skillfs serve --http exited without listening; stderr:\n%s", stderr)
	}
	return u, cmd, stderr
}

// startHTTP runs an HTTP server and connects a client to it.
func startHTTP(t *testing.T, dir, era string, args ...string) *peer {
	t.Helper()
	u, _, stderr := startHTTPServer(t, dir, args...)
	return connectHTTP(t, u, era, stderr)
}

func connectHTTP(t *testing.T, u, era string, stderr *lockedBuffer) *peer {
	t.Helper()
	p := &peer{stderr: stderr}
	cs, err := newClient(t, p).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: u}, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		t.Fatalf("connect over HTTP: %v\nstderr:\n%s", err, stderr)
	}
	p.cs = cs
	t.Cleanup(func() { cs.Close() })
	return p
}

// The protocol eras go-sdk v1.8.0 negotiates: initialize, and server/discover.
var eras = []string{"2025-11-25", "2026-07-28"}

type transport struct {
	name  string
	start func(t *testing.T, dir, era string, args ...string) *peer
}

var transports = []transport{{"stdio", startStdio}, {"http", startHTTP}}
