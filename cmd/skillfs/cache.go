package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skillfs/skillfs/internal/control"
	"github.com/skillfs/skillfs/internal/mountd"
	"github.com/skillfs/skillfs/internal/report"
	"github.com/skillfs/skillfs/internal/retain"
	"github.com/skillfs/skillfs/internal/store"
)

type cacheOptions struct {
	cacheDir string
}

type cacheRemoveOptions struct {
	cacheOptions
	force bool
}

func newCacheCommand() *cobra.Command {
	var opts cacheOptions
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "List, clean or remove the verified bytes skillfs keeps per server",
		Long: `skillfs keeps the bytes it has verified, and the last catalog, per server in
$XDG_CACHE_HOME/skillfs/<label>-<fingerprint>/ (the fingerprint covers the server's
command, args, env, URL and headers, keyed with the cache's .identity-key, so a
label pointed at another server starts afresh and no secret shows in the name).`,
	}
	cmd.PersistentFlags().StringVar(&opts.cacheDir, "cache-dir", "", "cache directory (default $XDG_CACHE_HOME/skillfs)")
	rm := cacheRemoveOptions{}
	rmCmd := &cobra.Command{
		Use:   "rm LABEL|ID...",
		Short: "Remove what the cache holds for a server (every fingerprint of LABEL, or one ID)",
		Long: `Remove what the cache holds for a server: its catalog, approvals and files,
for every fingerprint of LABEL or for one ID (see ` + "`skillfs cache list`" + `).

A server a running mount uses is refused, naming the mount, unless --force:
then its files, catalog and approvals are removed and the mount keeps
serving, fetching and verifying again what it reads (approvals it holds
last until it stops).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError(errors.New("cache rm needs a LABEL or ID (see `skillfs cache list`)"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			rm.cacheOptions = opts
			return runCacheRemove(rm, args, cmd.OutOrStdout())
		},
	}
	rmCmd.Flags().BoolVar(&rm.force, "force", false, "remove a server's cache even while a running mount uses it")
	gc := cacheGCOptions{}
	gcCmd := &cobra.Command{
		Use:   "gc",
		Short: "Clean the cache now: unused servers' caches, and files over cache.max_size",
		Long: `Clean the cache now, as a mount does at start (skillfs.cache in the config):

  - the catalog, approvals and files of every server identity that no mount
    has used for cache.keep_days (default 30; off keeps them for ever) are
    removed;
  - while the files take more than cache.max_size (default 1GiB; off for no
    bound), files nothing holds are removed, least recently used first.
    Held are the files named by the catalog of a server a running mount
    uses and by any approval; held files alone over max_size are kept.

It prints what it removes and how many bytes; --dry-run prints what it
would remove and removes nothing. The settings are read from --config, or
the default config when there is one.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			gc.cacheOptions = opts
			return runCacheGC(gc, cmd.OutOrStdout())
		},
	}
	gcCmd.Flags().BoolVar(&gc.dryRun, "dry-run", false, "print what would be removed, and remove nothing")
	gcCmd.Flags().StringVar(&gc.configPath, "config", "", "config file whose skillfs.cache applies (default: the default config, if any)")
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the servers the cache holds bytes for, with their size",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCacheList(opts, cmd.OutOrStdout())
		},
	}, rmCmd, gcCmd)
	return cmd
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError(fmt.Errorf("%s takes no arguments, got %q", cmd.CommandPath(), args))
	}
	return nil
}

func openCache(opts cacheOptions) (*store.Store, error) {
	root, err := mountd.CacheRoot(opts.cacheDir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no cache at %s", root)
	}
	return store.Open(root, store.Options{})
}

func runCacheList(opts cacheOptions, out io.Writer) error {
	st, err := openCache(opts)
	if err != nil {
		return err
	}
	ids, err := st.Origins()
	if err != nil {
		return err
	}
	for _, id := range ids {
		if id == control.RunDirName {
			continue // the mounts' sockets, not a server's bytes
		}
		fmt.Fprintf(out, "%s\t%s\n", id, report.HumanBytes(retain.DirSize(filepath.Join(st.Root(), id))))
	}
	return nil
}

func runCacheRemove(opts cacheRemoveOptions, names []string, out io.Writer) error {
	st, err := openCache(opts.cacheOptions)
	if err != nil {
		return err
	}
	ids, err := st.Origins()
	if err != nil {
		return err
	}
	// Refuse before removing anything: a LABEL may name several ids.
	for _, id := range ids {
		if id != control.RunDirName && !opts.force && slices.ContainsFunc(names, func(n string) bool { return id == n || labelOf(id) == n }) && st.InUse(id) {
			return inUseError(st.Root(), id)
		}
	}
	for _, name := range names {
		removed := 0
		for _, id := range ids {
			if id == control.RunDirName {
				continue
			}
			if id != name && labelOf(id) != name {
				continue
			}
			removed++
			if !st.InUse(id) {
				if err := st.Remove(id); err != nil {
					return fmt.Errorf("remove %s: %w", id, err)
				}
				fmt.Fprintf(out, "removed %s\n", id)
				continue
			}
			// The mount keeps the directory (its lease is in it); what it
			// held there is gone, and it fetches again what it reads.
			if err := st.Clear(id); err != nil {
				return fmt.Errorf("remove %s: %w", id, err)
			}
			fmt.Fprintf(out, "removed %s (in use by a running mount, which fetches and verifies again what it reads)\n", id)
		}
		if removed == 0 {
			return usageError(fmt.Errorf("the cache holds nothing for %q (see `skillfs cache list`)", name))
		}
	}
	return nil
}

// labelOf strips the fingerprint from an origin id ("acme-0123456789abcdef").
func labelOf(id string) string {
	i := strings.LastIndexByte(id, '-')
	if i < 0 {
		return id
	}
	return id[:i]
}
