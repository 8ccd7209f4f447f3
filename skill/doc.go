// Package skill holds skillfs's own model of what a SEP-2640 server publishes:
// a skill Entry (the SKILL.md URI, the verbatim frontmatter and the resources
// manifest), its Resources and their Digests.
//
// The types carry no behaviour beyond encoding. Checking them is the job of
// package verify; fetching them is the job of package resolver; the server
// behind `skillfs serve` produces them. Every other package speaks in these
// types rather than in go-sdk's.
package skill
