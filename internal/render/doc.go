// Package render writes the files skillfs generates under .skillfs —
// index.json, index.md, servers/LABEL.md, status.json and catalog.md — and
// the catalog `skillfs catalog` prints. Each is a pure function of a
// Snapshot: a plain value the mount takes (package vfs builds it; render
// imports neither vfs nor the resolver), so every bound and every escape is
// tested here without a kernel, against golden files under testdata
// (`go test ./internal/render -update` rewrites them).
//
// Everything a server chose (labels are the user's; paths, names,
// descriptions, flags, details and errors are the server's) is escaped for
// where it lands: markdown.go for Markdown running text and code spans and
// for XML character data, JSON strings for the JSON files. Every generated
// file a model reads is bounded: index.md, servers/LABEL.md and catalog.md
// by config.Index.Bound (32 KiB by default), index.json by
// MaxIndexJSONBytes; what does not fit is counted, never cut mid-entry.
// Under approval: required the Snapshot's Index holds no row of a skill
// that is not approved, only counts, so no file names one. A server's
// instructions are quoted in servers/LABEL.md as the server's words
// (instructions.go), unless the Snapshot holds them back.
package render
