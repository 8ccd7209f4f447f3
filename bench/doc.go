//go:build linux

// Command bench measures skillfs against the baselines the benchmark issue
// names, on trees it generates, and prints one Markdown table.
//
//	go run ./bench [-sizes 100,1000,10000] [-reps 9] [-stdio 1000] [-walkers 1,4,16] [-out FILE]
//
// It owns the benchmark, nothing else: it builds cmd/skillfs into a temp
// directory, generates seeded skill trees (3–5 files of 1–20 KiB per skill,
// plus pairs of equal-size 1–8 MiB files), copies each to a tmpfs
// (/dev/shm, or one it mounts as root), serves it with `skillfs serve
// --http 127.0.0.1:0` as a subprocess and mounts it with `skillfs mount` as
// another, and then, from this process (never the one serving the mount):
//
//   - start to live: exec of `skillfs mount` to its ready line, fresh cache,
//     against a go-sdk client connecting and listing every skills/list page;
//     the daemon's VmRSS/VmHWM right after;
//   - cold first reads (open+read+close of a never-read file through the
//     mount, so one resources/read plus verification) against a go-sdk
//     client doing resources/read and sha256 of a different file of the
//     same size over the same transport;
//   - 32 concurrent first readers of one cold file, counting the
//     resources/read lines the server's access log shows for it;
//   - every file read and checked through the mount, then VmRSS/VmHWM;
//   - warm stat, open+read+close of small files, sequential read of a large
//     file, each against the same files on tmpfs, after one untimed pass;
//   - the walks agents run over the whole tree (issue 21): `ls -R`, `find
//     -type f`, `rg -c`, `grep -r`, `tar cf -`, `ls -lR`, `du -s`, each by
//     absolute path from / and from inside the tree as ".", against tmpfs
//     after one untimed pass (which also checks that ls, find, rg and grep
//     print the same on both), with the best of each side and its spread;
//   - at sizes up to -counts, the FUSE requests each of those walks sends
//     warm, by opcode, counted from the log of a second mount with --debug;
//   - the readers agents use, on the same small files: Python's
//     open(p, 'rb').read() and Node's fs.readFileSync, each one long-lived
//     subprocess that loops over the file list and times itself, and rg
//     over the whole tree, against tmpfs;
//   - the FUSE round trip those readers can pay: ioctl(TCGETS) (Python's
//     isatty at open) and getxattr of an absent attribute, both always
//     forwarded to the daemon, against tmpfs and against go-fuse's stock
//     loopback over the same tmpfs copy (bench/loopback, built and run as
//     a subprocess), the FUSE floor; Python's reader is measured against
//     the loopback too.
//
// The warm operations and the walks run at each parallelism of -walkers:
// with P walkers, P goroutines (the walks: P processes) do the whole
// operation at once, on the mount and then on tmpfs, and the row is the
// wall time of them all (per file of one walker's pass for the per-file
// rows), so that on a many-core machine a row says how the daemon scales
// against the kernel's own filesystem. The table's machine line gives the
// cores and the kernel.
//
// A reader that is not installed (python3, node, rg) is skipped with a
// note in its row; the bench installs nothing.
//
// One size (-stdio) is also mounted over stdio, where the baselines start
// their own `skillfs serve` over stdio; the warm operations do not depend
// on the transport and are measured over HTTP only.
//
// Timing is relative: each row is the median of n repetitions, skillfs and
// its baseline alternating within every repetition so that drift on a
// shared machine weighs on both, and the ratio is what the targets judge;
// start-to-live, which the issue bounds in seconds, shows its baseline too,
// and memory and request counts are single figures. Each timed row also
// says how stable it was (issue 21 item 5): the middle half (25th to 75th
// percentile) of the ratios of its pairs, each pair measured back to back,
// so a row whose median ratio moved because the machine did shows a wide
// range; a row without a baseline gives its samples' middle half around
// their median. Missing a target is
// not an error: the command exits 0 when it printed the table. Everything
// it starts is stopped and everything it mounts unmounted, also on failure
// and on Ctrl-C (children are in their own process group and get a death
// signal should the bench itself be killed).
//
// The tests (go test ./bench) run the generator and the table code on small
// trees; the full pipeline runs in a test only with -e2e (it needs FUSE).
package main
