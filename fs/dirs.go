package fs

import (
	"context"
	"encoding/binary"
	"hash/fnv"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/skillfs/skillfs/internal/vfs"
)

// Directories without OPENDIR. On a mount the kernel is told of changes
// on, OPENDIR answers ENOSYS: the kernel then stops sending OPENDIR and
// RELEASEDIR for the whole mount (two requests per directory a walk
// enters, most of what `ls -R`, `find` or `du` cost) and keeps every
// listing it reads (FOPEN_CACHE_DIR is its default without OPENDIR) until
// it is told the directory changed (Mount.Invalidate) or the directory's
// mtime is not the one it had when the listing was read.
//
// That second rule keeps the directories whose listing may change without
// a catalog swap (a server's directory reads, .skillfs's generated
// folders; vfs.Core.DirCacheable) current. Before it reads a listing from
// the start, the kernel asks for the directory's attributes if they have
// expired, and drops the listing it kept if the mtime is not the one it saw
// when it read it. So such a directory's attributes are cached for
// relistTimeout only, and each time they are given out (lookup, getattr)
// or its listing is (readdir), the listing is taken and compared with the
// last one taken (dirVersions): when it differs, the directory gets a new
// version, a nanosecond later mtime and ctime. A directory whose listing
// does not change keeps its times, so tar, rsync or make see no change
// where there is none (issue 38: a mtime a nanosecond later after every
// listing made tar on 16 cores exit 1, "file changed as we read it").
//
// Without kernel notifications (Options.NoNotify) nothing would drop a
// kept listing, so OPENDIR is served as before and no listing is kept.

// relistTimeout is how long the kernel may keep the attributes, and so
// the listing, of a directory whose listing can change without a catalog
// swap before it asks again.
const relistTimeout = time.Second

// OpenDir: see above.
func (r *rawFS) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	if r.sh.noNotify {
		return r.RawFileSystem.OpenDir(cancel, in, out)
	}
	return fuse.ENOSYS
}

func (r *rawFS) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	if r.sh.noNotify {
		return r.RawFileSystem.ReadDirPlus(cancel, in, out)
	}
	return r.readDir(cancel, in, out, r.RawFileSystem.ReadDirPlus)
}

func (r *rawFS) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	if r.sh.noNotify {
		return r.RawFileSystem.ReadDir(cancel, in, out)
	}
	return r.readDir(cancel, in, out, r.RawFileSystem.ReadDir)
}

// readDir serves one READDIR(PLUS) that came without a handle: it opens
// the directory in go-fuse's node layer for this request alone, reads from
// the offset the kernel asks for, and releases it. The kernel asks only
// for what it does not keep, so this runs once per directory and change.
func (r *rawFS) readDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList,
	read func(<-chan struct{}, *fuse.ReadIn, *fuse.DirEntryList) fuse.Status) fuse.Status {
	var opened fuse.OpenOut
	if st := r.RawFileSystem.OpenDir(cancel, &fuse.OpenIn{InHeader: in.InHeader}, &opened); st != fuse.OK {
		return st
	}
	defer r.RawFileSystem.ReleaseDir(&fuse.ReleaseIn{InHeader: in.InHeader, Fh: opened.Fh})
	withHandle := *in
	withHandle.Fh = opened.Fh
	return read(cancel, &withHandle, out)
}

// relisted reports whether the directory at p is one whose listing can
// change without a catalog swap: see above.
func (sh *shared) relisted(p string, a vfs.Attr) bool {
	return !sh.noNotify && a.Kind == vfs.KindDir && !sh.v.DirCacheable(p)
}

// relist gives a directory whose listing can change without a swap the
// times of its listing's version: its own time plus a nanosecond per
// change of its listing seen in this mount. Other attributes are left as
// they are.
func (sh *shared) relist(ctx context.Context, p string, a vfs.Attr, out *fuse.Attr) {
	if !sh.relisted(p, a) {
		return
	}
	ents, err := sh.v.ReadDir(ctx, p)
	var v int64
	if err != nil {
		v = sh.dirs.current(vfs.DirIno(p))
	} else {
		v = sh.dirs.observe(vfs.DirIno(p), listingSum(ents))
	}
	m := a.Mtime.Add(time.Duration(v))
	out.SetTimes(nil, &m, &m)
}

// listingSum is a digest of a listing: names, kinds and inode numbers.
func listingSum(ents []vfs.DirEntry) uint64 {
	h := fnv.New64a()
	var b [9]byte
	for _, e := range ents {
		h.Write([]byte(e.Name))
		binary.LittleEndian.PutUint64(b[:8], e.Ino)
		b[8] = byte(e.Kind)
		h.Write(b[:])
	}
	return h.Sum64()
}

// maxDirVersions bounds how many directories dirVersions remembers; past
// it, it forgets them all and starts a new epoch (see observe).
const maxDirVersions = 1 << 16

// dirVersions is the version of each directory whose listing can change
// without a swap, by inode number: the digest of the last listing taken
// and the version it got. A version only grows, and a directory first seen
// gets the epoch: so a kernel that kept a listing under one version never
// sees that version again for another listing, even after dirVersions
// forgot the directory (a new epoch is larger than every version before).
type dirVersions struct {
	mu    sync.Mutex
	byIno map[uint64]dirVersion
	last  int64 // the last version given out
	epoch int64
}

type dirVersion struct {
	sum uint64
	v   int64
}

// observe records a listing of the directory ino and returns its version.
func (d *dirVersions) observe(ino, sum uint64) int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byIno == nil || len(d.byIno) >= maxDirVersions {
		if d.byIno != nil {
			d.last++
			d.epoch = d.last
		}
		d.byIno = map[uint64]dirVersion{}
	}
	cur, ok := d.byIno[ino]
	switch {
	case !ok:
		cur = dirVersion{sum: sum, v: d.epoch}
	case cur.sum != sum:
		d.last++
		cur = dirVersion{sum: sum, v: d.last}
	default:
		return cur.v
	}
	d.byIno[ino] = cur
	return cur.v
}

// current is the version of ino without a new listing.
func (d *dirVersions) current(ino uint64) int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if cur, ok := d.byIno[ino]; ok {
		return cur.v
	}
	return d.epoch
}

// negativeTimeout is how long the kernel may remember that a name is not
// in the directory at dir: as long as a name it has, where a catalog swap
// is what adds names (the swap tells the kernel of each name added).
func (sh *shared) negativeTimeout(dir string) time.Duration {
	if sh.noNotify || !sh.v.DirCacheable(dir) {
		return sh.negTimeout
	}
	return sh.entryTimeout
}

// Lookup makes a failed lookup one the kernel keeps. The kernel caches a
// name's absence only from an answer that succeeds with node ID 0 and an
// entry timeout; an ENOENT answer it forgets at once, whatever timeout it
// carries. go-fuse turns ENOENT into that answer only for lookups whose
// node set no timeout, and node.Lookup sets one (negativeTimeout), so that
// every failed lookup, .gitignore that rg asks for in every directory, went
// to the daemon every time.
func (r *rawFS) Lookup(cancel <-chan struct{}, header *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	st := r.RawFileSystem.Lookup(cancel, header, name, out)
	if st == fuse.ENOENT && out.EntryTimeout() > 0 {
		timeout := out.EntryTimeout()
		*out = fuse.EntryOut{}
		out.SetEntryTimeout(timeout)
		return fuse.OK
	}
	return st
}

// listStream is one directory listing as go-fuse streams it. Without
// OPENDIR every READDIR lists the directory anew (readDir), so a listing
// that takes two requests (a large directory, or the request for the end
// after the first page) may have changed between them, as a server's
// directory read does when an unlisted skill is refused. An offset past
// the end of the new listing is its end: go-fuse's own list stream answers
// EINVAL there, which `ls` showed as "reading directory: Invalid
// argument". Entries added or removed while a listing is read may be
// missed or repeated, as POSIX allows for readdir.
type listStream struct {
	entries []fuse.DirEntry
	next    int
	sum     uint64 // listingSum of the entries
}

var (
	_ gofs.DirStream        = (*listStream)(nil)
	_ gofs.FileReaddirenter = (*listStream)(nil)
	_ gofs.FileSeekdirer    = (*listStream)(nil)
	_ gofs.FileReleasedirer = (*listStream)(nil)
)

func (s *listStream) HasNext() bool { return s.next < len(s.entries) }

func (s *listStream) Next() (fuse.DirEntry, syscall.Errno) {
	e := s.entries[s.next]
	s.next++
	e.Off = uint64(s.next)
	return e, 0
}

func (s *listStream) Seekdir(_ context.Context, off uint64) syscall.Errno {
	s.next = int(min(off, uint64(len(s.entries))))
	return 0
}

func (s *listStream) Close() {}

// Readdirent and Releasedir make the stream the handle OpendirHandle
// returns.
func (s *listStream) Readdirent(context.Context) (*fuse.DirEntry, syscall.Errno) {
	if !s.HasNext() {
		return nil, 0
	}
	e, errno := s.Next()
	return &e, errno
}

func (s *listStream) Releasedir(context.Context, uint32) {}

// relistStream is the listing of a directory listed anew on every open (a
// server's directory reads, .skillfs's generated folders). Its READDIRPLUS
// entries carry no attributes: go-fuse asks the handle's Lookup for each
// entry, and where that fails it leaves the entry's node ID 0, which the
// kernel takes as "no attributes given" (not as the name's absence) and
// leaves the entry's dentry and inode as they were. With attributes, the
// kernel refreshed each entry's inode and forgot the POSIX ACLs it kept of
// it, so every warm `ls -lR` asked again for the ACLs of each skill folder
// under such a directory, two requests a folder (issue 21). A name the
// kernel has no entry for is looked up when it is needed, as after a plain
// READDIR.
type relistStream struct{ listStream }

var _ gofs.FileLookuper = (*relistStream)(nil)

func (s *relistStream) Lookup(context.Context, string, *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.ENOENT
}
