package hostile

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A handler that must kill the server returns a result whose _meta holds
// one of these tokens. The layer that puts bytes on the wire recognises
// it, so the server dies exactly while that response is being sent: after
// half of its line for die-mid-read (over stdio), before any of it for
// die-after-list. Deciding in the handler and dying in the writer keeps
// the JSON-RPC encoding go-sdk's own.
const (
	dieKey  = "io.github.skillfs.hostile/die"
	dieHalf = "mid-read-5c0b6f2e"
	dieNow  = "now-5c0b6f2e"
)

var errDied = errors.New("hostile: the server died on purpose")

func dieKind(data []byte) string {
	if !bytes.Contains(data, []byte(dieKey)) {
		return ""
	}
	switch {
	case bytes.Contains(data, []byte(dieHalf)):
		return dieHalf
	case bytes.Contains(data, []byte(dieNow)):
		return dieNow
	}
	return ""
}

// die ends the server: Options.Exit, which by default does not return.
func (s *Server) die(kind string) {
	s.dead.Store(true)
	s.log.Info("dying on purpose", "op", "die", "err", kind)
	s.opts.Exit(ExitDied)
}

// frameWriter serialises writes to stdout, so that the half line
// die-mid-read writes never interleaves with a frame go-sdk is writing
// (go-sdk writes each frame in one Write).
type frameWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (f *frameWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.w.Write(p)
}

// Close does not close stdout: the process may still log on stderr and
// exit with a status the client should see.
func (f *frameWriter) Close() error { return nil }

func (f *frameWriter) writeHalf(p []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.w.Write(p[:len(p)/2])
}

// dyingTransport wraps a stream transport's connection to die on marked
// responses. raw, when set, is the stream's writer, for the half line.
type dyingTransport struct {
	inner mcp.Transport
	s     *Server
	raw   *frameWriter
}

func (t *dyingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &dyingConn{Connection: c, s: t.s, raw: t.raw}, nil
}

type dyingConn struct {
	mcp.Connection
	s       *Server
	raw     *frameWriter
	stormer stormer
}

func (c *dyingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.stormer.observe(c, msg)
	}
	return msg, err
}

func (c *dyingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if c.s.dead.Load() {
		c.Connection.Close()
		return errDied
	}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		if kind := dieKind(resp.Result); kind != "" {
			if kind == dieHalf && c.raw != nil {
				if data, err := jsonrpc.EncodeMessage(msg); err == nil {
					c.raw.writeHalf(append(data, '\n'))
				}
			}
			c.s.die(kind)
			c.Connection.Close()
			return errDied
		}
	}
	return c.Connection.Write(ctx, msg)
}

// dyingResponseWriter dies on a marked response over HTTP. go-sdk writes
// responses from the session's goroutine, not the handler's, so it cannot
// abort the request itself: it cancels the request's context, which ends
// go-sdk's handler, and Handler then aborts the connection.
type dyingResponseWriter struct {
	http.ResponseWriter
	s      *Server
	cancel context.CancelFunc
	died   atomic.Bool
}

func (w *dyingResponseWriter) Write(p []byte) (int, error) {
	if w.died.Load() {
		return 0, errDied
	}
	if kind := dieKind(p); kind != "" {
		if kind == dieHalf {
			w.ResponseWriter.Write(p[:len(p)/2])
			http.NewResponseController(w.ResponseWriter).Flush()
		}
		w.died.Store(true)
		w.s.die(kind)
		w.cancel()
		return 0, errDied
	}
	return w.ResponseWriter.Write(p)
}

func (w *dyingResponseWriter) Flush() {
	if !w.died.Load() {
		http.NewResponseController(w.ResponseWriter).Flush()
	}
}

func (w *dyingResponseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
