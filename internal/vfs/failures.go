package vfs

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"
)

// A failureLog keeps one origin's last failed read per path, for
// index.json and status.json, and logs each once per change of reason.
type failureLog struct {
	label string
	log   *slog.Logger
	now   func() time.Time
	uriOf func(p string) string

	mu   sync.Mutex
	last map[string]failure // origin-relative path → the last failed read
	// gen counts the changes of last, so that index.json is rendered
	// again only when they change it (meta.go).
	gen atomic.Uint64
}

type failure struct {
	reason string
	detail string
	at     time.Time
}

func newFailureLog(label string, log *slog.Logger, now func() time.Time, uriOf func(string) string) *failureLog {
	return &failureLog{label: label, log: log, now: now, uriOf: uriOf, last: map[string]failure{}}
}

// record notes a failed read of p and returns it as a *ReadError (nil and
// cancellations pass through).
func (l *failureLog) record(p string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	var re *ReadError
	if !errors.As(err, &re) {
		re = &ReadError{Path: p, Reason: reasonOf(err), Err: err}
	}
	l.mu.Lock()
	prev, seen := l.last[p]
	l.last[p] = failure{reason: re.Reason, detail: re.Err.Error(), at: l.now()}
	l.gen.Add(1)
	l.mu.Unlock()
	if !seen || prev.reason != re.Reason {
		l.log.Warn("read failed", "op", "read", "path", joinPath(l.label, p), "uri", l.uriOf(p), "reason", re.Reason, "err", re.Err)
	}
	return re
}

// forget drops what was recorded for paths that now read, or whose entry
// changed.
func (l *failureLog) forget(paths ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range paths {
		if _, ok := l.last[p]; ok {
			delete(l.last, p)
			l.gen.Add(1)
		}
	}
}

// snapshot returns the failures recorded so far.
func (l *failureLog) snapshot() map[string]failure {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.last)
}
