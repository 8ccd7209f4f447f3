package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/skillfs/skillfs/internal/skill"
)

// A Bucket is one origin's part of the store: its verified files and its
// last catalog. It is safe for concurrent use.
type Bucket struct {
	s       *Store
	id      string
	gen     uint64
	dir     string
	root    *os.Root
	dirInfo fs.FileInfo
	removed atomic.Bool

	// mu orders renames into place against discards, so a Get that found
	// a corrupt file never deletes the good copy a concurrent Put just
	// renamed over it.
	mu sync.Mutex

	tmu      sync.Mutex
	inflight map[string]struct{} // temporary files this process is writing

	// pending holds the bytes Keep is still writing to disk, so that a Get
	// in between finds them even when the memory cache could not.
	pmu     sync.Mutex
	pending map[string][]byte

	// unsaved says why the last save of catalog.json failed; nil after
	// a success.
	unsaved atomic.Pointer[string]

	// leaseFile holds the share lock that marks the origin in use
	// (Options.Lease, gc.go); Store.mu guards it.
	leaseFile *os.File
}

// ID returns the origin's id.
func (o *Bucket) ID() string { return o.id }

// Dir returns the origin's directory.
func (o *Bucket) Dir() string { return o.dir }

// Get returns the verified bytes of the file with digest d.
//
// From memory the bytes are returned as cached. From disk the whole file is
// read (refusing more than MaxFileSize), hashed and compared with d before
// it is returned and cached; a stored file that is a symlink, not a regular
// file, too large, unreadable or whose hash differs is removed, logged at
// Warn and reported as ErrNotFound, so that the caller fetches afresh.
//
// The returned slice is shared with the cache and with other callers: it
// must not be modified.
func (o *Bucket) Get(d skill.Digest) ([]byte, error) {
	h, err := digestHex(d)
	if err != nil {
		return nil, fmt.Errorf("get from %s: %w", o.id, err)
	}
	if o.removed.Load() {
		return nil, fmt.Errorf("get %s from %s: %w", d, o.id, ErrNotFound)
	}
	k := memKey{o.gen, h}
	if b, ok := o.s.mem.get(k); ok {
		o.s.hits.Add(1)
		return b, nil
	}
	o.pmu.Lock()
	b, ok := o.pending[h]
	o.pmu.Unlock()
	if ok {
		o.s.hits.Add(1)
		return b, nil
	}
	b, err = o.load(d, h)
	if err != nil {
		if o.removed.Load() {
			return nil, fmt.Errorf("get %s from %s: %w", d, o.id, ErrNotFound)
		}
		return nil, err
	}
	o.s.loads.Add(1)
	if !o.removed.Load() {
		o.s.mem.add(k, b)
	}
	return b, nil
}

// Cached returns d's bytes when they are in memory or still being written
// by Keep, without touching the disk: for a caller that has just missed
// with Get and wants to know whether a concurrent Keep landed since.
func (o *Bucket) Cached(d skill.Digest) ([]byte, bool) {
	h, err := digestHex(d)
	if err != nil || o.removed.Load() {
		return nil, false
	}
	if b, ok := o.s.mem.get(memKey{o.gen, h}); ok {
		return b, true
	}
	o.pmu.Lock()
	defer o.pmu.Unlock()
	b, ok := o.pending[h]
	return b, ok
}

// load reads and re-verifies the disk copy.
func (o *Bucket) load(d skill.Digest, h string) ([]byte, error) {
	// A miss, every first read's case, costs one lookup: the object is
	// looked for first, and what leads to it only once it is there.
	rel := objectRel(h)
	lfi, lerr := o.root.Lstat(rel)
	if errors.Is(lerr, fs.ErrNotExist) {
		return nil, fmt.Errorf("get %s from %s: %w", d, o.id, ErrNotFound)
	}
	// The fan-out directories are checked too, before the object's own
	// error is reported: through a planted symlink the object path could
	// resolve anywhere inside the origin, or out of it.
	for _, dir := range []string{objectsDir, objectsDir + "/" + h[:2]} {
		fi, err := o.root.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			// Gone since the object was found.
			return nil, fmt.Errorf("get %s from %s: %w", d, o.id, ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("get %s from %s: %w", d, o.id, err)
		}
		if !fi.IsDir() {
			return nil, o.discard("load", d, dir, fi, fmt.Sprintf("%s is not a directory (mode %v)", dir, fi.Mode()))
		}
	}
	if lerr != nil {
		return nil, fmt.Errorf("get %s from %s: %w", d, o.id, lerr)
	}
	if !lfi.Mode().IsRegular() {
		return nil, o.discard("load", d, rel, lfi, fmt.Sprintf("not a regular file (mode %v)", lfi.Mode()))
	}
	limit := o.s.opts.MaxFileSize
	if lfi.Size() > limit {
		return nil, o.discard("load", d, rel, lfi, fmt.Sprintf("size %d exceeds the cap of %d bytes", lfi.Size(), limit))
	}
	b, reason, err := readRegular(o.root, rel, lfi, limit)
	if errors.Is(err, fs.ErrNotExist) {
		// Evicted (or cleared) between the look and the open.
		return nil, fmt.Errorf("get %s from %s: %w", d, o.id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get %s from %s: %w", d, o.id, err)
	}
	if reason != "" {
		return nil, o.discard("load", d, rel, lfi, reason)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != h {
		return nil, o.discard("load", d, rel, lfi, fmt.Sprintf("content hashes to %s", skill.FormatDigest(sum)))
	}
	o.touch(rel)
	return b, nil
}

// readRegular reads all of rel, which Lstat described as lfi. os.Root would
// follow a symlink swapped in since the Lstat (within the origin), so the
// opened file must be the very file lfi describes; O_NONBLOCK keeps a FIFO
// swapped in from blocking the open. A non-empty
// reason means the file is not what lfi promised and should be discarded;
// err is left for failures that say nothing about the file (EMFILE, EIO).
func readRegular(r *os.Root, rel string, lfi fs.FileInfo, limit int64) (b []byte, reason string, err error) {
	f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return nil, fmt.Sprintf("cannot be opened: %v", err), nil
		}
		cur, lerr := r.Lstat(rel)
		if errors.Is(lerr, fs.ErrNotExist) {
			return nil, "", lerr // removed, not replaced: nothing to discard
		}
		if lerr != nil || !os.SameFile(cur, lfi) {
			return nil, "replaced while being opened", nil
		}
		return nil, "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, "", err
	}
	if !fi.Mode().IsRegular() || !os.SameFile(fi, lfi) {
		return nil, "replaced while being opened", nil
	}
	size := fi.Size()
	if size > limit {
		return nil, fmt.Sprintf("size %d exceeds the cap of %d bytes", size, limit), nil
	}
	// One byte more than expected shows a file that grew under us.
	buf := make([]byte, size+1)
	n, err := io.ReadFull(f, buf)
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
	case err == nil:
	default:
		return nil, "", err
	}
	if int64(n) != size {
		return nil, fmt.Sprintf("size changed from %d while being read", size), nil
	}
	return buf[:n:n], "", nil
}

// discard removes a stored file that failed re-verification — unless it
// has been replaced meanwhile — logs why and returns ErrNotFound.
func (o *Bucket) discard(op string, d skill.Digest, rel string, seen fs.FileInfo, reason string) error {
	path := filepath.Join(o.dir, rel)
	o.mu.Lock()
	rmErr := o.removeIfSame(rel, seen)
	o.mu.Unlock()
	o.s.discards.Add(1)
	attrs := []any{"origin", o.id, "op", op, "path", path, "err", reason}
	if d != "" {
		attrs = append(attrs, "digest", string(d))
	}
	if rmErr != nil {
		attrs = append(attrs, "remove_err", rmErr.Error())
	}
	o.s.log.Warn("discarded stored copy that failed re-verification", attrs...)
	if d == "" {
		return fmt.Errorf("load %s: %s: %w", path, reason, ErrNotFound)
	}
	return fmt.Errorf("get %s from %s: %s: %w", d, o.id, reason, ErrNotFound)
}

func (o *Bucket) removeIfSame(rel string, seen fs.FileInfo) error {
	cur, err := o.root.Lstat(rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if !os.SameFile(cur, seen) {
		return nil
	}
	if cur.IsDir() {
		err = o.root.RemoveAll(rel)
	} else {
		err = o.root.Remove(rel)
	}
	if err != nil {
		// An agent may have taken write permission off the directory.
		if dir := filepath.Dir(rel); dir != "." {
			makeWritable(o.root, dir)
		}
		if cur.IsDir() {
			makeWritable(o.root, rel)
			err = o.root.RemoveAll(rel)
		} else {
			err = o.root.Remove(rel)
		}
	}
	return err
}

// Has reports whether a copy of d is in memory or on disk, without hashing
// it. It is for display ("verified" in stat and xattrs); only Get serves
// bytes.
func (o *Bucket) Has(d skill.Digest) bool {
	h, err := digestHex(d)
	if err != nil || o.removed.Load() {
		return false
	}
	if o.s.mem.has(memKey{o.gen, h}) {
		return true
	}
	fi, err := o.root.Lstat(objectRel(h))
	return err == nil && fi.Mode().IsRegular()
}

// Put stores b, which the caller has verified against d, in memory and on
// disk. Put hashes b once more anyway: memory hits are served unhashed, so
// a caller's mistake here would otherwise be served for the process's life.
// Put keeps its own copy of b.
//
// On disk the file is written under a temporary name (mode 0400) and renamed
// into place. A regular file of the right size already at the final name is
// left alone — content addressing means it holds these bytes, and if it does
// not, the next disk load finds out. Anything else there (a symlink, a
// directory, a file of the wrong size) is replaced. Objects are not fsynced:
// a copy torn by a power cut fails its re-hash and is fetched again.
//
// The bytes stay cached in memory even when writing to disk fails.
func (o *Bucket) Put(d skill.Digest, b []byte) error {
	h, err := digestHex(d)
	if err != nil {
		return fmt.Errorf("put in %s: %w", o.id, err)
	}
	if o.removed.Load() {
		return fmt.Errorf("put %s in %s: %w", d, o.id, ErrRemoved)
	}
	if limit := o.s.opts.MaxFileSize; int64(len(b)) > limit {
		return fmt.Errorf("put %s in %s: %d bytes: %w (cap %d)", d, o.id, len(b), ErrTooLarge, limit)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != h {
		return fmt.Errorf("put %s in %s: %w: they hash to %s", d, o.id, ErrDigestMismatch, skill.FormatDigest(sum))
	}
	c := bytes.Clone(b)
	if c == nil {
		c = []byte{}
	}
	o.s.mem.add(memKey{o.gen, h}, c)
	if err := o.write(h, c); err != nil {
		return fmt.Errorf("put %s in %s: %w", d, o.id, err)
	}
	return nil
}

// Keep is Put for bytes the caller has just verified against d: Get finds
// them as soon as Keep returns (in the memory cache, or held until the disk
// copy is written), and the disk copy is written in the background (Close
// waits for it). Unlike Put, Keep does
// not hash b again — it is on the read path, after the caller's own check —
// and takes ownership of b. A failed disk write is logged; the bytes are
// then fetched again after a restart.
func (o *Bucket) Keep(d skill.Digest, b []byte) {
	h, err := digestHex(d)
	if err != nil || o.removed.Load() || int64(len(b)) > o.s.opts.MaxFileSize {
		return
	}
	if b == nil {
		b = []byte{}
	}
	o.s.mem.add(memKey{o.gen, h}, b)
	o.pmu.Lock()
	if o.pending == nil {
		o.pending = map[string][]byte{}
	}
	o.pending[h] = b
	o.pmu.Unlock()
	o.s.writes.Add(1)
	o.s.pendingWrites.Add(1)
	go func() {
		defer o.s.writes.Done()
		defer o.s.pendingWrites.Add(-1)
		defer func() {
			o.pmu.Lock()
			delete(o.pending, h)
			o.pmu.Unlock()
		}()
		if err := o.write(h, b); err != nil {
			o.s.log.Warn("storing verified bytes", "origin", o.id, "op", "store", "digest", string(d), "err", err)
		}
	}()
}

// Persist makes sure the disk holds d: bytes Keep holds in memory, or is
// still writing in the background, are written now. It fails with
// ErrNotFound when neither memory nor disk holds d. It is for a caller
// about to record something that names d (an approval of what a person
// was shown) and that must not outlive the bytes on a crash.
func (o *Bucket) Persist(d skill.Digest) error {
	h, err := digestHex(d)
	if err != nil {
		return fmt.Errorf("persist in %s: %w", o.id, err)
	}
	if fi, err := o.root.Lstat(objectRel(h)); err == nil && fi.Mode().IsRegular() {
		return nil
	}
	b, ok := o.Cached(d)
	if !ok {
		return fmt.Errorf("persist %s in %s: %w", d, o.id, ErrNotFound)
	}
	if err := o.write(h, b); err != nil {
		return fmt.Errorf("persist %s in %s: %w", d, o.id, err)
	}
	return nil
}

func (o *Bucket) write(h string, b []byte) error {
	rel := objectRel(h)
	if fi, err := o.root.Lstat(rel); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(b)) {
		o.touch(rel)
		return nil
	}
	if err := o.s.ensureDir(o.root, o.dir, objectsDir, "put"); err != nil {
		return err
	}
	if err := o.s.ensureDir(o.root, o.dir, objectsDir+"/"+h[:2], "put"); err != nil {
		return err
	}
	if err := o.writeAtomic(rel, b, 0o400, false); err != nil {
		return err
	}
	o.s.wrote(int64(len(b)))
	return nil
}

// CatalogUnsaved says why the last save of catalog.json (CatalogSidecar)
// failed, or "" when it succeeded (or none was made).
func (o *Bucket) CatalogUnsaved() string {
	if p := o.unsaved.Load(); p != nil {
		return *p
	}
	return ""
}

// LoadCatalog returns the last saved catalog, or ErrNotFound. A catalog.json
// that is a symlink, not a regular file or over MaxCatalogSize is removed
// and logged. The catalog is not otherwise verified: its content is the
// caller's to check.
func (o *Bucket) LoadCatalog() ([]byte, error) {
	return o.loadFile("catalog", catalogName, o.s.opts.MaxCatalogSize)
}

// loadFile reads one of the bucket's own files (what names it in errors
// and logs), or ErrNotFound. One that is a symlink, not a regular file or
// over limit is removed and logged.
func (o *Bucket) loadFile(what, rel string, limit int64) ([]byte, error) {
	if o.removed.Load() {
		return nil, fmt.Errorf("load %s of %s: %w", what, o.id, ErrNotFound)
	}
	fi, err := o.root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("load %s of %s: %w", what, o.id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("load %s of %s: %w", what, o.id, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, o.discard(what, "", rel, fi, fmt.Sprintf("not a regular file (mode %v)", fi.Mode()))
	}
	if fi.Size() > limit {
		return nil, o.discard(what, "", rel, fi, fmt.Sprintf("size %d exceeds the cap of %d bytes", fi.Size(), limit))
	}
	b, reason, err := readRegular(o.root, rel, fi, limit)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("load %s of %s: %w", what, o.id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("load %s of %s: %w", what, o.id, err)
	}
	if reason != "" {
		return nil, o.discard(what, "", rel, fi, reason)
	}
	return b, nil
}

// writeAtomic writes b to a locked temporary file in the origin directory
// and renames it to rel, replacing whatever is there.
func (o *Bucket) writeAtomic(rel string, b []byte, perm os.FileMode, durable bool) error {
	f, tmp, err := o.createTemp(perm)
	if err != nil {
		return err
	}
	// The lock, held until after the rename, tells cleanTemps in this or
	// another process that the file is in use.
	renamed := false
	defer func() {
		if !renamed {
			o.root.Remove(tmp)
		}
		f.Close()
		o.doneTemp(tmp)
	}()
	if _, err := f.Write(b); err != nil {
		return err
	}
	if durable {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	o.mu.Lock()
	err = o.root.Rename(tmp, rel)
	if err != nil {
		// A directory planted at the final name blocks the rename.
		if fi, lerr := o.root.Lstat(rel); lerr == nil && fi.IsDir() {
			o.s.log.Warn("removing a directory where the store keeps a file",
				"origin", o.id, "op", "put", "path", filepath.Join(o.dir, rel))
			makeWritable(o.root, rel)
			if rerr := o.root.RemoveAll(rel); rerr == nil {
				err = o.root.Rename(tmp, rel)
			}
		}
	}
	o.mu.Unlock()
	if err != nil {
		return err
	}
	renamed = true
	if durable {
		if err := syncDir(o.root, filepath.Dir(rel)); err != nil {
			return err
		}
	}
	return nil
}

func syncDir(r *os.Root, rel string) error {
	d, err := r.Open(rel)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
