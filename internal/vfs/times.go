package vfs

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/internal/store"
	"github.com/skillfs/skillfs/resolver"
)

// A timeBook remembers, for one origin, when this host first held an entry
// naming each digest: a file's mtime (see tree.stamp). It is kept in the
// store (times.bin), so that a remount, a restart of the server or a
// re-list shows the same times as long as the content is the same, and
// make or rsync find nothing to redo. Times are whole seconds.
//
// The book holds the digests of the catalog in force and nothing else
// (track): a digest that leaves the catalog is forgotten, so that content
// that comes back later — an edit undone — gets the time it came back
// rather than an older one, which would let make think a target built in
// between was up to date.
type timeBook struct {
	store *store.Bucket
	saver *store.Saver // nil without a store: nothing is saved
	log   *slog.Logger

	loadOnce sync.Once

	mu      sync.Mutex
	first   firstTimes    // digest → unix seconds
	pending chan struct{} // closed when the track under way is done (trackAsync)
}

func newTimeBook(st *store.Bucket, log *slog.Logger) *timeBook {
	b := &timeBook{store: st, log: log}
	if st != nil {
		b.saver = st.NewSaver(store.TimesSidecar, store.SaverOptions{
			Delay: saveDelay, Encode: b.encode, Logger: log,
			Message: "file times not saved; the next mount shows new times for new content only",
		})
	}
	return b
}

// track makes the book hold exactly the digests cat names, keeping the
// time of those it held and giving the others now, and schedules a save
// when that changed anything. The first call loads the saved book.
func (b *timeBook) track(cat *resolver.Catalog, now time.Time) {
	b.loadOnce.Do(b.load)
	sec := now.Unix()
	files := 0
	for _, s := range cat.Skills {
		files += len(s.Files)
	}
	next := make(firstTimes, 0, files)
	for _, s := range cat.Skills {
		for i := range s.Files {
			if sum, err := skill.ParseDigest(s.Files[i].Resource.Digest); err == nil {
				next = append(next, timeRecord{sum: sum})
			}
		}
	}
	next = next.sorted()
	b.mu.Lock()
	added := false
	for i := range next {
		t, ok := b.first.get(next[i].sum)
		if !ok {
			t, added = sec, true
		}
		next[i].t = t
	}
	changed := added || len(next) != len(b.first)
	b.first = next
	b.mu.Unlock()
	if changed && b.saver != nil {
		b.saver.Soon()
	}
}

// trackAsync is track on another goroutine, for a catalog whose tree is
// being built: a snapshot taken before it is done waits for it.
func (b *timeBook) trackAsync(cat *resolver.Catalog, now time.Time) {
	done := make(chan struct{})
	b.mu.Lock()
	prev := b.pending
	b.pending = done
	b.mu.Unlock()
	go func() {
		defer close(done)
		if prev != nil {
			<-prev
		}
		b.track(cat, now)
	}()
}

// firstTimes is the book's digest → time map at one moment, as records
// sorted by digest (40 bytes a file, against a map's 60–80); track
// replaces it rather than change it, so a snapshot can be read without
// the lock.
type firstTimes []timeRecord

type timeRecord struct {
	sum [sha256.Size]byte
	t   int64 // unix seconds
}

func byDigest(a, b *timeRecord) int {
	switch {
	case digestLess(&a.sum, &b.sum):
		return -1
	case a.sum == b.sum:
		return 0
	}
	return 1
}

// sorted sorts m by digest in place and keeps the first record of each
// digest, copied out when that left much spare room (files that share
// content).
func (m firstTimes) sorted() firstTimes {
	slices.SortStableFunc(m, func(a, b timeRecord) int { return byDigest(&a, &b) })
	m = slices.CompactFunc(m, func(a, b timeRecord) bool { return a.sum == b.sum })
	if cap(m)-len(m) > len(m)/8 {
		return slices.Clone(m)
	}
	return m
}

// get finds sum's record by a binary search that compares digests a word
// at a time.
func (m firstTimes) get(sum [sha256.Size]byte) (int64, bool) {
	lo, hi := 0, len(m)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if digestLess(&m[mid].sum, &sum) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(m) && m[lo].sum == sum {
		return m[lo].t, true
	}
	return 0, false
}

// digestLess orders digests as bytes.Compare does.
func digestLess(a, b *[sha256.Size]byte) bool {
	for i := 0; i < sha256.Size; i += 8 {
		x, y := binary.BigEndian.Uint64(a[i:]), binary.BigEndian.Uint64(b[i:])
		if x != y {
			return x < y
		}
	}
	return false
}

// snapshot returns the book's current records; a nil book holds nothing.
func (b *timeBook) snapshot() firstTimes {
	if b == nil {
		return nil
	}
	b.loadOnce.Do(b.load)
	b.mu.Lock()
	pending := b.pending
	b.mu.Unlock()
	if pending != nil {
		<-pending
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.first
}

func (m firstTimes) at(d skill.Digest) (time.Time, bool) {
	if len(m) == 0 || d == "" {
		return time.Time{}, false
	}
	sum, err := skill.ParseDigest(d)
	if err != nil {
		return time.Time{}, false
	}
	t, ok := m.get(sum)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(t, 0), true
}

// flush writes the book when it changed since it was last written, as
// the timer of a change does.
func (b *timeBook) flush() {
	if b.saver != nil {
		b.saver.Flush()
	}
}

// stop is the final flush, when the origin's supervisor has ended: it
// writes the book, after a save under way, and no save is written after it
// (see store.Saver).
func (b *timeBook) stop() {
	if b.saver != nil {
		b.saver.Stop()
	}
}

// encode is times.bin of the book as it is now.
func (b *timeBook) encode() ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return encodeTimes(b.first), nil
}

// load brings back the times of earlier runs. A book that cannot be read
// is logged and ignored: files then get the time of this run, as on a
// first mount.
func (b *timeBook) load() {
	data, err := b.store.Load(store.TimesSidecar)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			b.log.Warn("loading file times; files get this run's times", "op", "load", "err", err)
		}
		return
	}
	m, err := decodeTimes(data)
	if err != nil {
		b.log.Warn("ignoring unreadable file times; files get this run's times", "op", "load", "path", b.store.Dir(), "err", err)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	// What the book already holds wins over what was saved.
	b.first = append(slices.Clip(b.first), m...).sorted()
}

// times.bin is a header (timesMagic) followed by one record per digest,
// sorted by digest: the 32 bytes of the sha256 and the time in unix
// seconds as a big-endian int64. 40 bytes a file, half what hex in JSON
// would take, and it reads back without a parser.
var timesMagic = []byte("skillfs-times-1\n")

const timesRecord = sha256.Size + 8

func encodeTimes(m firstTimes) []byte {
	out := make([]byte, 0, len(timesMagic)+len(m)*timesRecord)
	out = append(out, timesMagic...)
	for _, r := range m {
		out = append(out, r.sum[:]...)
		out = binary.BigEndian.AppendUint64(out, uint64(r.t))
	}
	return out
}

// decodeTimes reads times.bin. It refuses a file of another format or a
// torn one whole; a record with a time before 1970 is skipped, and of
// records for one digest the first is kept.
func decodeTimes(b []byte) (firstTimes, error) {
	if !bytes.HasPrefix(b, timesMagic) {
		return nil, errors.New("not a skillfs times file of this version")
	}
	b = b[len(timesMagic):]
	if len(b)%timesRecord != 0 {
		return nil, fmt.Errorf("%d bytes of records is not a whole number of %d-byte records", len(b), timesRecord)
	}
	m := make(firstTimes, 0, len(b)/timesRecord)
	for ; len(b) > 0; b = b[timesRecord:] {
		r := timeRecord{t: int64(binary.BigEndian.Uint64(b[sha256.Size:]))}
		copy(r.sum[:], b)
		if r.t > 0 {
			m = append(m, r)
		}
	}
	return m.sorted(), nil
}
