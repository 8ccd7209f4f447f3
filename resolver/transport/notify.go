package transport

import (
	"bytes"
	"log/slog"
	"sync"
	"time"
)

// Messages from the server that carry a method — notifications, and
// requests the server makes of skillfs — are let through at most
// notifyRate per second on average, in bursts of up to notifyBurst; the
// rest are dropped as soon as they are read, before anything decodes
// them. skillfs needs little from a server unasked (list_changed, now and
// then), so an honest server never comes near this, while a flood costs
// the daemon only the scan of each line.
const (
	notifyRate  = 50
	notifyBurst = 200
	// stormPause is how long the reader waits after dropping a message:
	// it slows the reading of a flooding connection to at most 1000
	// messages a second, so that the flood backs up into the server's
	// own pipe or socket instead of costing the daemon a core. Responses
	// queued behind the flood wait as long; other origins do not.
	stormPause = time.Millisecond
)

// notifyLimiter is a token bucket over the method-bearing messages of one
// connection (one HTTP client: all its streams). It logs one warning when
// it starts dropping, and one line when a storm is over (the bucket has
// filled up again), with the count.
type notifyLimiter struct {
	log *slog.Logger
	// onListChanged is called for a dropped message that may have been a
	// notifications/resources/list_changed, so that the caller still
	// re-lists (at its own pace).
	onListChanged func()
	now           func() time.Time
	pause         func(time.Duration) // time.Sleep; nil in unit tests

	mu       sync.Mutex
	tokens   float64
	last     time.Time
	dropped  int64
	storming bool
}

func newNotifyLimiter(opts Options) *notifyLimiter {
	return &notifyLimiter{log: opts.logger(), onListChanged: opts.OnListChanged, now: time.Now, pause: time.Sleep, tokens: notifyBurst}
}

// allow reports whether a method-bearing message may pass; head is the
// start of the message, for guessing its method when it is dropped.
func (l *notifyLimiter) allow(head []byte) bool {
	l.mu.Lock()
	now := l.now()
	if !l.last.IsZero() {
		l.tokens = min(notifyBurst, l.tokens+now.Sub(l.last).Seconds()*notifyRate)
	}
	l.last = now
	if l.tokens >= 1 {
		l.tokens--
		if l.storming && l.tokens >= notifyBurst-1 {
			l.log.Info("notification storm over", "op", "notify", "dropped", l.dropped)
			l.storming, l.dropped = false, 0
		}
		l.mu.Unlock()
		return true
	}
	l.dropped++
	first := !l.storming
	l.storming = true
	pause := l.pause
	l.mu.Unlock()
	if first {
		l.log.Warn("notifications from the server dropped: more than the rate allowed", "op", "notify",
			"rate_per_s", notifyRate, "burst", notifyBurst)
	}
	// The method is near the start of a message of ours; when the start
	// does not show it, assume the worst.
	if l.onListChanged != nil && (bytes.Contains(head, []byte("list_changed")) || !bytes.Contains(head, []byte(`"method"`))) {
		l.onListChanged()
	}
	if pause != nil {
		pause(stormPause)
	}
	return false
}
