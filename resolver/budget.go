package resolver

import (
	"fmt"
	"sync"
	"time"
)

// budgetSlices is how finely a budget window is divided: charges made
// within window/budgetSlices of each other share one slice, so a budget
// holds at most about budgetSlices+1 slices, however many reads it counts.
const budgetSlices = 64

// A budget bounds the bytes fetched from one origin to limit in any
// sliding window (config.Limits.Budget, BudgetWindow). A slice of charges
// is forgotten window after its last charge — never sooner — so a server
// gets at most limit bytes per window out of skillfs, for as long as the
// mount lives, and honest use never runs out for good.
//
// A budget is safe for concurrent use.
type budget struct {
	limit  int64
	window time.Duration

	mu     sync.Mutex
	slices []budgetSlice // oldest first
	nextID uint64
}

type budgetSlice struct {
	id          uint64
	first, last time.Time
	bytes       int64
}

func newBudget(limit int64, window time.Duration) *budget {
	return &budget{limit: limit, window: window}
}

// expire drops the slices whose window has passed; b.mu is held.
func (b *budget) expire(now time.Time) {
	i := 0
	for i < len(b.slices) && !now.Before(b.slices[i].last.Add(b.window)) {
		i++
	}
	if i > 0 {
		b.slices = append(b.slices[:0], b.slices[i:]...)
	}
}

// used is the bytes charged in the window ending at now.
func (b *budget) used(now time.Time) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.usedLocked(now)
}

func (b *budget) usedLocked(now time.Time) int64 {
	b.expire(now)
	var n int64
	for _, s := range b.slices {
		n += s.bytes
	}
	return n
}

// take charges n bytes at now, or fails with ErrOverBudget when that would
// pass the limit (or the limit is already reached, for n == 0). It returns
// the charge's slice, for settle.
func (b *budget) take(now time.Time, n int64) (uint64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	used := b.usedLocked(now)
	if b.limit > 0 && (used >= b.limit || used+n > b.limit) {
		return 0, fmt.Errorf("%w: %d of %d bytes used in the last %v, %d more asked", ErrOverBudget, used, b.limit, b.window, n)
	}
	return b.charge(now, n), nil
}

// charge adds n bytes at now, to the newest slice while it is young
// enough; b.mu is held.
func (b *budget) charge(now time.Time, n int64) uint64 {
	if k := len(b.slices); k > 0 && now.Sub(b.slices[k-1].first) < b.window/budgetSlices {
		s := &b.slices[k-1]
		s.bytes += n
		if now.After(s.last) {
			s.last = now
		}
		return s.id
	}
	b.nextID++
	b.slices = append(b.slices, budgetSlice{id: b.nextID, first: now, last: now, bytes: n})
	return b.nextID
}

// settle replaces a reservation of reserved bytes, taken in slice id, with
// the got bytes that arrived at now. Bytes beyond the reservation are
// charged at now (they arrived now); an unused reservation is given back
// to its slice, if the slice is still in the window.
func (b *budget) settle(now time.Time, id uint64, reserved, got int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch d := got - reserved; {
	case d > 0:
		b.charge(now, d)
	case d < 0:
		for i := range b.slices {
			if b.slices[i].id == id {
				b.slices[i].bytes = max(b.slices[i].bytes+d, 0)
			}
		}
	}
}
