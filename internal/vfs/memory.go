package vfs

import (
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// memory is one mount's memory policy: how many bytes its fetches in
// flight may bring, how many its Files may hold for readers part-way
// through a file, and when the garbage of large fetches and listings is
// given back to the system. Each mount (each Core) has its own, shared by
// its origins.
type memory struct {
	// fetches bounds the bytes fetches in flight may bring, across the
	// mount (fetchBytes; gate).
	fetches *semaphore.Weighted

	// held is the bytes Files hold for readers, bounded by heldLimit.
	held atomic.Int64

	// releaseSoon's schedule: at most one release every two seconds.
	releaseMu   sync.Mutex
	releaseNext time.Time
	releaseDue  bool

	// releaseWhenQuiet's: the bytes fetched since the last release, and
	// the timer that releases them once fetches stop.
	quietMu      sync.Mutex
	quietTimer   *time.Timer
	quietFetched int64
}

func newMemory() *memory { return &memory{fetches: semaphore.NewWeighted(fetchBytes)} }

const (
	// heldLimit bounds the bytes Files hold for readers part-way through a
	// file, across the mount.
	heldLimit = 16 << 20
	// idleHold is how long a File keeps bytes nobody reads.
	idleHold = 2 * time.Second
)

// hold counts n more bytes held for readers; it reports false, counting
// nothing, when they would pass heldLimit.
func (m *memory) hold(n int) bool {
	if m.held.Add(int64(n)) > heldLimit {
		m.held.Add(-int64(n))
		return false
	}
	return true
}

// unhold counts n held bytes let go.
func (m *memory) unhold(n int) { m.held.Add(-int64(n)) }

// largeFetch is the size from which a fetch is worth returning its
// transient memory to the system: decoding a response of n bytes briefly
// takes several times n, and without this the daemon's RSS would stay at
// the high-water mark of its largest fetch.
const largeFetch = 1 << 20

// quietRelease and quietBytes: once fetches of quietBytes or more in all
// are followed by quietRelease without a fetch, freed memory is returned
// to the system. A burst of small reads (an agent reading a tree) grows
// the heap to its collection goal with garbage that the runtime would
// otherwise keep for minutes; one collection at the end of the burst
// gives it back.
const (
	quietRelease = time.Second
	quietBytes   = 4 << 20
)

// releaseWhenQuiet counts n fetched bytes and, past quietBytes, (re)arms
// the release for quietRelease from now.
func (m *memory) releaseWhenQuiet(n int) {
	m.quietMu.Lock()
	defer m.quietMu.Unlock()
	m.quietFetched += int64(n)
	if m.quietFetched < quietBytes {
		return
	}
	if m.quietTimer == nil {
		m.quietTimer = time.AfterFunc(quietRelease, func() {
			m.quietMu.Lock()
			m.quietFetched = 0
			m.quietMu.Unlock()
			debug.FreeOSMemory()
		})
		return
	}
	m.quietTimer.Reset(quietRelease)
}

// releaseSoon returns freed memory to the system soon, at most once every
// two seconds, off the read path.
func (m *memory) releaseSoon() {
	m.releaseMu.Lock()
	defer m.releaseMu.Unlock()
	if m.releaseDue {
		return
	}
	m.releaseDue = true
	wait := max(time.Until(m.releaseNext), 100*time.Millisecond)
	time.AfterFunc(wait, func() {
		debug.FreeOSMemory()
		m.releaseMu.Lock()
		m.releaseDue = false
		m.releaseNext = time.Now().Add(2 * time.Second)
		m.releaseMu.Unlock()
	})
}
