package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/control"
	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/internal/store"
	"github.com/skillfs/skillfs/internal/vfs"
)

// The cache cleans itself (skillfs.cache in the config; see package store,
// gc.go): a mount drops the server identities no mount has used for
// keep_days and evicts unheld files over max_size at start, and evicts
// again whenever its fetches take the store over max_size; skillfs cache gc
// does both now.

// originIDs are the store's origin directories, the control sockets'
// directory left out.
func originIDs(st *store.Store) ([]string, error) {
	ids, err := st.Origins()
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(ids, func(id string) bool { return id == control.RunDirName }), nil
}

// heldObjects says which of the store's files must be kept: those named by
// the catalog of an origin a running mount uses (store.InUse: the tree it
// serves, saved on every swap) and those named by any approval record. An
// origin whose catalog or approvals cannot be read has all its files held.
func heldObjects(st *store.Store) (func(store.Object) bool, error) {
	ids, err := originIDs(st)
	if err != nil {
		return nil, err
	}
	held := map[string]map[skill.Digest]bool{}
	all := map[string]bool{}
	for _, id := range ids {
		b, done, err := st.Peek(id)
		if err != nil {
			all[id] = true
			continue
		}
		ds, aerr := vfs.ApprovedDigests(b)
		var cerr error
		if st.InUse(id) {
			var cds []skill.Digest
			cds, cerr = vfs.SavedCatalogDigests(b)
			ds = append(ds, cds...)
		}
		done()
		if aerr != nil || cerr != nil {
			all[id] = true
			continue
		}
		set := make(map[skill.Digest]bool, len(ds))
		for _, d := range ds {
			set[d] = true
		}
		held[id] = set
	}
	return func(o store.Object) bool { return all[o.Origin] || held[o.Origin][o.Digest] }, nil
}

// A dropped origin is one keep_days removes.
type dropped struct {
	id    string
	used  time.Time
	bytes int64
}

// unusedOrigins lists the origins no process uses and none has for keep.
func unusedOrigins(st *store.Store, keep time.Duration, now time.Time) ([]dropped, error) {
	if keep <= 0 {
		return nil, nil
	}
	ids, err := originIDs(st)
	if err != nil {
		return nil, err
	}
	var out []dropped
	for _, id := range ids {
		used, err := st.LastUsed(id)
		if err != nil || now.Sub(used) < keep || st.InUse(id) {
			continue
		}
		out = append(out, dropped{id: id, used: used, bytes: dirSize(filepath.Join(st.Root(), id))})
	}
	return out, nil
}

// cleanCacheAtStart is what a mount does once its origins are open (their
// directories leased): drop the unused identities now, and from now on
// evict in the background (at once, and whenever fetches take the store
// over max_size), holding what heldObjects holds and what v's trees name.
func cleanCacheAtStart(st *store.Store, c config.Cache, v *vfs.Core, log *slog.Logger) {
	st.SetHeld(func() (func(store.Object) bool, error) {
		own := v.HeldDigests()
		others, err := heldObjects(st)
		if err != nil {
			return nil, err
		}
		mine := make(map[string]map[skill.Digest]bool, len(own))
		for id, ds := range own {
			set := make(map[skill.Digest]bool, len(ds))
			for _, d := range ds {
				set[d] = true
			}
			mine[id] = set
		}
		return func(o store.Object) bool { return mine[o.Origin][o.Digest] || others(o) }, nil
	})
	now := time.Now()
	drops, err := unusedOrigins(st, c.Keep(), now)
	if err != nil {
		log.Warn("cache: listing unused servers", "op", "gc", "path", st.Root(), "err", err)
	}
	for _, d := range drops {
		ok, err := st.DropUnused(d.id, now.Add(-c.Keep()))
		switch {
		case err != nil:
			log.Warn("cache: removing an unused server's cache", "origin", d.id, "op", "gc", "err", err)
		case ok:
			log.Info("cache: removed the catalog, approvals and files of a server no mount has used for cache.keep_days",
				"origin", d.id, "op", "gc", "last_used", d.used.UTC().Format(time.RFC3339), "bytes", d.bytes)
		}
	}
	st.EvictSoon()
}

// mountStoreOptions are the options a mount opens its store with: leases
// on the origins it opens, and the size bound (what holds a file is set
// by cleanCacheAtStart).
func mountStoreOptions(c config.Cache, log *slog.Logger, memLimit int64) store.Options {
	return store.Options{Logger: log, MemoryLimit: memLimit, Lease: true, MaxSize: c.Bound()}
}

type cacheGCOptions struct {
	cacheOptions
	configPath string
	dryRun     bool
}

// runCacheGC is skillfs cache gc: the cleaning a mount does at start, now,
// saying what it removes.
func runCacheGC(opts cacheGCOptions, out io.Writer) error {
	c, err := gcSettings(opts.configPath)
	if err != nil {
		return err
	}
	st, err := openCache(opts.cacheOptions)
	if err != nil {
		return err
	}
	defer st.Close()
	verb := map[bool]string{true: "would remove", false: "removed"}[opts.dryRun]
	now := time.Now()
	drops, err := unusedOrigins(st, c.Keep(), now)
	if err != nil {
		return err
	}
	var removedBytes int64
	gone := map[string]bool{}
	for _, d := range drops {
		if !opts.dryRun {
			ok, err := st.DropUnused(d.id, now.Add(-c.Keep()))
			if err != nil {
				return fmt.Errorf("remove %s: %w", d.id, err)
			}
			if !ok {
				continue // in use since it was listed
			}
		}
		gone[d.id] = true
		removedBytes += d.bytes
		fmt.Fprintf(out, "%s %s: catalog, approvals and files, %s (unused since %s, more than keep_days %d)\n",
			verb, d.id, humanBytes(d.bytes), d.used.UTC().Format("2006-01-02"), int(c.Keep()/(24*time.Hour)))
	}
	ids, err := originIDs(st)
	if err != nil {
		return err
	}
	ids = slices.DeleteFunc(ids, func(id string) bool { return gone[id] })
	var e store.Eviction
	if limit := c.Bound(); limit > 0 {
		held, err := heldObjects(st)
		if err != nil {
			return err
		}
		objs, err := st.Objects(ids)
		if err != nil {
			return err
		}
		e = store.PlanEviction(objs, limit, held)
		if !opts.dryRun {
			if err := st.Evict(e); err != nil {
				return err
			}
		}
		perOrigin := map[string][2]int64{}
		for _, o := range e.Evict {
			n := perOrigin[o.Origin]
			perOrigin[o.Origin] = [2]int64{n[0] + 1, n[1] + o.Size}
		}
		for _, id := range slices.Sorted(maps.Keys(perOrigin)) {
			n := perOrigin[id]
			fmt.Fprintf(out, "%s %d unheld files of %s, least recently used first: %s\n", verb, n[0], id, humanBytes(n[1]))
		}
		removedBytes += e.Freed
	}
	summary := fmt.Sprintf("%s %d server caches and %d files, %s in all", verb, len(gone), len(e.Evict), humanBytes(removedBytes))
	if limit := c.Bound(); limit > 0 {
		summary += fmt.Sprintf("; files left: %s of max_size %s", humanBytes(e.After()), humanBytes(limit))
		if e.OverHeld() {
			summary += fmt.Sprintf(" (over it: the files running mounts and approvals hold, %s, are kept)", humanBytes(e.HeldBytes))
		}
	}
	if opts.dryRun {
		summary += "; dry run, nothing removed"
	}
	fmt.Fprintln(out, summary)
	return nil
}

// gcSettings is the config's cache section: from --config, else the
// default config when there is one, else the defaults.
func gcSettings(path string) (config.Cache, error) {
	explicit := path != ""
	if !explicit {
		p, err := config.DefaultPath()
		if err != nil {
			return config.Cache{}, nil
		}
		path = p
	}
	cfg, err := config.Load(path)
	switch {
	case err == nil:
		return cfg.Cache, nil
	case errors.Is(err, fs.ErrNotExist) && !explicit:
		return config.Cache{}, nil
	}
	return config.Cache{}, usageError(fmt.Errorf("cache gc reads cache.max_size and cache.keep_days from the config: %w", err))
}

// usersOf names the running mounts that use origin id of the store at
// root, for cache rm's refusal.
func usersOf(root, id string) []string {
	clients, _ := control.Clients(control.Dirs(root))
	var out []string
	for _, c := range clients {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		rep, err := c.Status(ctx)
		cancel()
		if err != nil || filepath.Clean(rep.Mount.CacheDir) != filepath.Clean(root) {
			continue
		}
		for _, s := range rep.Servers {
			if s.ID == id {
				out = append(out, fmt.Sprintf("the mount at %s (pid %d)", c.Mountpoint, c.PID))
				break
			}
		}
	}
	return out
}

// inUseError is cache rm's refusal of an origin a mount uses.
func inUseError(root, id string) error {
	who := "a running skillfs mount"
	if users := usersOf(root, id); len(users) > 0 {
		who = strings.Join(users, " and ")
	}
	return fmt.Errorf("%s is in use by %s; stop the mount first, or pass --force to remove it anyway (the mount keeps serving: it fetches and verifies again what it reads)", id, who)
}
