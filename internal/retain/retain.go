// Package retain decides what the cache keeps (skillfs.cache in the config;
// the mechanics are package store's, gc.go): a mount drops the server
// identities no mount has used for keep_days and evicts unheld files over
// max_size at start, and evicts again whenever its fetches take the store
// over max_size; skillfs cache gc does both now (Collect).
//
// A file is held, and never evicted, while the catalog of an origin a
// running mount uses names it (store.InUse: the tree it serves, saved on
// every swap) or an approval record does; a mount also holds what its own
// trees name now (AtStart).
package retain

import (
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"time"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/control"
	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/internal/store"
	"github.com/skillfs/skillfs/internal/vfs"
)

// Origins are the store's origin directories, the control sockets'
// directory left out.
func Origins(st *store.Store) ([]string, error) {
	ids, err := st.Origins()
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(ids, func(id string) bool { return id == control.RunDirName }), nil
}

// Held says which of the store's files must be kept: those named by the
// catalog of an origin a running mount uses and those named by any
// approval record. An origin whose catalog or approvals cannot be read has
// all its files held.
func Held(st *store.Store) (func(store.Object) bool, error) {
	ids, err := Origins(st)
	if err != nil {
		return nil, err
	}
	held := map[string]map[skill.Digest]bool{}
	all := map[string]bool{}
	for _, id := range ids {
		ds, err := heldBy(st, id)
		if err != nil {
			all[id] = true
			continue
		}
		held[id] = setOf(ds)
	}
	return func(o store.Object) bool { return all[o.Origin] || held[o.Origin][o.Digest] }, nil
}

// heldBy is what origin id's approvals hold, and its saved catalog when a
// running mount uses it.
func heldBy(st *store.Store, id string) ([]skill.Digest, error) {
	b, done, err := st.Peek(id)
	if err != nil {
		return nil, err
	}
	defer done()
	ds, err := vfs.ApprovedDigests(b)
	if err != nil {
		return nil, err
	}
	if st.InUse(id) {
		cds, err := vfs.SavedCatalogDigests(b)
		if err != nil {
			return nil, err
		}
		ds = append(ds, cds...)
	}
	return ds, nil
}

func setOf(ds []skill.Digest) map[skill.Digest]bool {
	set := make(map[skill.Digest]bool, len(ds))
	for _, d := range ds {
		set[d] = true
	}
	return set
}

// An Unused origin is one keep_days removes.
type Unused struct {
	ID    string
	Used  time.Time // when a mount last used it
	Bytes int64     // what its directory holds
}

// UnusedOrigins lists the origins no process uses and none has for keep
// (none when keep is 0: keep_days off).
func UnusedOrigins(st *store.Store, keep time.Duration, now time.Time) ([]Unused, error) {
	if keep <= 0 {
		return nil, nil
	}
	ids, err := Origins(st)
	if err != nil {
		return nil, err
	}
	var out []Unused
	for _, id := range ids {
		used, err := st.LastUsed(id)
		if err != nil || now.Sub(used) < keep || st.InUse(id) {
			continue
		}
		out = append(out, Unused{ID: id, Used: used, Bytes: DirSize(filepath.Join(st.Root(), id))})
	}
	return out, nil
}

// DirSize is the bytes of the regular files under dir, what could be read
// of them.
func DirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// StoreOptions are the options a mount opens its store with: leases on
// the origins it opens, and the size bound (what holds a file is set by
// AtStart).
func StoreOptions(c config.Cache, log *slog.Logger, memLimit int64) store.Options {
	return store.Options{Logger: log, MemoryLimit: memLimit, Lease: true, MaxSize: c.Bound()}
}

// AtStart is what a mount does once its origins are open (their
// directories leased): drop the unused identities now, and from now on
// evict in the background (at once, and whenever fetches take the store
// over max_size), holding what Held holds and what v's trees name.
func AtStart(st *store.Store, c config.Cache, v *vfs.Core, log *slog.Logger) {
	st.SetHeld(func() (func(store.Object) bool, error) {
		own := v.HeldDigests()
		others, err := Held(st)
		if err != nil {
			return nil, err
		}
		mine := make(map[string]map[skill.Digest]bool, len(own))
		for id, ds := range own {
			mine[id] = setOf(ds)
		}
		return func(o store.Object) bool { return mine[o.Origin][o.Digest] || others(o) }, nil
	})
	now := time.Now()
	drops, err := UnusedOrigins(st, c.Keep(), now)
	if err != nil {
		log.Warn("cache: listing unused servers", "op", "gc", "path", st.Root(), "err", err)
	}
	for _, d := range drops {
		ok, err := st.DropUnused(d.ID, now.Add(-c.Keep()))
		switch {
		case err != nil:
			log.Warn("cache: removing an unused server's cache", "origin", d.ID, "op", "gc", "err", err)
		case ok:
			log.Info("cache: removed the catalog, approvals and files of a server no mount has used for cache.keep_days",
				"origin", d.ID, "op", "gc", "last_used", d.Used.UTC().Format(time.RFC3339), "bytes", d.Bytes)
		}
	}
	st.EvictSoon()
}
