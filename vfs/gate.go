package vfs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/semaphore"
)

// Fetches are bounded twice, so that one server that stalls or serves large
// files cannot hold up another's reads or push the daemon's memory past
// its documented bound:
//
//   - per origin, at most maxFetches fetches run at once; a read that finds
//     them all busy waits up to busyWait for one to finish and then fails
//     with EIO (reason "busy") rather than queue behind a stalled server;
//   - across the mount, the bytes that fetches in flight may bring are
//     bounded by fetchBytes (a fetch of n bytes briefly takes several times
//     n while it is decoded), and one origin may hold at most
//     originFetchBytes of them, so that a stalled origin's large fetches
//     leave room for everyone else's.
const (
	maxFetches       = 16
	busyWait         = 5 * time.Second
	fetchBytes       = 48 << 20
	originFetchBytes = 32 << 20
)

var (
	errBusy = errors.New("too many reads from this server are in flight")
	// mountFetchBytes is shared by every origin of the process.
	mountFetchBytes = semaphore.NewWeighted(fetchBytes)
)

// A gate bounds one origin's fetches.
type gate struct {
	slots chan struct{}
	bytes *semaphore.Weighted
	wait  time.Duration
}

func newGate() *gate {
	return &gate{slots: make(chan struct{}, maxFetches), bytes: semaphore.NewWeighted(originFetchBytes), wait: busyWait}
}

// enter waits for room for a fetch of up to n bytes; release gives it back.
func (g *gate) enter(ctx context.Context, n int64) (release func(), err error) {
	select {
	case g.slots <- struct{}{}:
	default:
		t := time.NewTimer(g.wait)
		defer t.Stop()
		select {
		case g.slots <- struct{}{}:
		case <-t.C:
			return nil, fmt.Errorf("%w (%d at once)", errBusy, cap(g.slots))
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	w := min(max(n, 1), originFetchBytes)
	if err := g.bytes.Acquire(ctx, w); err != nil {
		<-g.slots
		return nil, err
	}
	if err := mountFetchBytes.Acquire(ctx, w); err != nil {
		g.bytes.Release(w)
		<-g.slots
		return nil, err
	}
	return func() {
		mountFetchBytes.Release(w)
		g.bytes.Release(w)
		<-g.slots
	}, nil
}
