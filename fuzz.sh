#!/usr/bin/env bash
# fuzz.sh — run every Go fuzz target of the module for a while, keeping the
# corpora. Optional: test.sh does not run it (test.sh replays every seed as an
# ordinary test); run it by hand or on a schedule.
#
# Usage: ./fuzz.sh [-t DURATION] [-l] [PATTERN]
#   -t DURATION  how long each target runs (go test -fuzztime syntax: 1m, 30s,
#                5000x); default $FUZZTIME or 1m
#   -l           list the targets ("import/path FuzzName") and exit
#   PATTERN      an extended regexp; only targets whose "import/path FuzzName"
#                line matches are run
#
# Environment:
#   FUZZTIME         default for -t
#   FUZZ_PARALLEL    fuzzing workers per target (go test -parallel); default
#                    the number of CPUs
#   FUZZ_CACHE       where the generated corpus lives; default Go's own
#                    ($(go env GOCACHE)/fuzz). Each target's corpus is
#                    $FUZZ_CACHE/<import path>/<FuzzName>, so every run goes
#                    on from what the last one found.
#   FUZZ_SEEDS_MAX   see "Corpora"; default 16, 0 turns promotion off
#
# Corpora. Three places, each with its own job:
#   1. <package>/testdata/fuzz/<FuzzName>/ is the seed corpus in the
#      repository. Every `go test` (test.sh included) runs each of its files
#      as a test case. go test writes a failing input there; commit it with
#      the fix.
#   2. The generated corpus (FUZZ_CACHE above): every input that reached new
#      code, kept between runs on one machine, never committed.
#   3. Promotion: after each target ran, the smallest inputs of (2) that are
#      not yet in (1) are copied into (1) until it holds FUZZ_SEEDS_MAX files,
#      so that the interesting inputs one run found keep being replayed by
#      ordinary tests on every machine. Review and commit them as any test
#      change. Failing inputs are always kept, whatever the cap.
#
# Exit status: 0 every target ran clean; 1 a target failed (the input is
# under testdata/fuzz and the output above says which); 2 bad usage.
set -euo pipefail
cd "$(dirname "$0")"
export PATH="/usr/local/go/bin:$PATH"

fuzztime="${FUZZTIME:-1m}"
list=false
while getopts "t:lh" opt; do
  case "$opt" in
    t) fuzztime="$OPTARG" ;;
    l) list=true ;;
    h) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
pattern="${1:-.}"
parallel="${FUZZ_PARALLEL:-$(nproc)}"
seeds_max="${FUZZ_SEEDS_MAX:-16}"
cache="${FUZZ_CACHE:-$(go env GOCACHE)/fuzz}"

# Every "dir importpath FuzzName" of the module, from the test files' sources.
targets() {
  go list -f '{{.Dir}} {{.ImportPath}}' ./... | while read -r dir pkg; do
    grep -hoE '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' "$dir"/*_test.go 2>/dev/null |
      sed -E 's/^func (Fuzz[A-Za-z0-9_]*).*/\1/' | sort -u |
      while read -r name; do echo "$dir $pkg $name"; done
  done
}

# promote copies the smallest generated inputs of one target into its seed
# corpus until that holds seeds_max files.
promote() {
  local dir=$1 pkg=$2 name=$3
  local from="$cache/$pkg/$name" to="$dir/testdata/fuzz/$name"
  [ "$seeds_max" -gt 0 ] && [ -d "$from" ] || return 0
  mkdir -p "$to"
  local have added=0
  have=$(find "$to" -type f | wc -l)
  while read -r _ f; do
    [ "$have" -lt "$seeds_max" ] || break
    [ -e "$to/$(basename "$f")" ] && continue
    cp "$f" "$to/"
    have=$((have + 1))
    added=$((added + 1))
  done < <(find "$from" -type f -printf '%s %p\n' | sort -n)
  if [ "$added" -eq 0 ]; then
    rmdir "$to" 2>/dev/null || true
  else
    echo "fuzz.sh: $pkg $name: $added generated input(s) added to ${to#"$PWD"/}"
  fi
}

all=$(targets | grep -E -- "$pattern" || true)
if [ -z "$all" ]; then
  echo "fuzz.sh: no fuzz target matches $pattern" >&2
  exit 2
fi
if $list; then
  cut -d' ' -f2- <<<"$all"
  exit 0
fi

failed=()
while read -r dir pkg name; do
  echo "=== fuzz $pkg $name for $fuzztime"
  # go test passes -test.fuzzcachedir=$(go env GOCACHE)/fuzz/<import path>
  # itself; a later one given after -args wins.
  args=()
  [ -n "${FUZZ_CACHE:-}" ] && args=(-args "-test.fuzzcachedir=$cache/$pkg")
  if go test -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" -parallel "$parallel" "$pkg" "${args[@]}"; then
    promote "$dir" "$pkg" "$name"
  else
    failed+=("$pkg $name")
  fi
done <<<"$all"

if [ "${#failed[@]}" -gt 0 ]; then
  echo "fuzz.sh: failing targets (inputs under their package's testdata/fuzz):" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "fuzz.sh: every target ran clean for $fuzztime"
