package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/control"
	"github.com/skillfs/skillfs/internal/report"
	"github.com/skillfs/skillfs/internal/retain"
)

// What the cache keeps and what a clean removes is package retain's; here
// is cache gc's report of it.

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
	rep, err := retain.Collect(st, c, opts.dryRun)
	printCollected(out, rep, c, opts.dryRun)
	return err
}

// printCollected says what rep removed (or, in a dry run, would).
func printCollected(out io.Writer, rep retain.Report, c config.Cache, dryRun bool) {
	verb := map[bool]string{true: "would remove", false: "removed"}[dryRun]
	var removedBytes int64
	for _, d := range rep.Dropped {
		removedBytes += d.Bytes
		fmt.Fprintf(out, "%s %s: catalog, approvals and files, %s (unused since %s, more than keep_days %d)\n",
			verb, d.ID, report.HumanBytes(d.Bytes), d.Used.UTC().Format("2006-01-02"), int(c.Keep()/(24*time.Hour)))
	}
	e := rep.Eviction
	perOrigin := map[string][2]int64{}
	for _, o := range e.Evict {
		n := perOrigin[o.Origin]
		perOrigin[o.Origin] = [2]int64{n[0] + 1, n[1] + o.Size}
	}
	for _, id := range slices.Sorted(maps.Keys(perOrigin)) {
		n := perOrigin[id]
		fmt.Fprintf(out, "%s %d unheld files of %s, least recently used first: %s\n", verb, n[0], id, report.HumanBytes(n[1]))
	}
	removedBytes += e.Freed
	summary := fmt.Sprintf("%s %d server caches and %d files, %s in all", verb, len(rep.Dropped), len(e.Evict), report.HumanBytes(removedBytes))
	if limit := c.Bound(); limit > 0 {
		summary += fmt.Sprintf("; files left: %s of max_size %s", report.HumanBytes(e.After()), report.HumanBytes(limit))
		if e.OverHeld() {
			summary += fmt.Sprintf(" (over it: the files running mounts and approvals hold, %s, are kept)", report.HumanBytes(e.HeldBytes))
		}
	}
	if dryRun {
		summary += "; dry run, nothing removed"
	}
	fmt.Fprintln(out, summary)
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
