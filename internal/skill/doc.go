// Package skill holds skillfs's own model of what a SEP-2640 server publishes:
// a skill Entry (the SKILL.md URI, the verbatim frontmatter and the resources
// manifest), its Resources and their Digests.
//
// It also holds the SEP-2640 wire vocabulary (wire.go): the extension id
// and settings, the method names, and the params and results of
// skills/list, skills/get and resources/directory/read, defined here once
// for the client (package resolver), the servers (skillserver and the
// hostile test server) and the benchmark's baseline client. It imports no
// MCP library; each side wraps the shapes for go-sdk.
//
// The types carry little behaviour: their encoding, entry equality (by wire
// form) and the digest's format (DigestOf, FormatDigest, ParseDigest).
// Checking an entry is the job of package verify; fetching it is the job of
// package resolver; the server behind `skillfs serve` produces them. Every
// other package speaks in these types rather than in go-sdk's.
package skill
