package skillserver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/internal/testkit"
)

// until waits for list_changed notifications until what skills/list says
// satisfies ok; the bound only keeps a broken server from hanging the test.
func until(t *testing.T, cs *mcp.ClientSession, changed chan struct{}, what string, ok func(map[string][]string) bool) {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("no list_changed leading to %s", what)
		}
		l, err := mcp.CallCustomMethod[*listSkillsParams, *listSkillsResult](t.Context(), cs, skill.MethodList, &listSkillsParams{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][]string{}
		for _, e := range l.Skills {
			for _, r := range e.Resources {
				got[e.URI] = append(got[e.URI], r.URI)
			}
		}
		if ok(got) {
			return
		}
	}
}

// Watching, with polling ruled out: a skill written under folders that did
// not exist is published, a folder made inside it is watched too, and its
// removal is noticed.
func TestWatchFollowsNewFolders(t *testing.T) {
	t.Parallel()
	dir := tree(t, map[string]string{"s/SKILL.md": skillMD("s", "")})
	s, err := New(dir, Options{Logger: testLogger(t), PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	s.watcher.safetyPoll = time.Hour
	cs, changed := session(t, s, "2025-11-25")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Watch(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	deep := filepath.Join(dir, "a", "b", "c")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	writeWhole(t, filepath.Join(deep, "SKILL.md"), skillMD("c", ""))
	until(t, cs, changed, "skill://a/b/c", func(got map[string][]string) bool {
		return got["skill://a/b/c/SKILL.md"] != nil
	})

	os.MkdirAll(filepath.Join(deep, "refs", "more"), 0o755)
	os.WriteFile(filepath.Join(deep, "refs", "more", "x.md"), []byte("x"), 0o644)
	until(t, cs, changed, "refs/more/x.md in skill c", func(got map[string][]string) bool {
		return slices.Contains(got["skill://a/b/c/SKILL.md"], "skill://a/b/c/refs/more/x.md")
	})

	if err := os.RemoveAll(filepath.Join(dir, "a")); err != nil {
		t.Fatal(err)
	}
	until(t, cs, changed, "skill c gone", func(got map[string][]string) bool {
		return got["skill://a/b/c/SKILL.md"] == nil && got["skill://s/SKILL.md"] != nil
	})

	// A folder of the same name made again is watched afresh.
	os.MkdirAll(filepath.Join(dir, "a", "b", "c"), 0o755)
	writeWhole(t, filepath.Join(deep, "SKILL.md"), skillMD("c", ""))
	until(t, cs, changed, "skill c back", func(got map[string][]string) bool {
		return got["skill://a/b/c/SKILL.md"] != nil
	})
}

// writeWhole writes a file the way an editor that saves atomically does
// (a temporary file renamed into place), so that the watcher never finds
// it half written: os.WriteFile's create-then-write let a rescan under load
// see an empty SKILL.md and warn about it, which is not what these tests
// are about.
func writeWhole(t *testing.T, path, content string) {
	t.Helper()
	tmp := filepath.Join(t.TempDir(), filepath.Base(path)) // outside the served folder
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// When no watcher can be had, Watch says why once and polls; with NoWatch
// it polls without a word.
func TestWatchFallsBackToPolling(t *testing.T) {
	for _, tc := range []struct {
		name    string
		noWatch bool
		want    []string
	}{
		{"no watcher", false, []string{"cannot watch DIR for changes; polling instead op=watch path=DIR err=no inotify here"}},
		{"NoWatch", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tree(t, map[string]string{"s/SKILL.md": skillMD("s", "")})
			log := testkit.NewLog(nil)
			s, err := New(dir, Options{Logger: log.Logger(), PollInterval: 20 * time.Millisecond, NoWatch: tc.noWatch})
			if err != nil {
				t.Fatal(err)
			}
			s.watcher.newWatcher = func() (*fsnotify.Watcher, error) {
				if tc.noWatch {
					t.Error("NoWatch asked for a watcher")
				}
				return nil, errors.New("no inotify here")
			}
			s.watcher.safetyPoll = time.Hour
			cs, changed := session(t, s, "2025-11-25")
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { s.Watch(ctx); close(done) }()
			t.Cleanup(func() { cancel(); <-done })

			// The skill comes and goes whole (a directory renamed in and
			// out): a poll between a create and its write would see, and
			// rightly log, a SKILL.md with no frontmatter yet.
			staging := t.TempDir()
			os.MkdirAll(filepath.Join(staging, "t", "refs"), 0o755)
			os.WriteFile(filepath.Join(staging, "t", "SKILL.md"), []byte(skillMD("t", "")), 0o644)
			if err := os.Rename(filepath.Join(staging, "t"), filepath.Join(dir, "t")); err != nil {
				t.Fatal(err)
			}
			until(t, cs, changed, "skill t", func(got map[string][]string) bool {
				return got["skill://t/SKILL.md"] != nil
			})
			if err := os.Rename(filepath.Join(dir, "t"), filepath.Join(staging, "gone")); err != nil {
				t.Fatal(err)
			}
			until(t, cs, changed, "skill t gone", func(got map[string][]string) bool {
				return got["skill://t/SKILL.md"] == nil
			})
			var got []string
			for _, r := range log.TakeWarnings() {
				m := strings.ReplaceAll(r.String(), dir, "DIR")
				// A poll that listed t just before it was renamed away
				// finds it gone: a true report, about the scan, not
				// the watch.
				if strings.HasPrefix(m, "skipped path=DIR/t") && strings.HasSuffix(m, "no such file or directory") {
					continue
				}
				got = append(got, m)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("logged %q, want %q", got, tc.want)
			}
		})
	}
}
