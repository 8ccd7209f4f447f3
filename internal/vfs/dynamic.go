package vfs

import (
	"errors"
	"fmt"
	"sync"

	"github.com/skillfs/skillfs/verify"
)

// dynamics keeps what the files of "dynamic" skills need across Files:
// each path's fetch generation (a lookup after a fetch gets a new inode)
// and the bytes the open copies of each skill hold, bounded by the
// per-skill total.
type dynamics struct {
	mu   sync.Mutex
	gen  map[string]uint64 // path → fetches so far
	held map[string]int64  // skill uri → bytes its live Files hold
}

func newDynamics() *dynamics {
	return &dynamics{gen: map[string]uint64{}, held: map[string]int64{}}
}

// errDynamicTotal: the files of one dynamic skill held at once passed the
// per-skill total.
var errDynamicTotal = errors.New("over the per-skill total")

// generation is the generation new Files of a dynamic file start at.
func (d *dynamics) generation(p string) uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.gen[p]
}

// fetched moves p past generation gen: the next lookup gets a new inode.
func (d *dynamics) fetched(p string, gen uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.gen[p] == gen {
		d.gen[p] = gen + 1
	}
}

// hold charges size bytes to n's skill, or fails past the per-skill total.
func (d *dynamics) hold(n *node, size int64) error {
	uri := n.file.owners[0].uri()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.held[uri]+size > verify.DefaultMaxTotalSize {
		return fmt.Errorf("%w: %d bytes more would pass the %d held for the dynamic skill %s", errDynamicTotal, size, verify.DefaultMaxTotalSize, uri)
	}
	d.held[uri] += size
	return nil
}

// release gives back what a File of a dynamic skill held.
func (d *dynamics) release(n *node, size int64) {
	uri := n.file.owners[0].uri()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.held[uri] -= size; d.held[uri] <= 0 {
		delete(d.held, uri)
	}
}
