package skillserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

const (
	// settle is how long Watch lets a burst of events run on before it
	// rescans: an editor's save or an unpacked archive is one rescan, not
	// hundreds.
	settle = 150 * time.Millisecond
	// safetyPoll is how often Watch rescans while watching, for what the
	// kernel does not report: changes made on another machine to a network
	// filesystem, a folder reached only through a symlink to a place the
	// watcher skipped. On 1,000 skills a rescan that finds nothing is a walk
	// of stats, so once a minute costs next to nothing.
	safetyPoll = time.Minute
)

// errFallBack is returned by the event loop when watching can no longer be
// trusted and polling must take over; the wrapped reason is logged once.
var errFallBack = errors.New("watching stopped")

// Watch keeps the catalog current until ctx ends, so that connected clients
// get notifications/resources/list_changed when DIR changes. It watches
// every folder below DIR with the system's file notifications (inotify,
// kqueue) and rescans once a burst of events has settled, plus once a
// minute for safety. When watching is impossible or fails later (no
// inotify, the watch limit reached, DIR removed) it logs the reason once
// and polls every PollInterval instead, as it does from the start with
// Options.NoWatch. With a negative PollInterval it returns at once.
func (s *Server) Watch(ctx context.Context) { s.watcher.run(ctx) }

// A watcher keeps a library current from DIR's changes; see Server.Watch.
type watcher struct {
	lib      *library
	log      *slog.Logger
	interval time.Duration // Options.PollInterval
	noWatch  bool          // Options.NoWatch

	// newWatcher and safetyPoll are fsnotify.NewWatcher and safetyPoll;
	// tests replace them to force the fallback or rule out polling.
	newWatcher func() (*fsnotify.Watcher, error)
	safetyPoll time.Duration
}

// run is Server.Watch.
func (w *watcher) run(ctx context.Context) {
	if w.interval < 0 {
		return
	}
	if !w.noWatch {
		err := w.watch(ctx)
		if ctx.Err() != nil {
			return
		}
		w.log.Warn("cannot watch DIR for changes; polling instead", "op", "watch", "path", w.lib.sc.dir, "err", err)
		// What happened between the failure and the first poll is caught
		// by a rescan now.
		w.rescan()
	}
	w.poll(ctx)
}

// poll rescans DIR every PollInterval until ctx ends. On a tree so large
// that a scan takes a noticeable share of the interval, it waits four
// times as long as the last scan took instead, so that polling never uses
// more than a fifth of a core.
func (w *watcher) poll(ctx context.Context) {
	wait := w.interval
	for {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		start := time.Now()
		w.rescan()
		wait = max(w.interval, 4*time.Since(start))
	}
}

func (w *watcher) rescan() {
	if err := w.lib.rescan(); err != nil {
		w.log.Warn("rescan failed", "op", "rescan", "path", w.lib.sc.dir, "err", err)
	}
}

// watch runs the event loop until ctx ends (nil) or watching fails (the
// reason).
func (w *watcher) watch(ctx context.Context) error {
	fw, err := w.newWatcher()
	if err != nil {
		return err
	}
	defer fw.Close()
	// Events are paths below the real DIR: the walk that adds watches
	// must not start on a symlink, which WalkDir would not enter.
	root := w.lib.sc.realRoot
	if err := addTree(fw, root); err != nil {
		return err
	}
	// A change made while the watches were being added is caught here.
	w.rescan()

	safety := time.NewTicker(w.safetyPoll)
	defer safety.Stop()
	var settled <-chan time.Time // non-nil while a rescan is pending
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fw.Events:
			if !ok {
				return fmt.Errorf("%w: event channel closed", errFallBack)
			}
			if ev.Name == root && ev.Has(fsnotify.Remove|fsnotify.Rename) {
				return fmt.Errorf("%w: %s was removed or renamed", errFallBack, w.lib.sc.dir)
			}
			if err := follow(fw, ev); err != nil {
				return err
			}
			if settled == nil {
				settled = time.After(settle)
			}
		case err, ok := <-fw.Errors:
			if !ok {
				return fmt.Errorf("%w: error channel closed", errFallBack)
			}
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				return fmt.Errorf("%w: %v", errFallBack, err)
			}
			// The kernel dropped events: what they said is unknown, so
			// rescan everything, which is what a rescan does anyway.
			if settled == nil {
				settled = time.After(settle)
			}
		case <-settled:
			settled = nil
			w.rescan()
		case <-safety.C:
			w.rescan()
		}
	}
}

// follow keeps the set of watched folders equal to the folders below DIR:
// a folder created (or moved in) is watched with everything below it, one
// removed or moved away is forgotten with everything below it.
func follow(w *fsnotify.Watcher, ev fsnotify.Event) error {
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		prefix := ev.Name + string(filepath.Separator)
		for _, p := range w.WatchList() {
			if p == ev.Name || strings.HasPrefix(p, prefix) {
				// The kernel may have dropped the watch already.
				_ = w.Remove(p)
			}
		}
	}
	if ev.Has(fsnotify.Create) {
		if err := addTree(w, ev.Name); err != nil {
			return err
		}
	}
	return nil
}

// addTree watches path and every folder below it. Symlinks are not
// followed: the scanner serves only symlinks that resolve inside DIR, whose
// targets are watched where they are. .git is skipped as the scanner skips
// it; a busy repository would otherwise rescan on every git command. A
// path that vanished or is not a folder is no error: its event still leads
// to a rescan.
func addTree(w *fsnotify.Watcher, path string) error {
	err := filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			// Gone since the event, or unreadable: the scanner reports an
			// unreadable folder as a problem, and the safety poll covers it.
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		if d.Name() == ".git" {
			return fs.SkipDir
		}
		if err := w.Add(p); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fs.SkipDir
			}
			return fmt.Errorf("%w: watch %s: %v", errFallBack, p, err)
		}
		return nil
	})
	return err
}
