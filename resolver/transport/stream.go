package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// readBufSize is the line reader's window: a line longer than this reaches
// the frame in pieces of this size.
const readBufSize = 64 << 10

// warnEvery is how often a run of dropped non-JSON lines is logged: the
// first one, then every warnEvery-th.
const warnEvery = 100

// Stream returns a transport that speaks newline-delimited JSON-RPC over rwc,
// bounding each inbound message as the package doc describes. Connect may be
// called once; closing the connection closes rwc.
func Stream(rwc io.ReadWriteCloser, opts Options) mcp.Transport {
	return &streamTransport{rwc: rwc, opts: opts}
}

type streamTransport struct {
	rwc  io.ReadWriteCloser
	opts Options
	used atomic.Bool
}

func (t *streamTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	if t.used.Swap(true) {
		return nil, errors.New("connect stream: transport already used")
	}
	return newLineConn(t.rwc, t.rwc, t.rwc.Close, t.opts), nil
}

// lineConn is an mcp.Connection over newline-delimited JSON.
type lineConn struct {
	w       io.Writer
	closeFn func() error
	max     int64
	log     *slog.Logger
	limits  limitTable
	notes   *notifyLimiter

	writeMu sync.Mutex

	incoming chan []jsonrpc.Message // from the read loop
	readDone chan struct{}          // closed when the read loop has ended; readErr is then set
	readErr  error
	queue    []jsonrpc.Message // the rest of a batch; Reads are serialised by the SDK

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error

	// peak is the read loop's largest message buffer; tests read it.
	peak atomic.Int64
}

func newLineConn(r io.Reader, w io.Writer, closeFn func() error, opts Options) *lineConn {
	c := &lineConn{
		w:        w,
		closeFn:  closeFn,
		max:      opts.maxFrame(),
		log:      opts.logger(),
		notes:    newNotifyLimiter(opts),
		incoming: make(chan []jsonrpc.Message),
		readDone: make(chan struct{}),
		closed:   make(chan struct{}),
	}
	go c.readLoop(r)
	return c
}

func (c *lineConn) SessionID() string { return "" }

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, nil
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case msgs := <-c.incoming:
		c.queue = msgs[1:]
		return msgs[0], nil
	case <-c.readDone:
		select {
		case <-c.closed:
			return nil, io.EOF
		default:
		}
		return nil, c.readErr
	}
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("write message: %w", err)
	}
	data = append(data, '\n')
	// The limit must be in place before the server can possibly answer.
	req, isCall := msg.(*jsonrpc.Request)
	isCall = isCall && req.IsCall()
	if isCall {
		l, ok := responseLimit(ctx)
		if !ok || l > c.max {
			l = c.max
		}
		if sink := contentsOf(ctx); l < c.max || sink != nil {
			c.limits.add(ctx, req.ID, l, sink)
		}
	}
	c.writeMu.Lock()
	_, err = c.w.Write(data)
	c.writeMu.Unlock()
	if err != nil {
		if isCall {
			c.limits.take(req.ID)
		}
		select {
		case <-c.closed:
			return fmt.Errorf("write message: %w", mcp.ErrConnectionClosed)
		default:
		}
		return fmt.Errorf("write message: %w", err)
	}
	return nil
}

// Close ends the connection. It may be called more than once and
// concurrently with Read.
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.closeErr = c.closeFn()
	})
	return c.closeErr
}

func (c *lineConn) readLoop(r io.Reader) {
	var (
		br    = bufio.NewReaderSize(r, readBufSize)
		f     = newFrame(c.max, &c.limits)
		noise = noise{log: c.log}
		err   error
	)
	for {
		var chunk []byte
		chunk, err = br.ReadSlice('\n')
		end := err == nil
		if end {
			chunk = chunk[:len(chunk)-1]
		}
		f.write(chunk)
		c.peak.Store(int64(f.peak))
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		// A last line without its newline counts as a line (the SDK's own
		// decoder accepts it too).
		if end || (errors.Is(err, io.EOF) && f.n > 0) {
			if !c.dispatch(f, &noise) {
				err = io.EOF
				break
			}
			f.reset()
		}
		if err != nil {
			break
		}
	}
	if errors.Is(err, io.EOF) {
		c.readErr = io.EOF
	} else {
		c.readErr = fmt.Errorf("read from server: %w", err)
	}
	close(c.readDone)
}

// dispatch hands one complete line to Read, or drops it. It reports false if
// the connection was closed meanwhile.
func (c *lineConn) dispatch(f *frame, noise *noise) bool {
	if f.empty() {
		return true // blank line
	}
	if f.sc.method && !f.sc.bad && !c.notes.allow(f.head[:f.headN]) {
		return true
	}
	data, v := f.finish()
	var msgs []jsonrpc.Message
	switch v {
	case refuse:
		m, err := jsonrpc.DecodeMessage(data)
		if err != nil {
			// finish only answers ids that parse; this would be a bug.
			c.log.Error("undecodable refusal", "op", "read", "excerpt", string(data), "err", err)
			return true
		}
		refusedDebug(c.log, f)
		msgs = []jsonrpc.Message{m}
	case dropLong:
		dropLongWarn(c.log, f)
		return true
	case dropBad:
		noise.drop(f, nil)
		return true
	case deliver:
		var err error
		if msgs, err = c.decodeLine(data); err != nil {
			noise.drop(f, err)
			return true
		}
	}
	select {
	case c.incoming <- msgs:
		return true
	case <-c.closed:
		return false
	}
}

// noise counts messages dropped for not being JSON-RPC (a server writing
// logs to stdout) and logs the first and then every warnEvery-th, so that a
// chatty server cannot flood the log.
type noise struct {
	log *slog.Logger
	n   int
}

func (l *noise) drop(f *frame, err error) {
	l.n++
	if (l.n-1)%warnEvery != 0 {
		return
	}
	args := []any{"op", "read", "dropped", l.n, "excerpt", f.excerpt()}
	if err != nil {
		args = append(args, "err", err)
	}
	l.log.Warn("non-JSON-RPC message from server dropped", args...)
}

// decodeLine decodes a JSON-RPC message or batch. A batch was bounded as a
// whole by MaxFrame; each response in it is held to its own call's limit
// here, and its limit forgotten.
func (c *lineConn) decodeLine(data []byte) ([]jsonrpc.Message, error) {
	data = bytes.TrimLeft(data, " \t\r\n")
	if len(data) == 0 || data[0] != '[' {
		m, err := jsonrpc.DecodeMessage(data)
		if err != nil {
			return nil, err
		}
		return []jsonrpc.Message{m}, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, fmt.Errorf("decode batch: %w", err)
	}
	if len(raws) == 0 {
		return nil, errors.New("decode batch: empty")
	}
	msgs := make([]jsonrpc.Message, 0, len(raws))
	for _, raw := range raws {
		m, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return nil, fmt.Errorf("decode batch: %w", err)
		}
		if resp, ok := m.(*jsonrpc.Response); ok {
			if l, ok := c.limits.get(resp.ID); ok && int64(len(raw)) > l {
				m = &jsonrpc.Response{ID: resp.ID, Error: &jsonrpc.Error{
					Code:    CodeResponseTooLarge,
					Message: refusalMessage(l),
				}}
			}
			c.limits.take(resp.ID)
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// dropLongWarn logs an over-long message that had no id to answer: a
// notification, a server request, or garbage.
func dropLongWarn(log *slog.Logger, f *frame) {
	log.Warn("message from server over the limit dropped", "op", "read",
		"limit", f.limit, "bytes", f.n, "request", f.sc.method, "excerpt", f.excerpt())
}

// refusedDebug notes a refusal. The caller sees it as the call's error and
// reports it with more context, so it is not worth a warning here.
func refusedDebug(log *slog.Logger, f *frame) {
	log.Debug("response over the limit refused", "op", "read", "id", string(f.sc.id), "limit", f.limit, "bytes", f.n)
}
