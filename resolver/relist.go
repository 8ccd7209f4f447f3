package resolver

import (
	"context"
	"time"
)

// Re-lists asked for (notifications/resources/list_changed, Refresh) are
// coalesced over relistCoalesce, and start at least DefaultRelistGap
// (Options.RelistGap) after the previous enumeration started: a server
// that sends list_changed without pause gets one skills/list enumeration
// per gap, not one per notification.
const (
	relistCoalesce   = 200 * time.Millisecond
	DefaultRelistGap = 2 * time.Second
)

// A relister carries the asks for a re-list to the supervisor. At most
// one ask is pending: asks made before the supervisor looks are one.
type relister struct {
	asked chan struct{}
	gap   time.Duration // Options.RelistGap, or DefaultRelistGap
}

func newRelister(gap time.Duration) relister {
	return relister{asked: make(chan struct{}, 1), gap: gap}
}

// ask asks for a re-list soon. It never blocks.
func (r *relister) ask() {
	select {
	case r.asked <- struct{}{}:
	default:
	}
}

// wait returns when it is time to enumerate again (nil), or when the
// session or ctx ended. listed is when the last enumeration started.
func (r *relister) wait(ctx context.Context, ended <-chan error, wait time.Duration, listed time.Time) error {
	var timer <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-ended:
		return sessionEnded(err)
	case <-r.asked:
		// Coalesce a burst of notifications into one re-list.
		pause := max(relistCoalesce, r.gap-time.Since(listed))
		t := time.NewTimer(pause)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil
		case err := <-ended:
			return sessionEnded(err)
		}
		select {
		case <-r.asked:
		default:
		}
	case <-timer:
	}
	return nil
}
