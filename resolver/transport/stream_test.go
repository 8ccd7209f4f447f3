package transport

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/skillfs/skillfs/internal/testkit"
)

func intID(n int64) jsonrpc.ID {
	id, err := jsonrpc.MakeID(float64(n))
	if err != nil {
		panic(err)
	}
	return id
}

const sentinel = `{"jsonrpc":"2.0","id":999,"result":{}}`

// response returns a JSON-RPC response with the given raw id that is exactly
// size bytes long.
func response(id string, size int) string {
	s := `{"jsonrpc":"2.0","id":` + id + `,"result":{"text":"`
	end := `"}}`
	return s + strings.Repeat("A", size-len(s)-len(end)) + end
}

// resultLen is the length of the result of response(id, size).
func resultLen(id string, size int) int {
	return size - len(`{"jsonrpc":"2.0","id":`+id+`,"result":`) - 1
}

// rawPeer connects a lineConn to the test, which plays the server with raw
// bytes. What the connection writes is collected in written.
func rawPeer(t *testing.T, opts Options) (*lineConn, net.Conn, <-chan string) {
	t.Helper()
	client, server := net.Pipe()
	tr := Stream(client, opts)
	mc, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := mc.(*lineConn)
	written := make(chan string, 100)
	go func() {
		defer close(written)
		br := bufio.NewReader(server)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			written <- line
		}
	}()
	t.Cleanup(func() {
		c.Close()
		server.Close()
	})
	return c, server, written
}

// readUntilSentinel reads messages until the sentinel response, returning the
// others described.
func readUntilSentinel(t *testing.T, c *lineConn) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var got []string
	for {
		m, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v (after %q)", err, got)
		}
		if r, ok := m.(*jsonrpc.Response); ok && r.ID == intID(999) {
			return got
		}
		got = append(got, describe(m))
	}
}

func TestStreamMessages(t *testing.T) {
	big := strings.Repeat("B", 2000)
	refused := func(id any, limit int) string {
		return fmt.Sprintf("response id=%v error %d response larger than %d bytes refused", id, CodeResponseTooLarge, limit)
	}
	tests := []struct {
		name  string
		calls map[int64]int64 // calls written first: id → WithResponseLimit
		lines []string
		want  []string
		warns int
	}{
		{
			name:  "noise dropped, session goes on",
			lines: []string{"server starting on stdio", "", "   ", "{broken", `{"jsonrpc":"2.0","method":"notifications/message"}`},
			want:  []string{"request id=<nil> method=notifications/message"},
			warns: 1, // two dropped lines, one warning
		},
		{
			name:  "at MaxFrame delivered",
			lines: []string{response("1", 1000)},
			want:  []string{fmt.Sprintf("response id=1 result %d bytes", resultLen("1", 1000))},
		},
		{
			name:  "over MaxFrame, id first",
			lines: []string{response("1", 1001)},
			want:  []string{refused(1, 1000)},
		},
		{
			name:  "over MaxFrame, id after the body",
			lines: []string{`{"jsonrpc":"2.0","result":{"text":"` + big + `"},"id":2}`},
			want:  []string{refused(2, 1000)},
		},
		{
			name:  "string id with escapes echoed",
			lines: []string{`{"jsonrpc":"2.0","id":"a\"b\\c","result":"` + big + `"}`},
			want:  []string{refused(`a"b\c`, 1000)},
		},
		{
			name:  "per-call limit",
			calls: map[int64]int64{5: 100, 7: 500},
			lines: []string{response("5", 101), response("6", 200), response("7", 500)},
			want: []string{refused(5, 100),
				fmt.Sprintf("response id=6 result %d bytes", resultLen("6", 200)),
				fmt.Sprintf("response id=7 result %d bytes", resultLen("7", 500))},
		},
		{
			name:  "per-call limit above MaxFrame",
			calls: map[int64]int64{5: 5000},
			lines: []string{response("5", 2000)},
			want:  []string{refused(5, 1000)},
		},
		{
			name:  "notification over the cap dropped",
			lines: []string{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"x":"` + big + `"}}`},
			warns: 1,
		},
		{
			name:  "server request over the cap is not a response",
			calls: map[int64]int64{1: 100},
			lines: []string{`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"x":"` + big + `"}}`, response("1", 50)},
			want:  []string{fmt.Sprintf("response id=1 result %d bytes", resultLen("1", 50))},
			warns: 1,
		},
		{
			name:  "over the cap with an id no one can have",
			lines: []string{`{"jsonrpc":"2.0","id":1e999,"result":"` + big + `"}`},
			warns: 1,
		},
		{
			name:  "garbage over the cap dropped",
			lines: []string{strings.Repeat("log ", 600)},
			warns: 1,
		},
		{
			name:  "batch member over its call's limit",
			calls: map[int64]int64{8: 100},
			lines: []string{`[` + response("8", 200) + `,{"jsonrpc":"2.0","method":"n"}]`},
			want:  []string{refused(8, 100), "request id=<nil> method=n"},
		},
		{
			name:  "CRLF",
			lines: []string{`{"jsonrpc":"2.0","id":3,"result":{}}` + "\r"},
			want:  []string{"response id=3 result 2 bytes"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, rec := newTestLog(t, "dropped")
			c, server, written := rawPeer(t, Options{MaxFrame: 1000, Logger: log})
			for id, limit := range tt.calls {
				ctx := WithResponseLimit(context.Background(), limit)
				if err := c.Write(ctx, &jsonrpc.Request{ID: intID(id), Method: "resources/read"}); err != nil {
					t.Fatal(err)
				}
				<-written
			}
			go func() {
				for _, l := range append(tt.lines, sentinel) {
					if _, err := io.WriteString(server, l+"\n"); err != nil {
						return
					}
				}
			}()
			got := readUntilSentinel(t, c)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("read\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if n := len(rec.Matching(slog.LevelWarn, "dropped")); n != tt.warns {
				t.Errorf("%d warnings, want %d: %v", n, tt.warns, rec.Records())
			}
		})
	}
}

func TestStreamNoiseWarnsOncePerRun(t *testing.T) {
	log, rec := newTestLog(t, "dropped")
	c, server, _ := rawPeer(t, Options{Logger: log})
	go func() {
		for i := range 2*warnEvery + 1 {
			fmt.Fprintf(server, "debug: line %d\n", i)
		}
		io.WriteString(server, sentinel+"\n")
	}()
	if got := readUntilSentinel(t, c); len(got) != 0 {
		t.Errorf("read %q, want nothing", got)
	}
	warns := rec.Matching(slog.LevelWarn, "dropped")
	var counts []string
	for _, w := range warns {
		counts = append(counts, w.Attrs["dropped"])
	}
	if want := []string{"1", "101", "201"}; strings.Join(counts, ",") != strings.Join(want, ",") {
		t.Errorf("warnings at dropped=%v, want %v", counts, want)
	}
	if ex := warns[0].Attrs["excerpt"]; ex != "debug: line 0" {
		t.Errorf("excerpt %q", ex)
	}
}

// generator produces prefix, then fill bytes: n of them, or without end when
// n < 0, then suffix. It counts what it has produced, and can say when a
// count has been reached.
type generator struct {
	prefix, suffix string
	fill           int64

	mu       sync.Mutex
	produced int64
	target   int64
	reached  chan struct{}
	closed   bool
}

func (g *generator) Read(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) {
		pos := g.produced + int64(n)
		switch {
		case pos < int64(len(g.prefix)):
			n += copy(p[n:], g.prefix[pos:])
		case g.fill < 0 || pos < int64(len(g.prefix))+g.fill:
			end := len(p)
			if g.fill >= 0 {
				end = n + int(min(int64(len(p)-n), int64(len(g.prefix))+g.fill-pos))
			}
			for i := n; i < end; i++ {
				p[i] = 'a'
			}
			n = end
		default:
			off := pos - int64(len(g.prefix)) - g.fill
			if off >= int64(len(g.suffix)) {
				if n == 0 {
					return 0, io.EOF
				}
				g.produced += int64(n)
				return n, nil
			}
			n += copy(p[n:], g.suffix[off:])
		}
	}
	g.produced += int64(n)
	if g.reached != nil && g.produced >= g.target {
		close(g.reached)
		g.reached = nil
	}
	return n, nil
}

func (g *generator) count() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.produced
}

func (g *generator) Write(p []byte) (int, error) { return len(p), nil }

func (g *generator) Close() error {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	return nil
}

func TestStreamEndlessLineStaysBounded(t *testing.T) {
	const limit = 1 << 20
	log, _ := newTestLog(t)
	reached := make(chan struct{})
	g := &generator{prefix: `{"jsonrpc":"2.0","id":1,"result":"`, fill: -1, target: 40 * limit, reached: reached}
	c := newLineConn(g, g, g.Close, Options{MaxFrame: limit, Logger: log})
	<-reached
	if peak := c.peak.Load(); peak > limit || peak < limit/2 {
		t.Errorf("buffered up to %d bytes of a line without end, want about %d", peak, limit)
	}
	readErr := make(chan error)
	go func() {
		_, err := c.Read(context.Background())
		readErr <- err
	}()
	c.Close()
	if err := <-readErr; !errors.Is(err, io.EOF) {
		t.Errorf("Read after Close: %v, want io.EOF", err)
	}
}

func TestStreamLongLineThenMore(t *testing.T) {
	const limit = 1 << 20
	log, _ := newTestLog(t)
	g := &generator{
		prefix: `{"jsonrpc":"2.0","id":1,"result":"`,
		fill:   40 * limit,
		suffix: "\"}\n" + response("2", 100) + "\n" + sentinel + "\n",
	}
	c := newLineConn(g, g, g.Close, Options{MaxFrame: limit, Logger: log})
	defer c.Close()
	got := readUntilSentinel(t, c)
	want := []string{
		fmt.Sprintf("response id=1 error %d response larger than %d bytes refused", CodeResponseTooLarge, limit),
		fmt.Sprintf("response id=2 result %d bytes", resultLen("2", 100)),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("read %q, want %q", got, want)
	}
	if n := g.count(); n < 40*limit {
		t.Errorf("only %d bytes read", n)
	}
	if peak := c.peak.Load(); peak > limit {
		t.Errorf("buffered up to %d bytes, limit %d", peak, limit)
	}
}

func TestStreamEndAndClose(t *testing.T) {
	log, rec := newTestLog(t, "dropped")
	c, server, _ := rawPeer(t, Options{Logger: log})
	wrote := make(chan struct{})
	go func() {
		io.WriteString(server, response("1", 100)+"\n"+`{"jsonrpc":"2.0","id":2,"res`)
		close(wrote)
	}()
	if m, err := c.Read(context.Background()); err != nil || describe(m) != fmt.Sprintf("response id=1 result %d bytes", resultLen("1", 100)) {
		t.Fatalf("Read = %v, %v", m, err)
	}
	// The server goes away in the middle of a message, which is dropped.
	<-wrote
	server.Close()
	if _, err := c.Read(context.Background()); !errors.Is(err, io.EOF) {
		t.Errorf("Read at end of stream: %v, want io.EOF", err)
	}
	if _, err := c.Read(context.Background()); !errors.Is(err, io.EOF) {
		t.Errorf("second Read at end of stream: %v, want io.EOF", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	c.Close()
	if err := c.Write(context.Background(), &jsonrpc.Request{Method: "notifications/initialized"}); err == nil {
		t.Error("Write after Close succeeded")
	}
	if n := len(rec.Matching(slog.LevelWarn, "dropped")); n != 1 {
		t.Errorf("%d warnings for the cut message, want 1", n)
	}
}

func TestStreamCloseUnblocksRead(t *testing.T) {
	log, _ := newTestLog(t)
	c, _, _ := rawPeer(t, Options{Logger: log})
	readErr := make(chan error)
	go func() {
		_, err := c.Read(context.Background())
		readErr <- err
	}()
	c.Close()
	if err := <-readErr; !errors.Is(err, io.EOF) {
		t.Errorf("Read: %v, want io.EOF", err)
	}
}

func TestLimitTableForgets(t *testing.T) {
	log, _ := newTestLog(t)
	c, server, written := rawPeer(t, Options{MaxFrame: 1000, Logger: log})
	ctx, cancel := context.WithCancel(context.Background())
	for id := range int64(3) {
		if err := c.Write(WithResponseLimit(ctx, 100), &jsonrpc.Request{ID: intID(id), Method: "m"}); err != nil {
			t.Fatal(err)
		}
		<-written
	}
	// No per-call limit, or one not below MaxFrame: nothing to remember.
	c.Write(context.Background(), &jsonrpc.Request{ID: intID(10), Method: "m"})
	<-written
	c.Write(WithResponseLimit(ctx, 5000), &jsonrpc.Request{ID: intID(11), Method: "m"})
	<-written
	if n := c.limits.len(); n != 3 {
		t.Fatalf("%d limits held, want 3", n)
	}
	go io.WriteString(server, response("0", 50)+"\n"+sentinel+"\n")
	readUntilSentinel(t, c)
	if n := c.limits.len(); n != 2 {
		t.Errorf("%d limits held after a response, want 2", n)
	}
	// The callers give up: their limits go.
	cancel()
	testkit.Poll(30*time.Second, func() bool { return c.limits.len() == 0 })
	if n := c.limits.len(); n != 0 {
		t.Errorf("%d limits held after the calls' contexts ended", n)
	}
}
