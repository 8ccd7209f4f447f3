package testkit

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
)

// A Record is one log record as a test sees it: attributes (those added
// with Logger.With too) flattened to strings.
type Record struct {
	Level slog.Level
	Msg   string
	Attrs map[string]string
	keys  []string // Attrs' keys in the order they were logged
}

// String is the message followed by its attributes, " key=value" each, in
// the order they were logged.
func (r Record) String() string {
	var b strings.Builder
	b.WriteString(r.Msg)
	for _, k := range r.keys {
		fmt.Fprintf(&b, " %s=%s", k, r.Attrs[k])
	}
	return b.String()
}

// Log is the slog handler of skillfs's tests: it keeps every record, for
// the test to look at (Records, Matching) or take (Take, TakeWarnings).
// NewLog(t) fails the test, when it ends, on any Warn or Error record left
// that no test took or allowed: trouble code only logs would otherwise go
// unnoticed.
type Log struct {
	state *logState
	attrs []slog.Attr
}

type logState struct {
	mu   sync.Mutex
	recs []Record
}

// NewLog returns a Log that fails t, when it ends, on any Warn or Error
// record left whose String contains none of allowed. With t nil it only
// records.
func NewLog(t testing.TB, allowed ...string) *Log {
	l := &Log{state: &logState{}}
	if t != nil {
		t.Helper()
		t.Cleanup(func() { l.check(t, allowed) })
	}
	return l
}

// Logger is a logger that writes to l.
func (l *Log) Logger() *slog.Logger { return slog.New(l) }

// check fails t on every Warn or Error record left not allowed.
func (l *Log) check(t testing.TB, allowed []string) {
	t.Helper()
	for _, r := range l.TakeWarnings() {
		s := r.String()
		if !slices.ContainsFunc(allowed, func(a string) bool { return strings.Contains(s, a) }) {
			t.Errorf("unexpected %s log: %s", r.Level, s)
		}
	}
}

// Records returns the records so far, oldest first.
func (l *Log) Records() []Record {
	l.state.mu.Lock()
	defer l.state.mu.Unlock()
	return slices.Clone(l.state.recs)
}

// Matching returns the records at level whose message contains msg.
func (l *Log) Matching(level slog.Level, msg string) []Record {
	var out []Record
	for _, r := range l.Records() {
		if r.Level == level && strings.Contains(r.Msg, msg) {
			out = append(out, r)
		}
	}
	return out
}

// Take returns the records so far and forgets them.
func (l *Log) Take() []Record {
	l.state.mu.Lock()
	defer l.state.mu.Unlock()
	out := l.state.recs
	l.state.recs = nil
	return out
}

// TakeWarnings returns the Warn and Error records so far and forgets them,
// keeping the others.
func (l *Log) TakeWarnings() []Record {
	l.state.mu.Lock()
	defer l.state.mu.Unlock()
	var warns, rest []Record
	for _, r := range l.state.recs {
		if r.Level >= slog.LevelWarn {
			warns = append(warns, r)
		} else {
			rest = append(rest, r)
		}
	}
	l.state.recs = rest
	return warns
}

// Enabled implements slog.Handler: every level is kept.
func (l *Log) Enabled(context.Context, slog.Level) bool { return true }

// Handle implements slog.Handler.
func (l *Log) Handle(_ context.Context, r slog.Record) error {
	rec := Record{Level: r.Level, Msg: r.Message, Attrs: make(map[string]string, len(l.attrs)+r.NumAttrs())}
	add := func(a slog.Attr) bool {
		if _, ok := rec.Attrs[a.Key]; !ok {
			rec.keys = append(rec.keys, a.Key)
		}
		rec.Attrs[a.Key] = a.Value.String()
		return true
	}
	for _, a := range l.attrs {
		add(a)
	}
	r.Attrs(add)
	l.state.mu.Lock()
	l.state.recs = append(l.state.recs, rec)
	l.state.mu.Unlock()
	return nil
}

// WithAttrs implements slog.Handler; the records share l's.
func (l *Log) WithAttrs(as []slog.Attr) slog.Handler {
	return &Log{state: l.state, attrs: append(slices.Clone(l.attrs), as...)}
}

// WithGroup implements slog.Handler; groups are not kept apart.
func (l *Log) WithGroup(string) slog.Handler { return l }
