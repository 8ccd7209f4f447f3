package store

import (
	"cmp"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/skillfs/skillfs/internal/skill"
)

// The store cleans itself (cache.max_size and cache.keep_days in the
// config). Two things are removed, and nothing else:
//
//   - Objects that nothing holds, least recently used first, while the
//     objects of the whole store (every origin's objects/ files; the
//     sidecars are not counted, they have their own caps) take more than
//     Options.MaxSize. What holds an object is the caller's to say
//     (Options.Held): skillfs holds every object named by the catalog of
//     an origin a running mount uses and every object named by an approval
//     record, whoever uses the origin.
//   - Whole origin directories (catalog, approvals, objects) that no
//     mount has used for keep_days (DropUnused).
//
// Recency is the object file's mtime, not its atime (noatime and relatime
// make atime useless): a file gets its mtime when it is written, and the
// store sets it to now each time it loads the file from disk or is asked
// to write bytes it already holds. Memory hits do not touch it: what a
// mount reads from memory is named by its tree, hence held.
//
// Removing an object only unlinks it: a read that has it open keeps its
// bytes, and a later read misses, fetches and verifies afresh.
//
// Use. An origin directory a process uses holds last-used (0600, empty),
// share-locked (flock) by that process for as long as it has the Bucket
// open (Options.Lease); its mtime is when a mount last opened or let go
// of the origin. InUse asks for the lock exclusively without waiting:
// failing means a process uses it, and the kernel drops the lock of a
// process that died.

// leaseName is the file whose lock says an origin is in use and whose
// mtime says when it last was.
const leaseName = "last-used"

// An Object is one stored file as eviction sees it.
type Object struct {
	Origin string
	Digest skill.Digest
	Size   int64
	Used   time.Time // the file's mtime: written, or last loaded from disk
}

// Objects lists the objects of the given origins. An origin without an
// objects directory has none; anything that is not a well-named regular
// file is skipped (Get discards it when asked for it).
func (s *Store) Objects(ids []string) ([]Object, error) {
	var out []Object
	for _, id := range ids {
		if err := CheckID(id); err != nil {
			return nil, fmt.Errorf("list objects: %w", err)
		}
		fans, err := readDirNames(s.root, id+"/"+objectsDir)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list objects of %s: %w", id, err)
		}
		for _, fan := range fans {
			names, err := readDirNames(s.root, id+"/"+objectsDir+"/"+fan)
			if err != nil {
				continue // not a directory, or gone meanwhile
			}
			for _, n := range names {
				if len(n) != 64 || !strings.HasPrefix(n, fan) {
					continue
				}
				if _, err := hex.DecodeString(n); err != nil {
					continue
				}
				fi, err := s.root.Lstat(id + "/" + objectRel(n))
				if err != nil || !fi.Mode().IsRegular() {
					continue
				}
				out = append(out, Object{Origin: id, Digest: skill.Digest("sha256:" + n), Size: fi.Size(), Used: fi.ModTime()})
			}
		}
	}
	return out, nil
}

// An Eviction is what one pass removes (or, planned, would remove).
type Eviction struct {
	Limit     int64    // the bound: Options.MaxSize
	Total     int64    // the objects' bytes before the pass
	HeldBytes int64    // of which held
	Evict     []Object // removed, least recently used first
	Freed     int64    // their bytes
}

// After is the objects' bytes once the pass is done.
func (e Eviction) After() int64 { return e.Total - e.Freed }

// OverHeld reports whether held objects alone take more than the limit:
// they are all kept, and the store stays over it.
func (e Eviction) OverHeld() bool { return e.HeldBytes > e.Limit }

// PlanEviction picks, from objs, the unheld ones to remove so that the
// rest take at most limit bytes: least recently used first (ties by
// origin, then digest, so a plan is reproducible). Exactly limit bytes
// stay; held objects are never picked, so when they alone pass the limit
// every unheld one is.
func PlanEviction(objs []Object, limit int64, held func(Object) bool) Eviction {
	e := Eviction{Limit: limit}
	var free []Object
	for _, o := range objs {
		e.Total += o.Size
		if held(o) {
			e.HeldBytes += o.Size
		} else {
			free = append(free, o)
		}
	}
	if e.Total <= limit {
		return e
	}
	slices.SortFunc(free, func(a, b Object) int {
		return cmp.Or(a.Used.Compare(b.Used), cmp.Compare(a.Origin, b.Origin), cmp.Compare(a.Digest, b.Digest))
	})
	for _, o := range free {
		if e.Total-e.Freed <= limit {
			break
		}
		e.Evict = append(e.Evict, o)
		e.Freed += o.Size
	}
	return e
}

// Evict removes the objects e names. An object already gone counts as
// removed; the first other failure is returned after trying the rest.
func (s *Store) Evict(e Eviction) error {
	var first error
	for _, o := range e.Evict {
		h, err := digestHex(o.Digest)
		if err == nil {
			err = CheckID(o.Origin)
		}
		if err == nil {
			err = s.root.Remove(o.Origin + "/" + objectRel(h))
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
			first = fmt.Errorf("evict %s of %s: %w", o.Digest, o.Origin, err)
		}
	}
	return first
}

// touch marks the file rel under root as used now (see Object.Used); a
// failure only makes it look older.
func touch(root *os.Root, rel string) {
	now := time.Now()
	root.Chtimes(rel, now, now)
}

// lease opens and share-locks the origin's last-used file and sets its
// mtime to now. It reports whether the directory is still the one the
// Bucket was opened on: DropUnused may have removed it between the two.
func (o *Bucket) lease() bool {
	f, err := o.root.OpenFile(leaseName, os.O_RDONLY|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		o.s.log.Warn("marking the origin in use; skillfs cache gc may remove it while it is", "origin", o.id, "op", "lease", "path", o.dir, "err", err)
		return true
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return true
	}
	if err := flock(f, syscall.LOCK_SH); err != nil {
		f.Close()
		return true
	}
	// A remover holds the lock exclusively while it removes the whole
	// directory; once it lets go, our file may be an unlinked one.
	fi, ferr := f.Stat()
	lfi, lerr := o.s.root.Lstat(o.id + "/" + leaseName)
	if ferr != nil || lerr != nil || !os.SameFile(fi, lfi) {
		f.Close()
		return false
	}
	touch(o.root, leaseName)
	o.leaseFile = f
	return true
}

// release lets go of the lease, recording when.
func (o *Bucket) release() {
	if o.leaseFile == nil {
		return
	}
	touch(o.root, leaseName)
	o.leaseFile.Close()
	o.leaseFile = nil
}

// InUse reports whether a process (this one included) holds the origin's
// directory open with a lease.
func (s *Store) InUse(id string) bool {
	f, ok := lockExclusive(s.root, id)
	if f != nil {
		f.Close()
	}
	return !ok
}

// lockExclusive takes id's lease exclusively without waiting: ok is false
// when a process uses the origin. f is nil when there is no lease file.
func lockExclusive(root *os.Root, id string) (f *os.File, ok bool) {
	if CheckID(id) != nil {
		return nil, true
	}
	f, err := root.OpenFile(id+"/"+leaseName, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, true
	}
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	return f, true
}

// LastUsed is when a mount last opened or let go of the origin (its
// last-used file's mtime); for an origin that has none, written before
// skillfs kept one, the newest mtime of its directory, catalog.json and
// approvals.json.
func (s *Store) LastUsed(id string) (time.Time, error) {
	if err := CheckID(id); err != nil {
		return time.Time{}, err
	}
	if fi, err := s.root.Lstat(id + "/" + leaseName); err == nil {
		return fi.ModTime(), nil
	}
	fi, err := s.root.Lstat(id)
	if err != nil {
		return time.Time{}, err
	}
	t := fi.ModTime()
	for _, n := range []string{catalogName, approvalsName} {
		if fi, err := s.root.Lstat(id + "/" + n); err == nil && fi.ModTime().After(t) {
			t = fi.ModTime()
		}
	}
	return t, nil
}

// DropUnused removes the directory of id, as Remove does, when no process
// uses it and it was last used before cutoff; it reports whether it did.
// The lease is held exclusively while the directory goes, so a mount
// opening the origin meanwhile waits and then starts afresh.
func (s *Store) DropUnused(id string, cutoff time.Time) (bool, error) {
	used, err := s.LastUsed(id)
	if err != nil || !used.Before(cutoff) {
		return false, err
	}
	f, ok := lockExclusive(s.root, id)
	if !ok {
		return false, nil
	}
	if f != nil {
		defer f.Close()
	}
	if err := s.Remove(id); err != nil {
		return false, err
	}
	return true, nil
}

// Clear removes everything the origin's directory holds but its lease and
// the temporary files of writes under way:
// Remove for an origin a mount is using (skillfs cache rm --force). The
// mount keeps the directory and its Bucket keeps working: what it no
// longer finds on disk it fetches and verifies afresh, and its next save
// of a sidecar writes it again.
func (s *Store) Clear(id string) error {
	if err := CheckID(id); err != nil {
		return fmt.Errorf("clear origin: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	names, err := readDirNames(s.root, id)
	if err != nil {
		return fmt.Errorf("clear origin %s in %s: %w", id, s.path, err)
	}
	for _, n := range names {
		if n == leaseName || strings.HasPrefix(n, tempPrefix) {
			continue // a write under way: it lands, or temps.clean takes it
		}
		rel := id + "/" + n
		if err := s.root.RemoveAll(rel); err != nil {
			makeWritable(s.root, rel)
			if err := s.root.RemoveAll(rel); err != nil {
				return fmt.Errorf("clear origin %s in %s: %w", id, s.path, err)
			}
		}
	}
	return nil
}

// A sizeKeeper runs the eviction a mount's writes call for: at most one
// pass at a time, each one scan of the store's objects and the removals
// it plans.
type sizeKeeper struct {
	s       *Store
	mu      sync.Mutex
	held    func() (func(Object) bool, error) // Options.Held, or SetHeld's
	running bool
	again   bool
	// estimate is the objects' bytes: the last pass's result plus what
	// was written since.
	estimate int64
	// lastAfter is where the last pass left the store; over the limit only
	// when held objects alone pass it.
	lastAfter int64
	overHeld  bool
	heldBytes int64
	passes    uint64
	evicted   uint64
	done      sync.WaitGroup
}

// evictSlack is how many bytes must be written after a pass that could not
// bring the store under its limit (held objects alone pass it) before
// another is tried: every write would otherwise scan the whole store.
func evictSlack(limit int64) int64 { return max(limit/8, 1<<20) }

// wrote counts n bytes of a new object and starts a pass when they take
// the store over its limit.
func (k *sizeKeeper) wrote(n int64) {
	s := k.s
	if s.opts.MaxSize <= 0 {
		return
	}
	k.mu.Lock()
	k.estimate += n
	due := k.estimate > s.opts.MaxSize && (k.lastAfter <= s.opts.MaxSize || k.estimate-k.lastAfter >= evictSlack(s.opts.MaxSize))
	k.mu.Unlock()
	if due {
		k.EvictSoon()
	}
}

// EvictSoon runs one eviction pass in the background (Options.MaxSize,
// Options.Held), or one more after the pass under way. Mounts call it at
// start; writes call it when they take the store over its limit. A pass
// that cannot learn what is held removes nothing.
func (k *sizeKeeper) EvictSoon() {
	s := k.s
	if s.opts.MaxSize <= 0 {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.held == nil {
		k.held = s.opts.Held
	}
	if k.held == nil {
		return // nobody has said yet what is held
	}
	if k.running {
		k.again = true
		return
	}
	k.running = true
	k.done.Add(1)
	go func() {
		defer k.done.Done()
		for {
			k.evictPass()
			k.mu.Lock()
			if !k.again {
				k.running = false
				k.mu.Unlock()
				return
			}
			k.again = false
			k.mu.Unlock()
		}
	}()
}

func (k *sizeKeeper) evictPass() {
	s := k.s
	limit := s.opts.MaxSize
	k.mu.Lock()
	before := k.estimate
	heldFn := k.held
	k.mu.Unlock()
	ids, err := s.Origins()
	var held func(Object) bool
	if err == nil {
		held, err = heldFn()
	}
	var objs []Object
	if err == nil {
		objs, err = s.Objects(ids)
	}
	if err != nil {
		s.log.Warn("cache eviction skipped: cannot tell which objects are held", "op", "evict", "path", s.path, "err", err)
		return
	}
	e := PlanEviction(objs, limit, held)
	if err := s.Evict(e); err != nil {
		s.log.Warn("cache eviction", "op", "evict", "path", s.path, "err", err)
	}
	k.mu.Lock()
	wasOver := k.overHeld
	k.passes++
	k.evicted += uint64(len(e.Evict))
	// What was written during the pass stays counted.
	k.estimate = e.After() + max(k.estimate-before, 0)
	k.lastAfter = e.After()
	k.overHeld = e.OverHeld()
	k.heldBytes = e.HeldBytes
	k.mu.Unlock()
	if len(e.Evict) > 0 {
		s.log.Info("cache evicted least recently used objects", "op", "evict", "path", s.path,
			"objects", len(e.Evict), "bytes", e.Freed, "cache_bytes", e.After(), "max_size", limit)
	}
	if e.OverHeld() && !wasOver {
		s.log.Warn("cache over cache.max_size: the objects mounts and approvals hold are kept", "op", "evict", "path", s.path,
			"held_bytes", e.HeldBytes, "max_size", limit)
	}
}

// retryOverHeld runs another pass when the last one found the held objects
// alone over the limit: a catalog or approvals just saved may hold fewer
// (a listing replaced a version; a skill was revoked), and with no write
// to come, nothing else would bring the store back under its limit. These
// saves are few (a listing's, debounced; a command's), unlike writes.
func (k *sizeKeeper) retryOverHeld() {
	k.mu.Lock()
	over := k.overHeld
	k.mu.Unlock()
	if over {
		k.EvictSoon()
	}
}

// SetHeld replaces Options.Held, for a caller that learns what is held
// only once the Store is open (a mount, once its tree exists). Until Held
// or SetHeld gives one, no pass runs.
func (k *sizeKeeper) SetHeld(held func() (func(Object) bool, error)) {
	k.mu.Lock()
	k.held = held
	k.mu.Unlock()
}

// SizeStats is the store's size against cache.max_size, for status.
type SizeStats struct {
	MaxSize   int64  // 0: no bound
	Bytes     int64  // the objects' bytes as last counted plus what was written since
	HeldBytes int64  // held at the last pass
	OverHeld  bool   // the last pass found held objects alone over MaxSize
	Passes    uint64 // eviction passes run
	Evicted   uint64 // objects they removed
}

// Size returns the store's size against its bound.
func (k *sizeKeeper) Size() SizeStats {
	s := k.s
	k.mu.Lock()
	defer k.mu.Unlock()
	return SizeStats{MaxSize: max(s.opts.MaxSize, 0), Bytes: k.estimate, HeldBytes: k.heldBytes, OverHeld: k.overHeld, Passes: k.passes, Evicted: k.evicted}
}

// Peek returns id's Bucket for reading its sidecars (eviction's and cache
// gc's look at what a catalog or approvals name) without creating,
// leasing or keeping it: the Bucket this Store already has open, or one
// made for the look. The caller calls done when it is finished; the Bucket
// must not be written through.
func (s *Store) Peek(id string) (o *Bucket, done func(), err error) {
	if err := CheckID(id); err != nil {
		return nil, nil, fmt.Errorf("open origin: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if o := s.origins[id]; o != nil {
		return o, func() {}, nil
	}
	fi, err := s.root.Lstat(id)
	if err != nil {
		return nil, nil, fmt.Errorf("open origin %s: %w", id, err)
	}
	if !fi.IsDir() {
		return nil, nil, fmt.Errorf("open origin %s: not a directory", id)
	}
	r, err := s.root.OpenRoot(id)
	if err != nil {
		return nil, nil, fmt.Errorf("open origin %s: %w", id, err)
	}
	s.gen++
	o = &Bucket{s: s, id: id, gen: s.gen, dir: s.path + "/" + id, root: r, dirInfo: fi}
	o.temps.o, o.objects.b = o, o
	return o, func() { r.Close() }, nil
}
