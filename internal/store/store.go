package store

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
)

const (
	defaultMemoryLimit    = 256 << 20
	defaultMaxFileSize    = 16 << 20
	defaultMaxCatalogSize = 64 << 20
)

// Options configure a Store. The zero value is usable.
type Options struct {
	// MemoryLimit bounds the bytes held in the in-memory cache across all
	// origins, each file counted with a small fixed overhead. 0 means
	// 256 MiB; a negative value disables the memory cache, so that every
	// Get reads and re-hashes the disk copy.
	MemoryLimit int64
	// MaxFileSize is the largest file Put accepts and Get loads. 0 means
	// 16 MiB. A stored file found larger than this is discarded.
	MaxFileSize int64
	// MaxCatalogSize is the largest catalog a Saver of CatalogSidecar writes and
	// LoadCatalog reads. 0 means 64 MiB.
	MaxCatalogSize int64
	// Logger receives one Warn line per discarded stored file. nil discards.
	Logger *slog.Logger

	// MaxSize bounds the bytes of the store's objects (cache.max_size; see
	// gc.go): when writes take them over it, objects Held does not hold
	// are removed, least recently used first. 0 or less: no bound.
	MaxSize int64
	// Held returns, for one eviction pass, whether an object is held:
	// named by something that must keep it. An error skips the pass.
	Held func() (func(Object) bool, error)
	// Lease marks every origin this Store opens as in use (InUse) until
	// Close: a mount's store sets it, the cache commands' do not.
	Lease bool
}

// Stats are counters for status reporting.
type Stats struct {
	MemoryBytes   int64  // charged to the memory cache, overhead included
	MemoryEntries int    // files held in memory
	MemoryHits    uint64 // Gets answered from memory
	DiskLoads     uint64 // Gets answered from disk after re-hashing
	Discards      uint64 // stored files removed because they failed re-verification
	Evictions     uint64 // files dropped from memory to respect MemoryLimit
	PendingWrites int64  // verified files still being written to disk
}

// A Store holds verified skill bytes under one root directory, one
// subdirectory per origin. It is safe for concurrent use.
type Store struct {
	path string
	root *os.Root
	opts Options
	log  *slog.Logger
	mem  *memCache

	mu      sync.Mutex
	origins map[string]*Bucket
	gen     uint64

	// writes tracks the disk writes Keep started.
	writes sync.WaitGroup

	hits, loads, discards atomic.Uint64
	pendingWrites         atomic.Int64

	sizeKeeper // cache.max_size (gc.go)
	identity   // the identity key (identity.go)
}

// DefaultRoot returns $XDG_CACHE_HOME/skillfs, or ~/.cache/skillfs when
// XDG_CACHE_HOME is unset or relative (the XDG spec says to ignore relative
// values).
func DefaultRoot() (string, error) {
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "skillfs"), nil
	}
	home := os.Getenv("HOME")
	if home == "" || !filepath.IsAbs(home) {
		return "", fmt.Errorf("default store root: neither XDG_CACHE_HOME nor HOME is an absolute path")
	}
	return filepath.Join(home, ".cache", "skillfs"), nil
}

// Open opens the store at root, creating it (mode 0700, parents too) when
// absent. root must be absolute. Open refuses a root that is a symbolic
// link, not a directory, owned by another user, or writable by group or
// others: any of those lets someone other than skillfs decide what the
// store's directories are. Symlinks above root are followed, so a relocated
// ~/.cache keeps working.
func Open(root string, opts Options) (*Store, error) {
	if !filepath.IsAbs(root) {
		return nil, fmt.Errorf("open store %q: path is not absolute", root)
	}
	root = filepath.Clean(root)
	if opts.MemoryLimit == 0 {
		opts.MemoryLimit = defaultMemoryLimit
	}
	if opts.MaxFileSize == 0 {
		opts.MaxFileSize = defaultMaxFileSize
	}
	if opts.MaxCatalogSize == 0 {
		opts.MaxCatalogSize = defaultMaxCatalogSize
	}
	if opts.MaxFileSize < 0 || opts.MaxCatalogSize < 0 {
		return nil, fmt.Errorf("open store %s: negative MaxFileSize or MaxCatalogSize", root)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}

	fi, err := os.Lstat(root)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(root, 0o700); err != nil {
			return nil, fmt.Errorf("open store %s: %w", root, err)
		}
		// MkdirAll's mode is filtered by the umask; make it exact.
		if err := os.Chmod(root, 0o700); err != nil {
			return nil, fmt.Errorf("open store %s: %w", root, err)
		}
		fi, err = os.Lstat(root)
	}
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", root, err)
	}
	if err := checkRoot(root, fi); err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", root, err)
	}
	// The checks above were on the path; make sure the handle we keep is
	// the directory they were made on.
	if rfi, err := r.Stat("."); err != nil || !os.SameFile(fi, rfi) {
		r.Close()
		return nil, fmt.Errorf("open store %s: %w: it changed while being opened", root, ErrUnsafeRoot)
	}
	s := &Store{
		path:    root,
		root:    r,
		opts:    opts,
		log:     opts.Logger,
		mem:     newMemCache(opts.MemoryLimit),
		origins: make(map[string]*Bucket),
	}
	s.identity = identity{root: r, path: root, log: opts.Logger}
	s.sizeKeeper.s = s
	return s, nil
}

func checkRoot(root string, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("open store %s: %w: it is a symbolic link; configure the directory it points to instead", root, ErrUnsafeRoot)
	case !fi.IsDir():
		return fmt.Errorf("open store %s: %w: not a directory", root, ErrUnsafeRoot)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("open store %s: %w: owned by uid %d, not by the user running skillfs (uid %d)", root, ErrUnsafeRoot, st.Uid, os.Geteuid())
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("open store %s: %w: mode %v lets other users write to it; run chmod 700 %s", root, ErrUnsafeRoot, fi.Mode().Perm(), root)
	}
	return nil
}

// Root returns the store's root directory.
func (s *Store) Root() string { return s.path }

// Bucket opens (creating when absent) the directory of one origin. id is
// the origin's identity as package config computes it (label plus a
// fingerprint of its command or URL) and must pass CheckID. Calls with the
// same id return the same *Bucket until Remove. Each call also removes
// temporary files that an interrupted write (a crash, a kill) left behind.
func (s *Store) Bucket(id string) (*Bucket, error) {
	if err := CheckID(id); err != nil {
		return nil, fmt.Errorf("open origin: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if o := s.origins[id]; o != nil {
		// Someone may have deleted or replaced the directory behind our
		// handle (another skillfs process removing the origin, say).
		if fi, err := s.root.Lstat(id); err == nil && os.SameFile(fi, o.dirInfo) {
			o.temps.clean()
			return o, nil
		}
		o.removed.Store(true)
		s.mem.purge(o.gen)
		o.release()
		o.root.Close()
		delete(s.origins, id)
	}
	for range 3 {
		o, err := s.openBucket(id)
		if err != nil || o != nil {
			return o, err
		}
	}
	return nil, fmt.Errorf("open origin %s: removed three times while being opened", id)
}

// openBucket opens id's directory; nil, nil when it was removed (cache gc)
// before its lease was taken. s.mu is held.
func (s *Store) openBucket(id string) (*Bucket, error) {
	if err := ensureDir(s.log, s.root, s.path, id, "open"); err != nil {
		return nil, fmt.Errorf("open origin %s: %w", id, err)
	}
	r, err := s.root.OpenRoot(id)
	if err != nil {
		return nil, fmt.Errorf("open origin %s: %w", id, err)
	}
	fi, err := r.Stat(".")
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("open origin %s: %w", id, err)
	}
	s.gen++
	o := &Bucket{s: s, id: id, gen: s.gen, dir: filepath.Join(s.path, id), root: r, dirInfo: fi}
	o.temps.o, o.objects.b = o, o
	if err := ensureDir(s.log, r, o.dir, objectsDir, "open"); err != nil {
		r.Close()
		return nil, fmt.Errorf("open origin %s: %w", id, err)
	}
	if s.opts.Lease && !o.lease() {
		r.Close()
		return nil, nil
	}
	o.temps.clean()
	s.origins[id] = o
	return o, nil
}

// Origins returns the ids of the origin directories present on disk,
// sorted. Entries that are not directories or not valid ids are skipped.
func (s *Store) Origins() ([]string, error) {
	names, err := readDirNames(s.root, ".")
	if err != nil {
		return nil, fmt.Errorf("list origins in %s: %w", s.path, err)
	}
	var ids []string
	for _, n := range names {
		if CheckID(n) != nil {
			continue
		}
		if fi, err := s.root.Lstat(n); err == nil && fi.IsDir() {
			ids = append(ids, n)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// Remove deletes one origin's directory with everything in it and drops
// its files from memory. A *Bucket obtained earlier for id stops working:
// Get reports ErrNotFound and Put ErrRemoved. Removing an id with nothing
// on disk reports ErrNotFound. Symlinks inside are removed, never followed.
func (s *Store) Remove(id string) error {
	if err := CheckID(id); err != nil {
		return fmt.Errorf("remove origin: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if o := s.origins[id]; o != nil {
		o.removed.Store(true)
		s.mem.purge(o.gen)
		o.release()
		// Not closing o.root: a Get or Put may be using it right now; it
		// fails cleanly on the deleted directory and the finalizer closes it.
		delete(s.origins, id)
	}
	if _, err := s.root.Lstat(id); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove origin %s from %s: %w", id, s.path, ErrNotFound)
		}
		return fmt.Errorf("remove origin %s from %s: %w", id, s.path, err)
	}
	if err := s.root.RemoveAll(id); err != nil {
		// Files are 0400 in 0700 directories, which unlink allows; but an
		// agent may have taken write permission off a directory.
		makeWritable(s.root, id)
		if err := s.root.RemoveAll(id); err != nil {
			return fmt.Errorf("remove origin %s from %s: %w", id, s.path, err)
		}
	}
	return nil
}

// Stats returns the store's counters.
func (s *Store) Stats() Stats {
	used, n, ev := s.mem.stats()
	return Stats{
		MemoryBytes:   used,
		MemoryEntries: n,
		MemoryHits:    s.hits.Load(),
		DiskLoads:     s.loads.Load(),
		PendingWrites: s.pendingWrites.Load(),
		Discards:      s.discards.Load(),
		Evictions:     ev,
	}
}

// Close releases the store's directory handles. The Store and its Origins
// must not be used afterwards.
func (s *Store) Close() error {
	s.writes.Wait()
	s.sizeKeeper.done.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, o := range s.origins {
		o.release()
		o.root.Close()
		delete(s.origins, id)
	}
	return s.root.Close()
}

// ensureDir makes rel (relative to r, whose path is base) a real directory
// of mode 0700. Something else in its place, a symlink included, was put
// there by someone other than skillfs: it is removed and logged to log.
func ensureDir(log *slog.Logger, r *os.Root, base, rel, op string) error {
	fi, err := r.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case fi.IsDir():
		if fi.Mode().Perm() == 0o700 {
			return nil
		}
		log.Warn("store directory had its mode changed; restoring 0700",
			"op", op, "path", filepath.Join(base, rel), "err", fmt.Sprintf("mode %v", fi.Mode().Perm()))
		return r.Chmod(rel, 0o700)
	default:
		log.Warn("removing what is not a directory where the store keeps one",
			"op", op, "path", filepath.Join(base, rel), "err", fmt.Sprintf("mode %v", fi.Mode()))
		if err := r.RemoveAll(rel); err != nil {
			return err
		}
	}
	if err := r.Mkdir(rel, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	// Mkdir's mode passes through the umask; make it exact. A concurrent
	// creator may have won the race, in which case this is a no-op.
	return r.Chmod(rel, 0o700)
}

// makeWritable gives the owner rwx on every directory under rel, without
// following symlinks, so that RemoveAll can proceed.
func makeWritable(r *os.Root, rel string) {
	fi, err := r.Lstat(rel)
	if err != nil || !fi.IsDir() {
		return
	}
	if err := r.Chmod(rel, 0o700); err != nil {
		return
	}
	names, err := readDirNames(r, rel)
	if err != nil {
		return
	}
	for _, n := range names {
		makeWritable(r, rel+"/"+n)
	}
}

func readDirNames(r *os.Root, rel string) ([]string, error) {
	f, err := r.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
