package control

import (
	"log/slog"
	"sync"
	"time"
)

// RefusalSummaryEvery is how often, while connections from other users go
// on being refused, one line counts them. The first refusal after a quiet
// period is logged as it happens; a flood of them costs the log one line
// a period, and a last one when the daemon stops.
const RefusalSummaryEvery = time.Minute

// refusals logs refused connections without flooding the log.
type refusals struct {
	log   *slog.Logger
	every time.Duration

	mu      sync.Mutex
	count   int64 // refused since the last line
	lastUID int
	timer   *time.Timer // a period is running
	closed  bool
}

func (r *refusals) refused(uid int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if r.timer == nil {
		args := []any{"uid", uid, "every", r.every}
		if err != nil {
			args = append(args, "err", err)
		}
		r.log.Warn("control: refused a connection from another user; more are counted and logged once a period", args...)
		r.timer = time.AfterFunc(r.every, r.tick)
		return
	}
	r.count++
	r.lastUID = uid
}

// tick ends a period: the count, if any, and another period; else quiet.
func (r *refusals) tick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if r.count == 0 {
		r.timer = nil
		return
	}
	r.summary()
	r.timer = time.AfterFunc(r.every, r.tick)
}

func (r *refusals) summary() {
	r.log.Warn("control: refused more connections from other users", "count", r.count, "last_uid", r.lastUID, "period", r.every)
	r.count = 0
}

// close logs what the running period counted.
func (r *refusals) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.closed = true
	if r.timer != nil {
		r.timer.Stop()
	}
	if r.count > 0 {
		r.summary()
	}
}
