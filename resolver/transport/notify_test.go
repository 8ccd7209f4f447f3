package transport

import (
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// frozen stops a limiter's clock at t and its pauses, for tests.
func (l *notifyLimiter) frozen(t *time.Time) {
	l.mu.Lock()
	l.now = func() time.Time { return *t }
	l.pause = nil
	l.mu.Unlock()
}

func TestNotifyLimiterEdge(t *testing.T) {
	log, rec := newTestLog(t, "notifications from the server dropped")
	var relists atomic.Int32
	l := newNotifyLimiter(Options{Logger: log, OnListChanged: func() { relists.Add(1) }})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l.frozen(&now)
	listChanged := []byte(`{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`)
	progress := []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`)
	for i := range notifyBurst {
		if !l.allow(progress) {
			t.Fatalf("message %d of the burst dropped", i+1)
		}
	}
	for range 1000 {
		if l.allow(progress) {
			t.Fatal("a message past the burst passed with the clock stopped")
		}
	}
	if n := relists.Load(); n != 0 {
		t.Errorf("%d re-lists for dropped progress notifications", n)
	}
	if l.allow(listChanged) || l.allow([]byte(`{"params":{"x":"`+strings.Repeat("x", 200))) {
		t.Error("a message past the burst passed")
	}
	if n := relists.Load(); n != 2 {
		t.Errorf("%d re-lists asked for a dropped list_changed and an unknown message, want 2", n)
	}
	// One second later, notifyRate more pass, and no more.
	now = now.Add(time.Second)
	for i := range notifyRate {
		if !l.allow(progress) {
			t.Fatalf("message %d a second later dropped", i+1)
		}
	}
	if l.allow(progress) {
		t.Error("one message more than the rate passed")
	}
	if n := len(rec.Matching(slog.LevelWarn, "dropped")); n != 1 {
		t.Errorf("%d warnings for one storm, want 1", n)
	}
	// Quiet long enough to fill the bucket: the storm is over, and the
	// next storm is worth a warning of its own.
	now = now.Add(time.Minute)
	if !l.allow(progress) {
		t.Fatal("a message after a quiet minute dropped")
	}
	if n := len(rec.Matching(slog.LevelInfo, "notification storm over")); n != 1 {
		t.Errorf("%d storm-over lines, want 1", n)
	}
	for range notifyBurst + 10 {
		l.allow(progress)
	}
	if n := len(rec.Matching(slog.LevelWarn, "dropped")); n != 2 {
		t.Errorf("%d warnings after a second storm, want 2", n)
	}
}

// TestStreamNotificationFlood: a flood of notifications on a stdio
// connection is dropped past the burst before decoding, and the responses
// among it still arrive.
func TestStreamNotificationFlood(t *testing.T) {
	log, _ := newTestLog(t, "notifications from the server dropped")
	c, server, _ := rawPeer(t, Options{MaxFrame: 1000, Logger: log})
	now := time.Now()
	c.notes.frozen(&now)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 5000 {
			line := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`
			if i == 2500 {
				line = `{"jsonrpc":"2.0","id":7,"result":{}}`
			}
			if _, err := io.WriteString(server, line+"\n"); err != nil {
				return
			}
		}
		io.WriteString(server, sentinel+"\n")
	}()
	got := readUntilSentinel(t, c)
	wg.Wait()
	requests, response := 0, false
	for _, g := range got {
		switch {
		case strings.HasPrefix(g, "request "):
			requests++
		case strings.HasPrefix(g, "response id=7"):
			response = true
		}
	}
	if requests != notifyBurst || !response {
		t.Errorf("%d notifications delivered (want %d), response among them %v", requests, notifyBurst, response)
	}
}
