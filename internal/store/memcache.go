package store

import (
	"container/list"
	"sync"
)

// entryOverhead is what one cached file costs beyond its bytes (list
// element, map slot, key). Charging it keeps a flood of tiny files from
// holding unbounded memory under a byte limit.
const entryOverhead = 128

// memKey identifies a cached file. gen is the serial of the Bucket that
// stored it rather than its id, so a removed and re-created origin of the
// same id can never be served bytes cached for its predecessor.
type memKey struct {
	gen uint64
	hex string
}

type memEntry struct {
	key  memKey
	data []byte
}

// memCache is a byte-bounded LRU of verified file contents shared by every
// origin of a Store. It holds bytes that were hashed on their way in, which
// is why hits are served without hashing again: the agent can write to the
// disk store but not into this process.
type memCache struct {
	mu        sync.Mutex
	limit     int64
	used      int64
	lru       *list.List // front = most recently used; values are *memEntry
	items     map[memKey]*list.Element
	evictions uint64
}

func newMemCache(limit int64) *memCache {
	return &memCache{limit: limit, lru: list.New(), items: make(map[memKey]*list.Element)}
}

func cost(b []byte) int64 { return int64(len(b)) + entryOverhead }

func (c *memCache) get(k memKey) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[k]
	if !ok {
		return nil, false
	}
	c.lru.MoveToFront(e)
	return e.Value.(*memEntry).data, true
}

// add caches b unless it alone exceeds the limit; older entries are evicted
// to make room.
func (c *memCache) add(k memKey, b []byte) {
	if cost(b) > c.limit {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[k]; ok {
		// Same key means same digest, hence same bytes: keep the old slice,
		// which readers may still be slicing.
		c.lru.MoveToFront(e)
		return
	}
	c.items[k] = c.lru.PushFront(&memEntry{key: k, data: b})
	c.used += cost(b)
	for c.used > c.limit {
		c.removeElement(c.lru.Back())
		c.evictions++
	}
}

func (c *memCache) has(k memKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.items[k]
	return ok
}

// purge drops every entry of one origin generation.
func (c *memCache) purge(gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.items {
		if k.gen == gen {
			c.removeElement(e)
		}
	}
}

func (c *memCache) removeElement(e *list.Element) {
	me := c.lru.Remove(e).(*memEntry)
	delete(c.items, me.key)
	c.used -= cost(me.data)
}

func (c *memCache) stats() (used int64, entries int, evictions uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used, len(c.items), c.evictions
}
