// Package textdiff writes the unified diff (diff -u, git diff) of two
// texts, line by line, for `skillfs approve`: what changed in a skill since
// the version the user last approved.
//
// The texts come from MCP servers, which may be hostile, so the work is
// bounded before it starts: Myers' O(ND) algorithm after the common prefix
// and suffix are set aside, with at most MaxLines lines a side and at most
// MaxEdits inserted or deleted lines. Past either bound Unified returns an
// error that Is ErrTooLarge, and the caller says "file changed, N lines,
// too large to diff" instead. Memory is O(MaxEdits²) words at worst
// (about 4 MiB), time O(MaxEdits·(N+M)).
package textdiff
