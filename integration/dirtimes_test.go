//go:build linux

package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// dirTimesTree writes groups × per skills, each in a group folder above the
// skills (g00/s000/SKILL.md): `skillfs serve` declares directory reads, so
// the group folders are the directories a server's directory reads list.
func dirTimesTree(t *testing.T, dir string, groups, per int) {
	t.Helper()
	files := map[string]string{}
	for g := range groups {
		for s := range per {
			name := fmt.Sprintf("s%02d%03d", g, s)
			p := fmt.Sprintf("g%02d/%s/", g, name)
			files[p+"SKILL.md"] = skillMD(name, "Skill "+name, "Body of "+name+".\n")
			files[p+"notes.md"] = "notes of " + name + "\n"
		}
	}
	writeTree(t, dir, files)
}

// stats is `find . -printf '%T@ %C@ %s %p\n'` in dir, run as a user's
// shell would (a child process, whose working directory is dir): every
// path's mtime and ctime to the nanosecond and its size, sorted.
func stats(t *testing.T, dir string) []string {
	t.Helper()
	cmd := exec.Command("find", ".", "-printf", `%T@ %C@ %s %p\n`)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("find in %s: %v\n%s", dir, err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	slices.Sort(lines)
	return lines
}

// statsDiffer names the lines of a that b does not have (at most 10).
func statsDiffer(a, b []string) []string {
	var out []string
	for _, l := range a {
		if _, found := slices.BinarySearch(b, l); !found && len(out) < 10 {
			out = append(out, l)
		}
	}
	return out
}

// tarNull is `tar cf /dev/null .` in dir: GNU tar checks each directory's
// and file's times and size before and after it reads it, and exits 1
// with "file changed as we read it" when they moved.
func tarNull(dir string) (string, error) {
	cmd := exec.Command("tar", "cf", "/dev/null", ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// needRsync returns rsync's path, or skips the test saying why (test.sh
// installs it when it can).
func needRsync(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("rsync")
	if err != nil {
		t.Skip("rsync is not installed (apt-get install rsync); test.sh installs it when run as root")
	}
	return p
}

// TestWarmWalksSeeNoDirectoryChange: over HTTP, with 240 skills in
// folders above the skills that the server's directory reads list, a warm
// walk changes no size, mtime or ctime (issue 38: each listing gave those
// folders an mtime a nanosecond later, and tar on 16 cores exited 1, "file
// changed as we read it"): `tar cf /dev/null .` exits 0, a second `rsync
// -a` transfers and itemizes nothing, `find -newer` a marker as new as the
// newest time finds nothing, and 16 walkers at once (tar, then find) see
// the stats of before. A folder whose listing does change still shows it,
// in ls and in its times.
func TestWarmWalksSeeNoDirectoryChange(t *testing.T) {
	t.Parallel()
	rsync := needRsync(t)
	dir := t.TempDir()
	dirTimesTree(t, dir, 8, 30)
	srv := serveHTTP(t, dir, "--poll", "200ms")
	m := startMount(t, writeConfig(t, map[string]any{"web": map[string]any{"type": "http", "url": srv.URL}}, nil))
	root := m.Path("web")

	// Warm: every listing, entry and page, twice.
	for range 2 {
		if out, err := tarNull(root); err != nil {
			t.Fatalf("warm tar: %v\n%s", err, out)
		}
	}
	before := stats(t, root)
	if len(before) < 8*30*3 {
		t.Fatalf("find saw %d paths, want every skill folder and file:\n%s", len(before), strings.Join(before[:min(len(before), 20)], "\n"))
	}

	// tar, again and again: each listing of a folder above the skills is
	// a listing its times must survive.
	for i := range 3 {
		if out, err := tarNull(root); err != nil {
			t.Fatalf("warm tar %d: %v\n%s", i, err, out)
		}
	}
	if d := statsDiffer(before, stats(t, root)); len(d) > 0 {
		t.Errorf("warm tar changed the stats of %q", d)
	}

	// rsync -a twice: the second finds nothing to do.
	dst := filepath.Join(t.TempDir(), "copy")
	t.Cleanup(func() { exec.Command("chmod", "-R", "u+w", dst).Run() })
	if out, err := run(t, rsync, "-a", root+"/", dst+"/"); err != nil {
		t.Fatalf("rsync -a: %v\n%s", err, out)
	}
	if out, err := run(t, rsync, "-a", "--itemize-changes", root+"/", dst+"/"); err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("second rsync -a: %v; itemized (want nothing):\n%s", err, firstLines(out, 10))
	}

	// find -newer a marker as new as the newest time in the tree.
	marker := filepath.Join(t.TempDir(), "marker")
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	newestNs := newestOf(t, stats(t, root))
	if err := os.Chtimes(marker, time.Unix(0, newestNs), time.Unix(0, newestNs)); err != nil {
		t.Fatal(err)
	}
	if out, err := tarNull(root); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	cmd := exec.Command("find", ".", "-newer", marker)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "" {
		t.Errorf("find -newer after a warm walk: %v; found (want nothing):\n%s", err, firstLines(string(out), 10))
	}

	walkersSeeNoChange(t, root, before, 16)
	listingChangeShows(t, dir, root, before)
}

// walkersSeeNoChange runs n walkers at once, each tar then find, and
// checks that every tar exits 0 and every find sees before.
func walkersSeeNoChange(t *testing.T, root string, before []string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan string, 2*n)
	for i := range n {
		wg.Go(func() {
			if out, err := tarNull(root); err != nil {
				errs <- fmt.Sprintf("walker %d: tar: %v\n%s", i, err, firstLines(out, 5))
			}
			cmd := exec.Command("find", ".", "-printf", `%T@ %C@ %s %p\n`)
			cmd.Dir = root
			out, err := cmd.Output()
			if err != nil {
				errs <- fmt.Sprintf("walker %d: find: %v", i, err)
				return
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			slices.Sort(lines)
			if d := statsDiffer(before, lines); len(d) > 0 {
				errs <- fmt.Sprintf("walker %d: stats changed: %q", i, d)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// listingChangeShows adds a skill under g03 on the server: it appears in
// ls of g03, g03's times change, and g05's do not.
func listingChangeShows(t *testing.T, dir, root string, before []string) {
	t.Helper()
	writeTree(t, dir, map[string]string{"g03/late/SKILL.md": skillMD("late", "Added after the walks", "late\n")})
	waitFor(t, 2*time.Minute, "late in ls of g03", func() bool {
		return slices.Contains(listNames(filepath.Join(root, "g03")), "late")
	})
	after := stats(t, root)
	line := func(s []string, p string) string {
		for _, l := range s {
			if strings.HasSuffix(l, " "+p) {
				return l
			}
		}
		return ""
	}
	if a, b := line(before, "./g03"), line(after, "./g03"); a == b {
		t.Errorf("g03 after a skill was added in it: %q, as before", b)
	}
	if a, b := line(before, "./g05"), line(after, "./g05"); a != b || a == "" {
		t.Errorf("g05, unchanged: %q before, %q after", a, b)
	}
}

// newestOf is the latest mtime (ns) in find -printf lines.
func newestOf(t *testing.T, lines []string) int64 {
	t.Helper()
	var newest int64
	for _, l := range lines {
		f := strings.Fields(l)
		sec, frac, _ := strings.Cut(f[0], ".")
		s, err1 := strconv.ParseInt(sec, 10, 64)
		ns, err2 := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("find line %q", l)
		}
		newest = max(newest, s*1e9+ns)
	}
	return newest
}

// firstLines is the first n lines of s.
func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[:min(n, len(lines))], "\n")
}
