package store

import (
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

	temps temps

	// objects are its verified files, by digest (objects.go).
	objects

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

// CatalogUnsaved says why the last save of catalog.json (CatalogSidecar)
// failed, or "" when it succeeded (or none was made).
func (o *Bucket) CatalogUnsaved() string {
	if p := o.unsaved.Load(); p != nil {
		return *p
	}
	return ""
}

// Load returns the saved sidecar f, or ErrNotFound. One that is a symlink,
// not a regular file or over its cap is removed and logged: an
// approvals.json so removed leaves the skills it approved pending again,
// never shown on its say-so. What a sidecar holds is not otherwise
// verified: its content is the caller's to check.
func (o *Bucket) Load(f Sidecar) ([]byte, error) {
	return o.loadFile(f.what, f.name, f.limitIn(o.s))
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
	f, tmp, err := o.temps.create(perm)
	if err != nil {
		return err
	}
	// The lock, held until after the rename, tells temps.clean in this or
	// another process that the file is in use.
	renamed := false
	defer func() {
		if !renamed {
			o.root.Remove(tmp)
		}
		f.Close()
		o.temps.done(tmp)
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
