//go:build linux

package main

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"
)

var e2e = flag.Bool("e2e", false, "run the whole benchmark on tiny trees (needs FUSE; builds skillfs)")

// TestEndToEnd runs the real pipeline, small: it checks that every
// measurement produces a figure, that the mount served the right bytes, and
// that nothing is left mounted. Opt-in, because it mounts.
func TestEndToEnd(t *testing.T) {
	if !*e2e {
		t.Skip("opt-in: go test ./bench -run EndToEnd -e2e")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no FUSE here: %v", err)
	}
	work := t.TempDir()
	var log strings.Builder
	rep, err := run(context.Background(), options{
		Sizes: []int{12}, Reps: 2, StdioSize: 12, Idle: time.Second, Seed: 1, WorkDir: work, Shm: "/dev/shm", Walkers: []int{1, 2},
		Spec: func(n int) Spec {
			return Spec{Skills: n, Seed: 1, LargePairs: 3, LargeMin: 200 << 10, LargeMax: 300 << 10}
		},
		Logger: slog.New(slog.NewTextHandler(&log, nil)),
	})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	t.Log("\n" + rep.Markdown())
	if len(rep.Notes) > 0 {
		t.Errorf("notes: %q", rep.Notes)
	}
	seen := map[string]int{}
	parallel := 0
	for _, r := range rep.Rows {
		seen[r.Transport]++
		if strings.HasSuffix(r.What, ", 2 walkers at once") {
			parallel++
		}
		if r.Err != "" {
			t.Errorf("%s/%s: %s", r.Transport, r.What, r.Err)
		}
		if r.Kind == KindCount && r.Value != 1 {
			t.Errorf("%s/%s: %v requests", r.Transport, r.What, r.Value)
		}
		if r.Skip != "" {
			t.Logf("%s/%s: skipped: %s", r.Transport, r.What, r.Skip)
			continue
		}
		if r.Baseline != "" && r.Base <= 0 {
			t.Errorf("%s/%s: no baseline figure", r.Transport, r.What)
		}
	}
	// http: live, 2 RSS, 2 cold, 2 concurrent, approve, 2 idle CPU, 8
	// readers (Python against tmpfs and the loopback, Node, rg, and two
	// round trips against both), then at each of the 2 parallelisms 3 warm
	// operations and 16 walks (7 tools, 2 ways, and ls -lR both ways over
	// a mount with --xattrs off); stdio live, 2 RSS, 2 cold, 2 concurrent.
	if seen["http"] != 18+2*19 || seen["stdio"] != 7 || parallel != 19 {
		t.Errorf("rows per transport: %v, %d of them at 2 walkers", seen, parallel)
	}
	if m := mountsUnder(work); len(m) > 0 {
		t.Errorf("left mounted: %v", m)
	}
	if ents, _ := os.ReadDir(work); len(ents) > 0 {
		t.Errorf("left in the work directory: %v", ents)
	}
}
