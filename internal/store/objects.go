package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/skillfs/skillfs/internal/skill"
)

// objects are a bucket's verified files, content-addressed: each stored
// under its digest, re-hashed whenever it is loaded from disk, and held in
// the store's memory cache. They are the bucket's room for file bytes; its
// sidecars (catalog, approvals, flags, times) and lease are the others.
type objects struct {
	b *Bucket

	// pending holds the bytes Keep is still writing to disk, so that a Get
	// in between finds them even when the memory cache could not.
	pmu     sync.Mutex
	pending map[string][]byte
}

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
func (t *objects) Get(d skill.Digest) ([]byte, error) {
	o := t.b
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
func (t *objects) Cached(d skill.Digest) ([]byte, bool) {
	o := t.b
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
func (t *objects) load(d skill.Digest, h string) ([]byte, error) {
	o := t.b
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
	touch(o.root, rel)
	return b, nil
}

// Has reports whether a copy of d is in memory or on disk, without hashing
// it. It is for display ("verified" in stat and xattrs); only Get serves
// bytes.
func (t *objects) Has(d skill.Digest) bool {
	o := t.b
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
func (t *objects) Put(d skill.Digest, b []byte) error {
	o := t.b
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
func (t *objects) Keep(d skill.Digest, b []byte) {
	o := t.b
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
func (t *objects) Persist(d skill.Digest) error {
	o := t.b
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

func (t *objects) write(h string, b []byte) error {
	o := t.b
	rel := objectRel(h)
	if fi, err := o.root.Lstat(rel); err == nil && fi.Mode().IsRegular() && fi.Size() == int64(len(b)) {
		touch(o.root, rel)
		return nil
	}
	if err := ensureDir(o.s.log, o.root, o.dir, objectsDir, "put"); err != nil {
		return err
	}
	if err := ensureDir(o.s.log, o.root, o.dir, objectsDir+"/"+h[:2], "put"); err != nil {
		return err
	}
	if err := o.writeAtomic(rel, b, 0o400, false); err != nil {
		return err
	}
	o.s.wrote(int64(len(b)))
	return nil
}
