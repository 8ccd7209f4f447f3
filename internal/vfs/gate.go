package vfs

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// Fetches are bounded twice, so that one server that stalls or serves large
// files cannot hold up another's reads or push the daemon's memory past
// its documented bound:
//
//   - across the mount, the bytes that fetches in flight may bring are
//     bounded by fetchBytes (a fetch of n bytes briefly takes several times
//     n while it is decoded), and one origin may hold at most
//     originFetchBytes of them, so that a stalled origin's large fetches
//     leave room for everyone else's;
//   - per origin, at most maxFetches fetches talk to the server at once.
//
// A fetch waits for bytes as long as it takes (the fetches ahead of it end
// within their call timeout). It waits for one of the origin's slots as
// long as the fetches holding them make progress; when none of them has
// finished for busyWait, the server is taken to be stalled and the read
// fails with EIO (reason "busy") rather than queue behind it.
const (
	maxFetches       = 16
	busyWait         = 5 * time.Second
	fetchBytes       = 40 << 20
	originFetchBytes = 24 << 20
)

var errBusy = errors.New("reads from this server are stalled: none of those in flight finished")

// A gate bounds one origin's fetches.
type gate struct {
	slots    chan struct{}
	bytes    *semaphore.Weighted
	mount    *semaphore.Weighted // fetchBytes, shared by the mount's origins
	progress atomic.Uint64       // fetches finished
	patience time.Duration
}

// newGate returns an origin's gate; mount is the mount's bound on fetch
// bytes (memory.fetches), which every origin's gate shares.
func newGate(mount *semaphore.Weighted) *gate {
	return &gate{slots: make(chan struct{}, maxFetches), bytes: semaphore.NewWeighted(originFetchBytes), mount: mount, patience: busyWait}
}

// enter waits for room for a fetch of up to n bytes; release gives it back.
func (g *gate) enter(ctx context.Context, n int64) (release func(), err error) {
	w := min(max(n, 1), originFetchBytes)
	if err := g.bytes.Acquire(ctx, w); err != nil {
		return nil, err
	}
	if err := g.mount.Acquire(ctx, w); err != nil {
		g.bytes.Release(w)
		return nil, err
	}
	slot := func(c context.Context) error {
		select {
		case g.slots <- struct{}{}:
			return nil
		case <-c.Done():
			return c.Err()
		}
	}
	// A free slot is taken at once; only a wait needs await's timer.
	select {
	case g.slots <- struct{}{}:
	default:
		err = g.await(ctx, &g.progress, slot)
	}
	if err != nil {
		g.mount.Release(w)
		g.bytes.Release(w)
		return nil, err
	}
	return func() {
		<-g.slots
		g.mount.Release(w)
		g.bytes.Release(w)
		g.progress.Add(1)
	}, nil
}

// await calls acquire until it succeeds, giving up with errBusy when a
// whole patience interval passes without progress.
func (g *gate) await(ctx context.Context, progress *atomic.Uint64, acquire func(context.Context) error) error {
	for {
		seen := progress.Load()
		c, cancel := context.WithTimeout(ctx, g.patience)
		err := acquire(c)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if progress.Load() == seen {
			return fmt.Errorf("%w in %v (%d at most at once)", errBusy, g.patience, cap(g.slots))
		}
	}
}
