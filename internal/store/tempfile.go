package store

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// Temporary files are how a write becomes atomic: written in full under a
// ".tmp-" name in the origin directory, then renamed into place. A writer
// holds an exclusive flock on its temporary file from creation until after
// the rename. The kernel drops the lock when the process dies, so a
// temporary file nobody holds locked was left by an interrupted write — in
// this process or another skillfs sharing the store — and can be removed.

// The lock alone leaves a window between creating the file and locking it.
// Within one process the in-flight set closes it: a name is registered
// before it exists, and clean skips registered names. Across processes
// the writer checks, once it holds the lock, that the name is still its
// file, and starts over if a cleaner got there first.

// temps are the temporary files of one bucket: those this process is
// writing, and the cleaning up of those an interrupted write left.
type temps struct {
	o        *Bucket
	mu       sync.Mutex
	inflight map[string]struct{} // temporary files this process is writing
}

// create creates and locks a new temporary file in the origin directory.
// The caller must call done with the name when it has renamed or removed
// the file.
func (t *temps) create(perm os.FileMode) (*os.File, string, error) {
	o := t.o
	for range 10 {
		var rnd [8]byte
		rand.Read(rnd[:])
		name := tempPrefix + hex.EncodeToString(rnd[:])
		t.mu.Lock()
		if t.inflight == nil {
			t.inflight = make(map[string]struct{})
		}
		t.inflight[name] = struct{}{}
		t.mu.Unlock()
		f, err := o.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			t.done(name)
			continue
		}
		if err != nil {
			t.done(name)
			return nil, "", err
		}
		// The umask may have narrowed perm; a 0200 catalog would be useless.
		if err := f.Chmod(perm); err != nil {
			f.Close()
			o.root.Remove(name)
			t.done(name)
			return nil, "", err
		}
		if err := flock(f, syscall.LOCK_EX); err != nil {
			f.Close()
			o.root.Remove(name)
			t.done(name)
			return nil, "", err
		}
		// A cleaner may have locked and removed the file between our create
		// and our lock; then the name is no longer ours.
		fi, ferr := f.Stat()
		lfi, lerr := o.root.Lstat(name)
		if ferr == nil && lerr == nil && os.SameFile(fi, lfi) {
			return f, name, nil
		}
		f.Close()
		t.done(name)
	}
	return nil, "", fmt.Errorf("create temporary file in %s: ten attempts lost to name clashes or concurrent cleanup", o.dir)
}

// done forgets the temporary file name, renamed or removed.
func (t *temps) done(name string) {
	t.mu.Lock()
	delete(t.inflight, name)
	t.mu.Unlock()
}

func (t *temps) isInflight(name string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.inflight[name]
	return ok
}

// clean removes temporary files that no live writer holds.
func (t *temps) clean() {
	o := t.o
	names, err := readDirNames(o.root, ".")
	if err != nil {
		o.s.log.Warn("cannot list origin directory for leftover temporary files",
			"origin", o.id, "op", "open", "path", o.dir, "err", err)
		return
	}
	for _, n := range names {
		if !strings.HasPrefix(n, tempPrefix) || t.isInflight(n) {
			continue
		}
		if t.removeStale(n) {
			o.s.log.Info("removed temporary file left by an interrupted write",
				"origin", o.id, "op", "open", "path", filepath.Join(o.dir, n))
		}
	}
}

// removeStale removes the temporary file name unless a live writer holds
// its lock.
func (t *temps) removeStale(name string) bool {
	o := t.o
	lfi, err := o.root.Lstat(name)
	if err != nil {
		return false
	}
	if !lfi.Mode().IsRegular() {
		// skillfs only ever creates regular temporary files.
		makeWritable(o.root, name)
		return o.root.RemoveAll(name) == nil
	}
	f, err := o.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !os.SameFile(fi, lfi) {
		return false
	}
	if err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return false // a live writer holds it
	}
	return o.root.Remove(name) == nil
}

func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Flock(int(fd), how)
			if ferr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}
