package vfs

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/skillfs/skillfs/internal/config"
	"github.com/skillfs/skillfs/internal/store"
)

// The final flush of the content flags (stop, when the origin's supervisor
// ends) returns only once a save that saveSoon's timer started is written:
// the daemon exits right after it, and a write still in flight would be
// cut off, leaving no flags.json and a temporary file. After it, no save is
// written: a new session of the same origin may own the store by then.
func TestFlagSaveEndsByStop(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	log := newWarnLog()
	for i := range 20 {
		oc := config.Origin{Label: fmt.Sprintf("o%d", i), Kind: config.Stdio, Command: "srv", Limits: config.DefaultLimits()}
		bucket, err := st.Bucket(oc.ID())
		if err != nil {
			t.Fatal(err)
		}
		b := newFlagBook(bucket, slog.New(log))
		b.note("k", []string{"html-comment"})
		tr := &tree{}
		b.saveSoon(tr)
		// The timer fires: its save takes the tree and writes.
		timer := make(chan struct{})
		go func() {
			defer close(timer)
			b.flush()
		}()
		// Stop comes while the timer's write may be under way (store's
		// TestSaverStopWaitsForTheWriteUnderWay holds it there).
		runtime.Gosched()
		b.stop()
		// What the process leaves when it exits now.
		data, err := os.ReadFile(filepath.Join(bucket.Dir(), "flags.json"))
		if err != nil || string(data) != "{}" {
			t.Fatalf("flags.json right after stop: %q, %v; want the save the timer started, written", data, err)
		}
		ents, err := os.ReadDir(bucket.Dir())
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".tmp-") {
				t.Fatalf("right after stop, %s holds %s: a write still in flight", bucket.Dir(), e.Name())
			}
		}
		<-timer
		before, err := os.Stat(filepath.Join(bucket.Dir(), "flags.json"))
		if err != nil {
			t.Fatal(err)
		}
		// A read that finds flags after stop, and its timer firing.
		b.note("k2", []string{"html-comment"})
		b.saveSoon(tr)
		b.flush()
		after, err := os.Stat(filepath.Join(bucket.Dir(), "flags.json"))
		if err != nil || !os.SameFile(before, after) {
			t.Fatalf("flags.json was written again after stop (%v)", err)
		}
	}
	for _, w := range log.take() {
		t.Errorf("unexpected warning: %s", w)
	}
}
