//go:build linux

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Exit codes. A missed target is not a failure: the command measures.
const (
	exitOK          = 0   // the table was printed
	exitFailed      = 1   // the run could not finish; what was measured is printed
	exitUsage       = 2   // bad flags
	exitInterrupted = 130 // SIGINT or SIGTERM; everything was cleaned up
)

// options is what the command line sets.
type options struct {
	Sizes     []int
	Reps      int
	Out       string
	StdioSize int // also mount this size over stdio; 0: none
	// CountSize: HTTP sizes up to this one also count the FUSE requests of
	// each workload, in a second mount with --debug; 0: none.
	CountSize int
	// Idle is the window over which the idle CPU of a default `skillfs
	// serve` and of the mount daemon is measured (HTTP sizes); 0: none.
	Idle time.Duration
	Seed uint64
	// Walkers are the parallelisms of the warm rows: each is measured
	// with this many walkers at once, every walker doing the whole
	// operation, on the mount and on tmpfs alike.
	Walkers []int
	Skillfs string // a built binary; "" builds cmd/skillfs
	WorkDir string // parent of the bench's temp dir (disk)
	Shm     string // a tmpfs for the baseline copy
	// Spec shapes the generated trees; nil keeps the sizes. Tests
	// shrink the files.
	Spec   func(skills int) Spec
	Logger *slog.Logger
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./bench [flags]\n\nMeasures skillfs against tmpfs and a plain go-sdk client; see BENCHMARKS.md.\n\n")
		fs.PrintDefaults()
	}
	sizes := fs.String("sizes", "100,1000,10000", "comma-separated tree sizes, in skills, each served over loopback HTTP")
	reps := fs.Int("reps", 9, "repetitions per measurement (medians of these)")
	out := fs.String("out", "", "also write the report to `FILE`")
	stdio := fs.Int("stdio", 1000, "also mount the tree of this many skills over stdio (0: no stdio run)")
	counts := fs.Int("counts", 1000, "count the FUSE requests of each workload at HTTP sizes up to this many skills (0: none)")
	idle := fs.Duration("idle", 10*time.Second, "measure the idle CPU of `skillfs serve` and of the mount daemon over this window, per HTTP size (0: not at all)")
	seed := fs.Uint64("seed", 1, "seed of the generated trees")
	walkers := fs.String("walkers", "1,4,16", "comma-separated parallelisms of the warm rows: each row runs with this many concurrent walkers (1 to 64), every one doing the whole operation")
	bin := fs.String("skillfs", "", "use this skillfs binary instead of building ./cmd/skillfs")
	work := fs.String("workdir", os.TempDir(), "where the trees, cache and mountpoints go (a disk, not tmpfs)")
	shm := fs.String("shm", "/dev/shm", "tmpfs for the baseline copy (as root, a tmpfs is mounted when this is not one)")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	o := options{Reps: *reps, Out: *out, StdioSize: *stdio, CountSize: *counts, Idle: *idle, Seed: *seed, Skillfs: *bin, WorkDir: *work, Shm: *shm}
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 10 {
			return options{}, fmt.Errorf("-sizes: %q is not a tree size (at least 10 skills)", f)
		}
		o.Sizes = append(o.Sizes, n)
	}
	for _, f := range strings.Split(*walkers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 64 {
			return options{}, fmt.Errorf("-walkers: %q is not a number of walkers (1 to 64)", f)
		}
		o.Walkers = append(o.Walkers, n)
	}
	if o.Reps < 1 {
		return options{}, fmt.Errorf("-reps must be at least 1, not %d", o.Reps)
	}
	if o.StdioSize != 0 && o.StdioSize < 10 {
		return options{}, fmt.Errorf("-stdio: %d is not a tree size (at least 10 skills, or 0)", o.StdioSize)
	}
	return o, nil
}

func main() {
	opts, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
		os.Exit(exitUsage)
	}
	opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	rep, err := run(ctx, opts)
	if rep != nil {
		md := rep.Markdown()
		fmt.Print(md)
		if opts.Out != "" {
			if werr := os.WriteFile(opts.Out, []byte(md), 0o644); werr != nil {
				fmt.Fprintln(os.Stderr, "bench: -out:", werr)
				err = errors.Join(err, werr)
			}
		}
	}
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(os.Stderr, "bench: interrupted; cleaned up")
		os.Exit(exitInterrupted)
	case err != nil:
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(exitFailed)
	}
	os.Exit(exitOK)
}

// bencher is what every scenario shares.
type bencher struct {
	opts options
	log  *slog.Logger
	cl   *cleaner
	bin  string
	work string
	shm  string
	// loopback is the built bench/loopback, or "" with loopbackErr saying
	// why its rows are skipped.
	loopback    string
	loopbackErr string
}

// run does the whole benchmark and returns the report (also, as far as it
// got, when it fails).
func run(ctx context.Context, opts options) (*Report, error) {
	started := time.Now()
	b := &bencher{opts: opts, log: opts.Logger, cl: &cleaner{}}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	rep := &Report{Command: commandLine(), Machine: machine(), Started: started, Reps: opts.Reps}
	defer func() { rep.Elapsed = time.Since(started) }()

	// An interrupt cleans up at once, even while the run is blocked in a
	// syscall on a mount: stopping the daemons ends such calls.
	finished := make(chan struct{})
	defer close(finished)
	go func() {
		select {
		case <-ctx.Done():
			b.cl.run()
		case <-finished:
		}
	}()
	defer b.cl.run()

	var err error
	if b.work, err = os.MkdirTemp(opts.WorkDir, "skillfs-bench-"); err != nil {
		return nil, fmt.Errorf("work directory: %w", err)
	}
	b.cl.add(func() {
		if err := removeAll(b.work); err != nil {
			b.log.Warn("cleanup", "op", "cleanup", "err", err)
		}
	})
	if b.shm, err = b.tmpfs(); err != nil {
		return nil, err
	}
	if b.bin = opts.Skillfs; b.bin == "" {
		root, err := moduleRoot()
		if err != nil {
			return nil, err
		}
		b.log.Info("building skillfs", "op", "build", "path", root)
		if b.bin, err = buildSkillfs(ctx, root, b.work); err != nil {
			return nil, err
		}
	}
	if root, err := moduleRoot(); err != nil {
		b.loopbackErr = "no module to build bench/loopback from"
	} else if b.loopback, err = buildLoopback(ctx, root, b.work); err != nil {
		b.loopbackErr = "bench/loopback did not build"
		rep.Notes = append(rep.Notes, err.Error())
	}

	sizes := slices.Clone(opts.Sizes)
	if opts.StdioSize > 0 && !slices.Contains(sizes, opts.StdioSize) {
		sizes = append(sizes, opts.StdioSize)
	}
	for _, n := range sizes {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		httpRun := slices.Contains(opts.Sizes, n)
		stdioRun := n == opts.StdioSize
		if err := b.size(ctx, rep, n, httpRun, stdioRun); err != nil {
			return rep, err
		}
	}
	return rep, ctx.Err()
}

// size generates one tree and runs its scenarios.
func (b *bencher) size(ctx context.Context, rep *Report, n int, httpRun, stdioRun bool) error {
	spec := Spec{Skills: n, Seed: b.opts.Seed}
	if b.opts.Spec != nil {
		spec = b.opts.Spec(n)
	}
	src := filepath.Join(b.work, fmt.Sprintf("tree-%d", n))
	b.log.Info("generating", "op", "generate", "path", src, "skills", n)
	tree, err := Generate(src, spec)
	if err != nil {
		return err
	}
	defer removeAll(src)
	var shm *Tree
	if httpRun {
		dst := filepath.Join(b.shm, fmt.Sprintf("tree-%d", n))
		b.log.Info("copying to tmpfs", "op", "copy", "path", dst)
		if shm, err = CopyTree(tree, dst); err != nil {
			return err
		}
		defer removeAll(dst)
	}
	b.log.Info("tree ready", "skills", n, "files", len(tree.Files), "bytes", tree.Bytes())
	var runs []*scenario
	if httpRun {
		runs = append(runs, &scenario{b: b, tree: tree, shm: shm, dir: filepath.Join(b.work, fmt.Sprintf("http-%d", n))})
	}
	if stdioRun {
		runs = append(runs, &scenario{b: b, tree: tree, dir: filepath.Join(b.work, fmt.Sprintf("stdio-%d", n)),
			spec: transportSpec{Stdio: true, Bin: b.bin, Dir: tree.Root}})
	}
	for _, s := range runs {
		b.log.Info("scenario", "skills", n, "transport", s.spec.name())
		err := s.run(ctx)
		rep.Rows = append(rep.Rows, s.rows...)
		rep.Notes = append(rep.Notes, s.notes...)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s/%s: stopped early: %v", formatCount(n), s.spec.name(), err))
			b.log.Error("scenario failed", "skills", n, "err", err, "log", tail(filepath.Join(s.dir, "daemon.log"), 20))
		}
	}
	return nil
}

// tail returns the last n lines of a file, for a failure message.
func tail(p string, n int) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// tmpfsMagic is TMPFS_MAGIC from linux/magic.h.
const tmpfsMagic = 0x01021994

// tmpfs returns a fresh directory on a tmpfs for the baseline copies:
// under opts.Shm when that is a tmpfs, else (as root) on a tmpfs mounted
// for the run.
func (b *bencher) tmpfs() (string, error) {
	base := b.opts.Shm
	if !isTmpfs(base) {
		if os.Geteuid() != 0 {
			return "", fmt.Errorf("%s is not a tmpfs, and mounting one needs root; pass -shm with a tmpfs directory", base)
		}
		base = filepath.Join(b.work, "tmpfs")
		if err := os.Mkdir(base, 0o700); err != nil {
			return "", err
		}
		if err := syscall.Mount("tmpfs", base, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=0700"); err != nil {
			return "", fmt.Errorf("mount a tmpfs at %s: %w", base, err)
		}
		b.cl.add(func() { syscall.Unmount(base, syscall.MNT_DETACH) })
		if !isTmpfs(base) {
			return "", fmt.Errorf("%s: mounted a tmpfs, but statfs does not say tmpfs", base)
		}
	}
	dir, err := os.MkdirTemp(base, "skillfs-bench-")
	if err != nil {
		return "", fmt.Errorf("tmpfs directory: %w", err)
	}
	b.cl.add(func() { os.RemoveAll(dir) })
	return dir, nil
}

func isTmpfs(dir string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(dir, &st) == nil && st.Type == tmpfsMagic
}

func commandLine() string {
	args := []string{"go run ./bench"}
	args = append(args, os.Args[1:]...)
	return strings.Join(args, " ")
}

// Machine describes where the run happened.
type Machine struct {
	CPUs   int
	Model  string
	Memory int64
	Kernel string
	Go     string
}

func machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.Model = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				m.Memory = kb << 10
			}
		}
	}
	var u syscall.Utsname
	if syscall.Uname(&u) == nil {
		m.Kernel = utsString(u.Sysname[:]) + " " + utsString(u.Release[:])
	}
	return m
}

func utsString(cs []int8) string {
	var b []byte
	for _, c := range cs {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

// A Report is the run's output: a short header, the table, and notes.
type Report struct {
	Command string
	Machine Machine
	Started time.Time
	Elapsed time.Duration
	Reps    int
	Rows    []Row
	Notes   []string
}

// Markdown renders the report.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## skillfs benchmark\n\n")
	fmt.Fprintf(&b, "- command: `%s`\n", r.Command)
	fmt.Fprintf(&b, "- machine: %d CPUs (%s), %.1f GiB memory, %s, %s\n",
		r.Machine.CPUs, r.Machine.Model, float64(r.Machine.Memory)/(1<<30), r.Machine.Kernel, r.Machine.Go)
	fmt.Fprintf(&b, "- run: %s, took %s\n", r.Started.UTC().Format("2006-01-02 15:04 MST"), r.Elapsed.Round(time.Second))
	fmt.Fprintf(&b, "- n is the samples behind each median; skillfs and its baseline alternate within each repetition (A/B, then B/A); ratio = skillfs median / baseline median\n\n")
	b.WriteString(Table(r.Rows))
	if len(r.Notes) > 0 {
		b.WriteString("\nNotes:\n\n")
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "- %s\n", cell(n))
		}
	}
	return b.String()
}
