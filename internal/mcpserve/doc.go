// Package mcpserve is `skillfs mcp`: one stdio MCP server that gives a host
// which cannot mount FUSE the skills a mount would show, with the same
// guarantees, through tools.
//
// The server reads through a Tree: mount-relative paths (LABEL/skill/FILE,
// .skillfs/catalog.md) exactly as in the mount, answered by the mount's core
// (vfs.Core, run in this process) or by plain reads under a running mount's
// directory (DirTree). Either way every byte a tool returns passed the
// mount's checks (size, digest, frontmatter), and skills pending approval,
// failed or rejected are absent, because the Tree does not have them.
//
// Tools. list_skill_files(path, offset) lists a directory, at most
// MaxListEntries entries per call with a note naming the next offset;
// read_skill_file(path, offset, length) returns a file's bytes, at most
// MaxReadBytes per call with a note naming the next offset. Text comes back
// as text, exactly; a file that is not UTF-8 text comes back as base64 with a
// note saying so. Failures are tool errors (isError) naming the path and
// what went wrong: not found, not a directory, is a directory, or the read's
// reason (a digest mismatch, the server offline, ...). Nothing runs a
// skill's script, and no answer carries a configured env value or header:
// the Tree has none.
//
// Instructions. The server's instructions are a short paragraph on how to
// use the tools, then the mount's catalog (.skillfs/catalog.md, without its
// opening paragraph, which speaks of file tools), bounded by
// MaxInstructionsBytes: every entry names its server and its SKILL.md's
// path, escaped by package render as in the mount.
package mcpserve
