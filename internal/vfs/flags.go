package vfs

import (
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillfs/skillfs/internal/store"
)

// flagBook holds the content flags found in SKILL.md files, per version
// (entry and digest: fileVersion.key), and keeps them in the store
// (flags.json, through a store.Saver) so that index.json shows them after
// a restart, before the files are read again.
type flagBook struct {
	store *store.Bucket
	saver *store.Saver
	log   *slog.Logger

	mu    sync.Mutex
	flags map[string][]string
	tree  *tree // the tree the next save keeps the flags of
	// gen counts the changes of flags (see failureLog.gen).
	gen atomic.Uint64
}

// saveDelay gathers the flags found in a burst of reads (a grep over
// thousands of skills) into one write.
const saveDelay = 2 * time.Second

func newFlagBook(st *store.Bucket, log *slog.Logger) *flagBook {
	b := &flagBook{store: st, log: log, flags: map[string][]string{}}
	b.saver = st.NewSaver(store.FlagsSidecar, store.SaverOptions{
		Delay: saveDelay, Encode: b.encode, Logger: log, Message: "saving content flags",
	})
	return b
}

// note records the flags of one version; it reports whether that changed
// what is known. Versions without flags are not kept: not knowing and
// knowing there are none show the same.
func (b *flagBook) note(key string, flags []string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	old, had := b.flags[key]
	if len(flags) == 0 {
		delete(b.flags, key)
		if had {
			b.gen.Add(1)
		}
		return had
	}
	b.flags[key] = flags
	changed := !had || !slices.Equal(old, flags)
	if changed {
		b.gen.Add(1)
	}
	return changed
}

// saveSoon saves against t after saveDelay, once for all the notes made
// meanwhile; after stop it does nothing.
func (b *flagBook) saveSoon(t *tree) {
	b.mu.Lock()
	b.tree = t
	b.mu.Unlock()
	b.saver.Soon()
}

// flush writes a save that is due now, as saveSoon's timer does.
func (b *flagBook) flush() { b.saver.Flush() }

// stop is the final flush, when the origin's supervisor has ended: it
// writes a save still waiting for its delay, after one under way, and no
// save is written after it (see store.Saver), so the process can exit, or
// a new session of the same origin take over its store, without a write
// in flight.
func (b *flagBook) stop() { b.saver.Stop() }

func (b *flagBook) get(key string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.flags[key]
}

// encode is flags.json: the flags of the versions the tree of the last
// saveSoon holds (see store.FlagsSidecar). It forgets the others.
func (b *flagBook) encode() ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.tree
	if t == nil {
		return nil, nil
	}
	held := map[string]bool{}
	for _, sn := range t.skills {
		if n := t.nodes[sn.s.URI.Path()]; n != nil && !n.isDir() {
			held[n.file.key] = true
		}
	}
	for k := range b.flags {
		if !held[k] {
			delete(b.flags, k)
		}
	}
	return json.Marshal(b.flags)
}

// load brings back the flags of earlier runs.
func (b *flagBook) load() {
	data, err := b.store.Load(store.FlagsSidecar)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			b.log.Warn("loading content flags", "op", "load", "err", err)
		}
		return
	}
	var m map[string][]string
	if err := json.Unmarshal(data, &m); err != nil {
		b.log.Warn("ignoring unreadable content flags", "op", "load", "err", err)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gen.Add(1)
	for k, v := range m {
		if _, ok := b.flags[k]; !ok {
			b.flags[k] = v
		}
	}
}
