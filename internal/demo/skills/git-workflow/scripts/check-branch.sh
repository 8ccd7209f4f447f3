#!/bin/sh
# Checks that the current branch follows <kind>/<ticket>-<slug>.
branch=$(git rev-parse --abbrev-ref HEAD) || exit 2
case "$branch" in
  feat/*-*|fix/*-*|docs/*-*|chore/*-*) echo "ok: $branch" ;;
  *) echo "branch name '$branch' does not follow <kind>/<ticket>-<slug>" >&2; exit 1 ;;
esac
