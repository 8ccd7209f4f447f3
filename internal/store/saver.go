package store

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// A Sidecar is one of the files a bucket keeps beside its objects for
// package vfs: catalog.json, approvals.json, flags.json and times.bin.
// Each is replaced whole (see Saver), mode 0600, never followed through a
// symlink, and refused over its cap.
type Sidecar struct {
	name string // in the origin directory
	what string // in errors: "save flags of acme-1: …"
	// limit is the cap in bytes; 0 means Options.MaxCatalogSize.
	limit int64
	// durable files are fsynced, with their directory, before a save
	// returns: they are the only copy of what they hold.
	durable bool
}

var (
	// CatalogSidecar is catalog.json: what the origin offered, for a
	// restart with the server down. Durable; capped by
	// Options.MaxCatalogSize. A failed save is kept for CatalogUnsaved.
	CatalogSidecar = Sidecar{name: catalogName, what: "catalog", durable: true}
	// ApprovalsSidecar is approvals.json: durable, since it decides what
	// the mount shows.
	ApprovalsSidecar = Sidecar{name: approvalsName, what: "approvals", limit: MaxApprovalsSize, durable: true}
	// FlagsSidecar is flags.json: informational, not fsynced.
	FlagsSidecar = Sidecar{name: flagsName, what: "flags", limit: maxFlagsSize}
	// TimesSidecar is times.bin: informational, not fsynced.
	TimesSidecar = Sidecar{name: timesName, what: "times", limit: maxTimesSize}
)

// limitIn is the sidecar's cap in bytes in the store s.
func (f Sidecar) limitIn(s *Store) int64 {
	if f.limit == 0 {
		return s.opts.MaxCatalogSize
	}
	return f.limit
}

// ErrStopped is returned by a Saver's Write after its Stop.
var ErrStopped = errors.New("the session that saves it has ended")

// save atomically replaces the sidecar with data (see writeAtomic).
func (s *Saver) save(data []byte) error {
	err := s.saveSidecar(data)
	s.settled(err)
	if err == nil && (s.f.name == catalogName || s.f.name == approvalsName) {
		// What they name is held: they may now hold less.
		s.b.s.retryOverHeld()
	}
	return err
}

// settled records how the last save of the sidecar ended: err, or nil
// when the file holds what was to be saved.
func (s *Saver) settled(err error) {
	if s.f.name != catalogName {
		return
	}
	if err != nil {
		msg := err.Error()
		s.b.unsaved.Store(&msg)
	} else {
		s.b.unsaved.Store(nil)
	}
}

// saveSidecar writes data over the sidecar, within its cap.
func (s *Saver) saveSidecar(data []byte) error {
	o, f := s.b, s.f
	if o.removed.Load() {
		return fmt.Errorf("save %s of %s: %w", f.what, o.id, ErrRemoved)
	}
	limit := f.limitIn(o.s)
	if int64(len(data)) > limit {
		return fmt.Errorf("save %s of %s: %d bytes: %w (cap %d)", f.what, o.id, len(data), ErrTooLarge, limit)
	}
	if err := o.writeAtomic(f.name, data, 0o600, f.durable); err != nil {
		return fmt.Errorf("save %s of %s: %w", f.what, o.id, err)
	}
	return nil
}

// SaverOptions configure a Saver.
type SaverOptions struct {
	// Delay gathers the changes of a burst (a grep over thousands of
	// skills) into one write: Soon writes Delay after the first call.
	Delay time.Duration
	// Encode returns the document as the caller's state is now, for the
	// writes Soon schedules and Stop's final flush. It is called with no
	// lock of the Saver's held, one call at a time. Nil data writes
	// nothing.
	Encode func() ([]byte, error)
	// Logger reports the writes that fail with nobody to return an error
	// to (Soon's and Stop's), at Warn; nil discards them.
	Logger *slog.Logger
	// Message is the log message of such a failure: what the user loses.
	Message string
}

// A Saver keeps one sidecar of a bucket up to date with its caller's
// state. Every write of it goes through the Saver, one at a time, in the
// order they were asked for, and each replaces the file atomically: a
// temporary file in the origin directory (created O_EXCL, locked, mode
// 0600), fsynced with its directory when the sidecar is durable, renamed
// over the old one. A reader never sees a torn document.
//
// A caller whose change must be on disk before it answers calls Write
// with the document (an approval) or Save to have Encode's written (the
// catalog); one whose changes come in bursts (content flags, file times)
// calls Soon, and the Saver writes Encode's document once after the
// delay. A document equal to what the file holds is not written again. A Soon write that fails is logged and kept due: the next
// Soon or Stop tries again, so nothing the caller holds is lost to one
// failed write.
//
// Stop is the final flush, when the caller's session ends: it waits for a
// write under way, writes what Soon left due, and no write happens after
// it (a timer that fires later finds nothing to do, Write answers
// ErrStopped), so the process can exit, or a new session of the same
// origin take over its store, without a write in flight.
type Saver struct {
	b   *Bucket
	f   Sidecar
	opt SaverOptions

	// writeMu is held from taking a due write until it is on disk: writes
	// are in order, and Stop waits for one under way.
	writeMu sync.Mutex
	// held is the hash of what the file holds, as far as the Saver knows
	// (its last write, or Seen); a document equal to it is not written
	// again. writeMu guards it.
	held *[sha256.Size]byte

	mu      sync.Mutex
	timer   *time.Timer
	armed   bool // the timer is set to fire
	dirty   bool // Soon was called since the last successful Encode write
	stopped bool
}

// NewSaver returns a Saver of the sidecar f.
func (o *Bucket) NewSaver(f Sidecar, opt SaverOptions) *Saver {
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.Message == "" {
		opt.Message = "saving " + f.what
	}
	return &Saver{b: o, f: f, opt: opt}
}

// Write replaces the sidecar with data now, after a write under way, and
// returns its error. After Stop it writes nothing and returns an error
// that Is ErrStopped.
func (s *Saver) Write(data []byte) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	stopped := s.stopped
	s.mu.Unlock()
	if stopped {
		return fmt.Errorf("save %s of %s: %w", s.f.what, s.b.id, ErrStopped)
	}
	return s.writeLocked(data)
}

// Save writes Encode's document now, after a write under way, and returns
// the error: Write for a caller whose document must be of its state when
// the write's turn comes, so that of two saves asked for at once the one
// written last is of the newer state. After Stop it writes nothing and
// returns an error that Is ErrStopped.
func (s *Saver) Save() error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	stopped := s.stopped
	s.mu.Unlock()
	if stopped {
		return fmt.Errorf("save %s of %s: %w", s.f.what, s.b.id, ErrStopped)
	}
	data, err := s.opt.Encode()
	if err != nil || data == nil {
		return err
	}
	return s.writeLocked(data)
}

// Seen tells the Saver that the file holds data (the caller has just
// loaded it): a document equal to it is not written again.
func (s *Saver) Seen(data []byte) {
	sum := sha256.Sum256(data)
	s.writeMu.Lock()
	s.held = &sum
	s.writeMu.Unlock()
}

// writeLocked writes data unless the file already holds it; writeMu is
// held.
func (s *Saver) writeLocked(data []byte) error {
	sum := sha256.Sum256(data)
	if s.held != nil && *s.held == sum {
		s.settled(nil)
		return nil
	}
	if err := s.save(data); err != nil {
		return err
	}
	s.held = &sum
	return nil
}

// Soon writes Encode's document Delay from now, once for all the calls
// meanwhile. After Stop it does nothing.
func (s *Saver) Soon() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	s.dirty = true
	if s.armed {
		return
	}
	s.armed = true
	if s.timer == nil {
		s.timer = time.AfterFunc(s.opt.Delay, s.Flush)
	} else {
		s.timer.Reset(s.opt.Delay)
	}
}

// Flush writes now what Soon left due, after a write under way: the
// timer's write, for a caller that cannot wait for it.
func (s *Saver) Flush() {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	s.armed = false
	due := s.dirty && !s.stopped
	s.dirty = false
	s.mu.Unlock()
	if due {
		s.encodeAndWrite()
	}
}

// Stop is the final flush (see Saver).
func (s *Saver) Stop() {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	s.stopped = true
	if s.timer != nil {
		s.timer.Stop()
	}
	due := s.dirty
	s.dirty = false
	s.mu.Unlock()
	if due {
		s.encodeAndWrite()
	}
}

// encodeAndWrite writes Encode's document; writeMu is held. A failure is
// logged, and leaves the document due for the next Soon or Stop.
func (s *Saver) encodeAndWrite() {
	data, err := s.opt.Encode()
	if err == nil && data == nil {
		return
	}
	if err == nil {
		err = s.writeLocked(data)
	}
	if err == nil {
		return
	}
	if errors.Is(err, ErrRemoved) {
		return // skillfs cache rm: there is nowhere to keep it
	}
	s.mu.Lock()
	s.dirty = true
	s.mu.Unlock()
	s.opt.Logger.Warn(s.opt.Message, "origin", s.b.id, "op", "save", "path", s.b.dir, "err", err)
}
