package vfs

import (
	"context"
	"errors"
	"sync"
	"time"
)

// A File is one version of a file of the tree, as the kernel holds it: an
// inode. Its version is fixed by the entry it was looked up under (see
// fileVersion), and every byte it serves is of that version. When the entry
// changes, new lookups get a new File with a new inode number; this one
// keeps serving only while nothing has changed, and fails every read after
// the change once it has served a byte (ReasonChanged), so that one reader
// never gets part of one version and part of another. A File that has served
// nothing yet follows the change instead: the first read of a stale entry
// refreshes it and reads the new version.
//
// A File of a "dynamic" skill fetches its bytes once, on its first read,
// and serves exactly those for its life: its size is their length.
//
// While a reader goes through a file, its bytes are held so that the file is
// loaded (and re-hashed) once per pass rather than once per kernel read;
// they are let go when a read reaches the end, after idleHold without reads,
// or when holding them would pass heldLimit across the mount.
type File struct {
	o *branch

	mu     sync.Mutex
	n      *node
	served bool
	data   []byte
	timer  *time.Timer
	dyn    []byte // a dynamic file's one fetch
	dynOK  bool
	dynRun *call  // that fetch while it is under way (fetchDynamic)
	gen    uint64 // a dynamic file's generation: one per fetch

	key  fileKey // in the branch's fileTable
	refs int     // guarded by the fileTable's lock
}

// A fileKey names one version of a file in a fileTable: its path and
// version key, or for a dynamic file its path and fetch generation. Its
// strings are shared with the tree and the lookup, so a key costs no
// allocation of its own.
type fileKey struct {
	path    string // origin-relative
	version string // fileNode.key
	dynamic bool
	gen     uint64
}

// ReasonChanged: the file's entry changed after this copy served bytes.
const ReasonChanged = "changed"

// Lookup returns the attributes of the node at a mount-relative path and,
// for a file of an origin, the File of its current version. Generated
// files and directories have no File.
func (c *Core) Lookup(ctx context.Context, p string) (Attr, *File, error) {
	at := c.route(p)
	switch at.kind {
	case atRoot, atMeta:
		a, err := c.Stat(ctx, p)
		return a, nil, err
	case atNowhere:
		return Attr{}, nil, ErrNotExist
	}
	o, rest := at.o, at.rest
	n, err := o.lookup(ctx, rest)
	if err != nil {
		return Attr{}, nil, err
	}
	if n.isDir() {
		return o.attr(n), nil, nil
	}
	// The tree's copy of the path, not the caller's: a File lives as long
	// as the kernel keeps the inode, and p was made for one lookup.
	rest = n.path
	var gen uint64
	key := fileKey{path: rest, version: n.file.key}
	if n.file.dynamic {
		gen = o.rd.dyn.generation(rest)
		key = fileKey{path: rest, dynamic: true, gen: gen}
	}
	fl := o.files.open(key, func() *File { return &File{o: o, n: n, gen: gen, key: key} })
	return fl.Attr(), fl, nil
}

// A fileTable makes one version of a file one File, however many times and
// by however many inodes (go-fuse may hold two for one inode number while
// the kernel forgets one) it is looked up: its bytes are loaded, and a
// dynamic file fetched, once. A File leaves the table when the last
// reference is forgotten.
type fileTable struct {
	mu    sync.Mutex
	files map[fileKey]*File
}

// open returns the File under key with one more reference, making it
// when there is none.
func (ft *fileTable) open(key fileKey, make func() *File) *File {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if ft.files == nil {
		ft.files = map[fileKey]*File{}
	}
	fl := ft.files[key]
	if fl == nil {
		fl = make()
		ft.files[key] = fl
	}
	fl.refs++
	return fl
}

// close drops a reference; it reports whether it was the last.
func (ft *fileTable) close(fl *File) bool {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	if fl.refs--; fl.refs > 0 {
		return false
	}
	if ft.files[fl.key] == fl {
		delete(ft.files, fl.key)
	}
	return true
}

// Attr describes the version this File serves.
func (fl *File) Attr() Attr {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	fl.follow()
	a := fl.o.attr(fl.n)
	if fl.n.file.dynamic {
		// Each fetch of a dynamic file is a version of its own: a lookup
		// after one gets a new inode, and this one keeps what it fetched.
		a.Ino = inoVersion(fl.o.cfg.Label, fl.key.path, false, nil) ^ (fl.gen * 0x9e3779b97f4a7c15 &^ (1 << 63))
		if a.Ino < 2 {
			a.Ino += 2
		}
		a.Volatile, a.Dynamic = true, true
		if fl.dynOK {
			a.Size = int64(len(fl.dyn))
		}
	}
	return a
}

// Path is the File's mount-relative path.
func (fl *File) Path() string { return joinPath(fl.o.cfg.Label, fl.key.path) }

// Load loads and verifies the bytes without serving them, so that Attr
// then reports the true size of a file whose entry declares none. The
// mount calls it when a read is about to begin.
func (fl *File) Load(ctx context.Context) error {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if err := fl.check(); err != nil {
		return err
	}
	_, err := fl.bytes(ctx)
	return err
}

// Read returns the verified bytes at off, at most n of them. The slice
// must not be modified.
func (fl *File) Read(ctx context.Context, off int64, n int) ([]byte, error) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if err := fl.check(); err != nil {
		return nil, err
	}
	if r := fl.n.file.f.Resource; r.HasSize && !fl.n.file.dynamic && off >= r.Size {
		return nil, nil
	}
	b, err := fl.bytes(ctx)
	if err != nil {
		return nil, err
	}
	fl.served = true
	if off >= int64(len(b)) {
		return nil, nil
	}
	end := min(off+int64(n), int64(len(b)))
	if end == int64(len(b)) && !fl.n.file.dynamic {
		fl.release()
	}
	return b[off:end], nil
}

// follow moves a File that has served nothing to its path's current
// version. fl.mu is held.
func (fl *File) follow() {
	cur := fl.o.cat.current().nodes[fl.key.path]
	if cur == fl.n || cur == nil || cur.isDir() {
		return
	}
	if cur.file.version() == fl.n.file.version() {
		fl.n = cur
		return
	}
	if !fl.served && !fl.n.file.dynamic {
		fl.n = cur
		fl.release()
	}
}

// check fails a read when the File's version is no longer the one held.
// fl.mu is held.
func (fl *File) check() error {
	fl.follow()
	t := fl.o.cat.current()
	if fl.n.file.dynamic {
		sn := t.skillAt(parentOf(fl.key.path))
		if sn != nil && sn.s.Dynamic && fl.n.file.owners[0].uri() == sn.uri() {
			return nil
		}
	} else if cur := t.nodes[fl.key.path]; cur != nil && !cur.isDir() && cur.file.version() == fl.n.file.version() {
		return nil
	}
	reason, detail := ReasonChanged, "the server's entry for this file changed after it was opened; open it again"
	if cur := t.nodes[fl.key.path]; cur == nil || cur.isDir() {
		reason, detail = ReasonRemoved, "the server's current entry no longer lists the file"
		if t.heldAt(fl.key.path) {
			reason, detail = ReasonNotApproved, "the file's skill is no longer approved (its entry changed or the approval was revoked); see skillfs pending"
		}
	}
	return &ReadError{Path: fl.Path(), Reason: reason, Err: errors.New(detail)}
}

// bytes returns the File's verified bytes, loading them if needed. fl.mu
// is held.
func (fl *File) bytes(ctx context.Context) (b []byte, err error) {
	ctx, done := fl.o.bound(ctx)
	defer func() { err = done(err) }()
	if fl.n.file.dynamic {
		if !fl.dynOK {
			b, err := fl.fetchDynamic(ctx)
			if err != nil {
				return nil, err
			}
			fl.dyn, fl.dynOK = b, true
		}
		return fl.dyn, nil
	}
	if fl.data != nil {
		fl.timer.Reset(idleHold)
		return fl.data, nil
	}
	b, used, err := fl.o.rd.load(ctx, fl.n)
	if err != nil {
		return nil, err
	}
	if used != fl.n {
		if fl.served && used.file.version() != fl.n.file.version() {
			return nil, &ReadError{Path: fl.Path(), Reason: ReasonChanged,
				Err: errors.New("the server's entry for this file changed after it was opened; open it again")}
		}
		fl.n = used
	}
	fl.hold(b)
	return b, nil
}

// fetchDynamic waits for a dynamic File's one fetch, starting it when none
// is under way. The fetch runs detached from the reader that started it
// (reader.detached): a reader interrupted while it waits gives up waiting,
// and the read it retries takes up the same fetch rather than asking the
// server again. A FUSE interrupt reaches a read whenever the reader gets a
// signal it handles, and the Go runtime sends its own programs one to
// preempt them; Go and Python retry the read. A failed fetch is not kept:
// the next read asks again. fl.mu is held.
func (fl *File) fetchDynamic(ctx context.Context) ([]byte, error) {
	c := fl.dynRun
	if c == nil {
		c = &call{done: make(chan struct{})}
		fl.dynRun = c
		n, gen := fl.n, fl.gen
		fctx, cancel := fl.o.rd.detached(ctx)
		go func() {
			defer cancel()
			c.b, c.err = fl.o.rd.fetchDynamic(fctx, n, gen)
			close(c.done)
		}()
	}
	select {
	case <-c.done:
		fl.dynRun = nil
		return c.b, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// hold keeps b for the next reads when the mount-wide bound allows.
func (fl *File) hold(b []byte) {
	if !fl.o.mem.hold(len(b)) {
		return
	}
	fl.data = b
	if fl.timer == nil {
		fl.timer = time.AfterFunc(idleHold, fl.idle)
	} else {
		fl.timer.Reset(idleHold)
	}
}

func (fl *File) idle() {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	fl.release()
}

// release lets go of held bytes. fl.mu is held.
func (fl *File) release() {
	if fl.data == nil {
		return
	}
	fl.o.mem.unhold(len(fl.data))
	fl.data = nil
	if fl.timer != nil {
		// Dropped rather than kept for the next hold: most files are read
		// once, and the kernel may hold their inodes for long.
		fl.timer.Stop()
		fl.timer = nil
	}
}

// Forget drops one reference to the File (one per Lookup that returned
// it); the last lets go of what it holds. The mount calls it when the
// kernel forgets the inode.
func (fl *File) Forget() {
	if !fl.o.files.close(fl) {
		return
	}
	fl.mu.Lock()
	defer fl.mu.Unlock()
	fl.release()
	if fl.dynOK {
		fl.o.rd.dyn.release(fl.n, int64(len(fl.dyn)))
		fl.dyn, fl.dynOK = nil, false
	}
	if c := fl.dynRun; c != nil {
		// A fetch whose every reader gave up: what it holds is given back
		// when it ends (at the latest at the call timeout or the origin's
		// stop).
		fl.dynRun = nil
		n, rd := fl.n, fl.o.rd
		go func() {
			<-c.done
			if c.err == nil {
				rd.dyn.release(n, int64(len(c.b)))
			}
		}()
	}
}
