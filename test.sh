#!/usr/bin/env bash
# The project's test command (README.md, "Set up"): vet, then every test with
# the race detector. Tests that need FUSE mount for real when /dev/fuse is
# usable and skip, saying why, when it is not.
set -euo pipefail
cd "$(dirname "$0")"
export PATH="/usr/local/go/bin:$PATH"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
# go.mod says what the code imports, no more and no less.
go mod tidy -diff
# The daemon also builds for macOS hosts: vet that build too.
GOOS=darwin go vet ./...
# The integration tests walk the mount with rsync (a second `rsync -a` must
# find nothing to do); install it when it is missing and we may (best-effort:
# the test skips, saying why, without it).
if ! command -v rsync >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  apt-get install -y -qq rsync >/dev/null 2>&1 || true
fi
go test -race -count=1 -timeout 40m ./...
