package vfs

import (
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sync"

	"github.com/skillfs/skillfs/store"
)

// flagBook holds the content flags found in SKILL.md files, per version
// (entry and digest: fileVersion.key), and keeps them in the store so that
// index.json shows them after a restart, before the files are read again.
type flagBook struct {
	store *store.Bucket
	log   *slog.Logger

	mu    sync.Mutex
	flags map[string][]string
}

func newFlagBook(st *store.Bucket, log *slog.Logger) *flagBook {
	return &flagBook{store: st, log: log, flags: map[string][]string{}}
}

// note records the flags of one version; it reports whether they are new.
func (b *flagBook) note(key string, flags []string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	old, had := b.flags[key]
	b.flags[key] = flags
	return !had || !slices.Equal(old, flags)
}

func (b *flagBook) get(key string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.flags[key]
}

// save keeps the flags of the versions t holds (see store.SaveFlags) and
// forgets the others.
func (b *flagBook) save(t *tree) {
	held := map[string]bool{}
	for _, sn := range t.skills {
		if n := t.nodes[sn.s.URI.Path()]; n != nil && !n.isDir() {
			held[n.file.version.key()] = true
		}
	}
	b.mu.Lock()
	for k := range b.flags {
		if !held[k] {
			delete(b.flags, k)
		}
	}
	data, err := json.Marshal(b.flags)
	b.mu.Unlock()
	if err != nil {
		return
	}
	if err := b.store.SaveFlags(data); err != nil {
		b.log.Warn("saving content flags", "op", "save", "err", err)
	}
}

// load brings back the flags of earlier runs.
func (b *flagBook) load() {
	data, err := b.store.LoadFlags()
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
	for k, v := range m {
		if _, ok := b.flags[k]; !ok {
			b.flags[k] = v
		}
	}
}
