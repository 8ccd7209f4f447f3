package vfs

import (
	"context"
	"errors"
	"testing"
	"time"
)

// blocked reports whether g.enter(n) waits: it gives up after a moment,
// which a gate with room never takes (an entry with room does not wait,
// however loaded the machine), and releases what it got.
func blocked(t *testing.T, g *gate, n int64) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	release, err := g.enter(ctx, n)
	if err == nil {
		release()
		return false
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("enter(%d): %v, want a wait", n, err)
	}
	return true
}

// TestGateBoundsDeclaredBytes: fetches in flight are bounded by the bytes
// they declare, 24 MiB per origin and 40 MiB across the mount — so one
// 15 MiB fetch at a time per origin, two across the mount — while small
// fetches beside a large one pass. (TestConcurrentLargeFirstReadsStayBounded
// shows the memory this keeps a mount under, through the kernel.)
func TestGateBoundsDeclaredBytes(t *testing.T) {
	const big = 15 << 20
	mem := newMemory()
	a, b, c := newGate(mem.fetches), newGate(mem.fetches), newGate(mem.fetches)
	enter := func(g *gate, n int64) func() {
		t.Helper()
		release, err := g.enter(context.Background(), n)
		if err != nil {
			t.Fatalf("enter(%d): %v", n, err)
		}
		return release
	}

	releaseA := enter(a, big)
	if !blocked(t, a, big) {
		t.Errorf("a second 15 MiB fetch of one origin did not wait: %d MiB per origin", originFetchBytes>>20)
	}
	if blocked(t, a, 1<<20) {
		t.Errorf("a 1 MiB fetch waited behind one of 15 MiB: the origin has room for it")
	}
	releaseB := enter(b, big)
	if !blocked(t, c, big) {
		t.Errorf("a third 15 MiB fetch across the mount did not wait: %d MiB across the mount", fetchBytes>>20)
	}
	if blocked(t, c, fetchBytes-2*big) {
		t.Errorf("a fetch that fits what the mount has left waited")
	}

	// The waiting fetch goes once one of those ahead of it ends.
	got := make(chan error, 1)
	go func() {
		release, err := c.enter(context.Background(), big)
		if err == nil {
			release()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("a third 15 MiB fetch went before any ended: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	releaseA()
	if err := <-got; err != nil {
		t.Fatalf("the waiting fetch: %v", err)
	}
	releaseB()

	// A fetch declaring more than an origin may hold waits for all of it,
	// not for more than can ever be free.
	release := enter(a, 100<<20)
	if !blocked(t, a, 1) {
		t.Errorf("a fetch of more than %d MiB left room beside it", originFetchBytes>>20)
	}
	release()

	// Another mount's fetches are not this one's.
	other := newMemory()
	r1, r2 := enter(a, big), enter(b, big)
	if blocked(t, newGate(other.fetches), big) {
		t.Errorf("a fetch of another mount waited for this mount's")
	}
	r1()
	r2()
}
