package transport

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/skillfs/skillfs/internal/testkit"
)

// childEnv selects a child-process mode when the test binary is re-executed
// by the Command tests.
const childEnv = "SKILLFS_TRANSPORT_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		runChild(mode)
		os.Exit(0)
	}
	testkit.Main(m)
}

// testLog records every log record and fails the test, at cleanup, on any
// Warn or Error whose message contains none of the expected substrings.
type testLog struct {
	mu   sync.Mutex
	recs []logRec
}

type logRec struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

func (r logRec) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q", r.level, r.msg)
	for k, v := range r.attrs {
		fmt.Fprintf(&b, " %s=%q", k, v)
	}
	return b.String()
}

func newTestLog(t *testing.T, expectWarn ...string) (*slog.Logger, *testLog) {
	t.Helper()
	l := &testLog{}
	t.Cleanup(func() {
		for _, r := range l.records() {
			if r.level < slog.LevelWarn {
				continue
			}
			ok := false
			for _, w := range expectWarn {
				ok = ok || strings.Contains(r.msg, w)
			}
			if !ok {
				t.Errorf("unexpected log record: %v", r)
			}
		}
	})
	return slog.New(&testHandler{log: l}), l
}

func (l *testLog) records() []logRec {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]logRec(nil), l.recs...)
}

// matching returns the records at level whose message contains msg.
func (l *testLog) matching(level slog.Level, msg string) []logRec {
	var out []logRec
	for _, r := range l.records() {
		if r.level == level && strings.Contains(r.msg, msg) {
			out = append(out, r)
		}
	}
	return out
}

type testHandler struct {
	log   *testLog
	attrs []slog.Attr
}

func (h *testHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *testHandler) Handle(_ context.Context, r slog.Record) error {
	rec := logRec{level: r.Level, msg: r.Message, attrs: map[string]string{}}
	for _, a := range h.attrs {
		rec.attrs[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.String()
		return true
	})
	h.log.mu.Lock()
	h.log.recs = append(h.log.recs, rec)
	h.log.mu.Unlock()
	return nil
}

func (h *testHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &testHandler{log: h.log, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h *testHandler) WithGroup(string) slog.Handler { return h }

// describe summarises a message for comparisons.
func describe(m jsonrpc.Message) string {
	switch m := m.(type) {
	case *jsonrpc.Request:
		return fmt.Sprintf("request id=%v method=%s", m.ID.Raw(), m.Method)
	case *jsonrpc.Response:
		if m.Error != nil {
			if werr, ok := m.Error.(*jsonrpc.Error); ok {
				return fmt.Sprintf("response id=%v error %d %s", m.ID.Raw(), werr.Code, werr.Message)
			}
			return fmt.Sprintf("response id=%v error %v", m.ID.Raw(), m.Error)
		}
		return fmt.Sprintf("response id=%v result %d bytes", m.ID.Raw(), len(m.Result))
	}
	return fmt.Sprintf("%T", m)
}
