package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/skillfs/skillfs/internal/testkit"
)

// doc is a document large enough that a torn or interleaved write shows:
// its counter repeated in padding that must match.
type doc struct {
	N   int    `json:"n"`
	Pad string `json:"pad"`
}

func encodeDoc(n int) []byte {
	b, _ := json.Marshal(doc{N: n, Pad: strings.Repeat(fmt.Sprintf("%08d", n), 8<<10)})
	return b
}

// readDoc reads the document at p; a missing file is n = -1.
func readDoc(p string) (int, error) {
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return -1, nil
	}
	if err != nil {
		return 0, err
	}
	var d doc
	if err := json.Unmarshal(b, &d); err != nil {
		return 0, fmt.Errorf("%d bytes on disk are not a whole document: %v", len(b), err)
	}
	if !bytes.Equal(b, encodeDoc(d.N)) {
		return 0, fmt.Errorf("the document for %d is not the one written", d.N)
	}
	return d.N, nil
}

// TestSaverStopIsSerializedWithTimerWrites hammers a Saver with changes
// whose timer writes land all the time, and stops it in the middle of
// them: every read of the file sees a whole document, after Stop the file
// holds the final state and no temporary file is left, and nothing is
// written after Stop.
func TestSaverStopIsSerializedWithTimerWrites(t *testing.T) {
	s, _ := openStore(t, Options{})
	o := mustOrigin(t, s, "acme-1")
	p := filepath.Join(o.Dir(), "flags.json")

	var mu sync.Mutex
	n, stopping := 0, false
	encodes := 0
	sv := o.NewSaver(FlagsSidecar, SaverOptions{
		Delay: time.Microsecond,
		Encode: func() ([]byte, error) {
			mu.Lock()
			encodes++
			b := encodeDoc(n)
			mu.Unlock()
			// A write under way takes a while, as on a busy disk:
			// long enough for Stop to come in the middle of one.
			time.Sleep(time.Millisecond)
			return b, nil
		},
		Logger: newRecorder(t).Logger(),
	})

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				mu.Lock()
				if stopping {
					mu.Unlock()
					return
				}
				n++
				// Under mu, so that every change made before Stop
				// has asked for its write before Stop runs.
				sv.Soon()
				mu.Unlock()
			}
		})
	}
	// The reader goes on through Stop, until Stop has returned.
	readerDone := make(chan struct{})
	var stopped atomic.Bool
	var readErr error
	var reads atomic.Int64
	go func() {
		defer close(readerDone)
		for !stopped.Load() {
			if _, err := readDoc(p); err != nil {
				readErr = err
				return
			}
			reads.Add(1)
		}
	}()
	// Stop once many timer writes have landed and been read.
	deadline := time.Now().Add(time.Minute)
	for {
		mu.Lock()
		e := encodes
		mu.Unlock()
		if e >= 20 && reads.Load() >= 20 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	stopping = true
	final := n
	mu.Unlock()
	sv.Stop()
	stopped.Store(true)
	wg.Wait()
	<-readerDone

	if readErr != nil {
		t.Fatalf("a reader saw a broken file while writes ran: %v", readErr)
	}
	if got, err := readDoc(p); err != nil || got != final {
		t.Fatalf("after Stop the file holds %d (%v), want the final state %d", got, err, final)
	}
	if tmp := tempFiles(t, o); len(tmp) != 0 {
		t.Errorf("temporary files left after Stop: %v", tmp)
	}
	t.Logf("%d changes, %d encodes, %d reads", final, encodes, reads.Load())

	// After Stop nothing is written: not a change's timer, not a Write.
	mu.Lock()
	n++
	mu.Unlock()
	sv.Soon()
	if err := sv.Write(encodeDoc(-7)); !errors.Is(err, ErrStopped) {
		t.Errorf("Write after Stop: %v, want ErrStopped", err)
	}
	time.Sleep(20 * time.Millisecond) // many Delays: a stray timer would have written
	if got, err := readDoc(p); err != nil || got != final {
		t.Errorf("after a change following Stop the file holds %d (%v), want %d", got, err, final)
	}
}

// TestSaverStopWaitsForTheWriteUnderWay: Stop in the middle of a timer
// write does not return before that write is on disk, and the file then
// holds the state at Stop, not the older state the timer was writing
// (issue 18: a shutdown flush not serialized with flagBook's timer save).
func TestSaverStopWaitsForTheWriteUnderWay(t *testing.T) {
	s, _ := openStore(t, Options{})
	o := mustOrigin(t, s, "acme-1")
	p := filepath.Join(o.Dir(), "flags.json")
	var mu sync.Mutex
	state, calls := 1, 0
	entered, release := make(chan struct{}), make(chan struct{})
	sv := o.NewSaver(FlagsSidecar, SaverOptions{
		Delay: time.Microsecond,
		Encode: func() ([]byte, error) {
			mu.Lock()
			calls++
			first := calls == 1
			b := encodeDoc(state)
			mu.Unlock()
			if first {
				close(entered)
				<-release
			}
			return b, nil
		},
	})
	sv.Soon()
	<-entered // the timer write of state 1 is under way
	mu.Lock()
	state = 2
	mu.Unlock()
	sv.Soon()
	stopDone := make(chan struct{})
	go func() {
		sv.Stop()
		close(stopDone)
	}()
	select {
	case <-stopDone:
		t.Error("Stop returned while a write was under way")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	<-stopDone
	if got, err := readDoc(p); err != nil || got != 2 {
		t.Errorf("after Stop the file holds %d (%v), want the state at Stop, 2", got, err)
	}
	if tmp := tempFiles(t, o); len(tmp) != 0 {
		t.Errorf("temporary files left after Stop: %v", tmp)
	}
}

// TestSaverStopWithNothingDueWritesNothing: Stop with no change asked for
// does not encode or create the file; nor after a Write.
func TestSaverStopWithNothingDueWritesNothing(t *testing.T) {
	s, _ := openStore(t, Options{})
	o := mustOrigin(t, s, "acme-1")
	p := filepath.Join(o.Dir(), "times.bin")
	never := func() ([]byte, error) {
		t.Error("Encode called with nothing due")
		return []byte("x"), nil
	}
	sv := o.NewSaver(TimesSidecar, SaverOptions{Delay: time.Hour, Encode: never})
	sv.Stop()
	if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Stop with nothing due left a file: %v", err)
	}

	sv = o.NewSaver(TimesSidecar, SaverOptions{Delay: time.Hour, Encode: never})
	if err := sv.Write([]byte("written")); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Lstat(p)
	sv.Stop()
	after, err := os.Lstat(p)
	if err != nil || !os.SameFile(before, after) {
		t.Errorf("Stop after a Write replaced the file: %v", err)
	}
	if tmp := tempFiles(t, o); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

// TestSaverFailureIsReportedAndKept: a timer write into a read-only
// origin directory fails; the failure is logged to the caller's logger
// with the origin and the reason, the state stays due, and Stop writes it
// once the directory can be written again.
func TestSaverFailureIsReportedAndKept(t *testing.T) {
	s, _ := openStore(t, Options{})
	o := mustOrigin(t, s, "acme-1")
	p := filepath.Join(o.Dir(), "flags.json")
	rec := newRecorder(t)
	var mu sync.Mutex
	state, tries := 41, 0
	sv := o.NewSaver(FlagsSidecar, SaverOptions{
		Delay: time.Millisecond,
		Encode: func() ([]byte, error) {
			mu.Lock()
			defer mu.Unlock()
			tries++
			return encodeDoc(state), nil
		},
		Logger:  rec.Logger(),
		Message: "content flags not saved",
	})
	writable := readOnlyDir(t, o.Dir())

	mu.Lock()
	state = 42
	mu.Unlock()
	sv.Soon()
	var warns []testkit.Record
	deadline := time.Now().Add(time.Minute)
	for len(warns) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
		warns = rec.TakeWarnings()
	}
	if len(warns) != 1 {
		t.Fatalf("got %d warnings for the failed write, want 1: %v", len(warns), warns)
	}
	w := warns[0]
	if w.Msg != "content flags not saved" || w.Attrs["origin"] != "acme-1" || !strings.Contains(w.Attrs["err"], "save flags of acme-1") {
		t.Errorf("the warning is %q %v; want the caller's message, the origin and the error", w.Msg, w.Attrs)
	}
	if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a file appeared in the read-only directory: %v", err)
	}

	writable()
	sv.Stop()
	if got, err := readDoc(p); err != nil || got != 42 {
		t.Errorf("Stop after the failure wrote %d (%v), want the state kept in memory, 42", got, err)
	}
	mu.Lock()
	if tries != 2 {
		t.Errorf("Encode called %d times, want 2 (the failed write and Stop)", tries)
	}
	mu.Unlock()
}

// readOnlyDir makes dir refuse new files, even to root (an immutable
// directory), and returns what makes it writable again (also run at
// cleanup).
func readOnlyDir(t *testing.T, dir string) (writable func()) {
	t.Helper()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	immutable := false
	if os.Getuid() == 0 {
		if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
			os.Chmod(dir, 0o700)
			t.Skipf("as root a directory is read-only only when immutable, and chattr +i failed: %v %s", err, out)
		}
		immutable = true
	}
	var once sync.Once
	writable = func() {
		once.Do(func() {
			if immutable {
				if out, err := exec.Command("chattr", "-i", dir).CombinedOutput(); err != nil {
					t.Errorf("chattr -i %s: %v %s", dir, err, out)
				}
			}
			os.Chmod(dir, 0o700)
		})
	}
	t.Cleanup(writable)
	probe := filepath.Join(dir, "probe")
	if f, err := os.Create(probe); err == nil {
		f.Close()
		os.Remove(probe)
		writable()
		t.Skip("the directory still takes new files")
	}
	return writable
}

// TestSaverSaveWritesTheStateWhenItsTurnComes: of two Saves asked for
// while a write is under way, the file ends with the newer state, because
// each encodes when its turn to write comes.
func TestSaverSaveWritesTheStateWhenItsTurnComes(t *testing.T) {
	s, _ := openStore(t, Options{})
	o := mustOrigin(t, s, "acme-1")
	p := filepath.Join(o.Dir(), "catalog.json")
	var mu sync.Mutex
	state, calls := 1, 0
	entered, release := make(chan struct{}), make(chan struct{})
	sv := o.NewSaver(CatalogSidecar, SaverOptions{
		Encode: func() ([]byte, error) {
			mu.Lock()
			calls++
			first := calls == 1
			b := encodeDoc(state)
			mu.Unlock()
			if first {
				close(entered)
				<-release
			}
			return b, nil
		},
	})
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := sv.Save(); err != nil {
			t.Error(err)
		}
	})
	<-entered
	mu.Lock()
	state = 2
	mu.Unlock()
	wg.Go(func() {
		if err := sv.Save(); err != nil {
			t.Error(err)
		}
	})
	close(release)
	wg.Wait()
	if got, err := readDoc(p); err != nil || got != 2 {
		t.Errorf("the file holds %d (%v), want the newer state, 2", got, err)
	}
}

// TestSaverSkipsWhatTheFileHolds: a document equal to the last written
// (or Seen) is not written again, and for the catalog that counts as
// saved: a refusal in between is no longer reported once the catalog on
// disk is the one held again.
func TestSaverSkipsWhatTheFileHolds(t *testing.T) {
	s, _ := openStore(t, Options{MaxCatalogSize: 100})
	o := mustOrigin(t, s, "acme-1")
	p := filepath.Join(o.Dir(), "catalog.json")
	sv := o.NewSaver(CatalogSidecar, SaverOptions{})
	a := []byte("catalog a")
	if err := sv.Write(a); err != nil {
		t.Fatal(err)
	}
	first, _ := os.Lstat(p)
	if err := sv.Write(bytes.Repeat([]byte("b"), 101)); !errors.Is(err, ErrTooLarge) || o.CatalogUnsaved() == "" {
		t.Fatalf("over the cap: %v, unsaved %q", err, o.CatalogUnsaved())
	}
	if err := sv.Write(a); err != nil || o.CatalogUnsaved() != "" {
		t.Errorf("the held catalog again: %v, unsaved %q; want saved", err, o.CatalogUnsaved())
	}
	if again, err := os.Lstat(p); err != nil || !os.SameFile(first, again) {
		t.Errorf("the same catalog was written again (%v)", err)
	}

	loaded, err := o.Load(CatalogSidecar)
	if err != nil {
		t.Fatal(err)
	}
	next := o.NewSaver(CatalogSidecar, SaverOptions{Encode: func() ([]byte, error) { return a, nil }})
	next.Seen(loaded)
	if err := next.Save(); err != nil {
		t.Fatal(err)
	}
	if again, err := os.Lstat(p); err != nil || !os.SameFile(first, again) {
		t.Errorf("a catalog equal to the one loaded was written again (%v)", err)
	}
}
