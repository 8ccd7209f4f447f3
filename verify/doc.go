// Package verify owns every check skillfs applies to what a server says and
// sends: resource URIs and their mapping to mount paths, skill entries from
// skills/list and skills/get, fetched bytes, SKILL.md frontmatter, and the
// flags shown to users about content a model should not silently act on.
//
// It is pure: no files, no network, no goroutines, no logging. Callers log
// and decide; this package only answers. Every rejection is an *Error whose
// Reason is a short stable kebab-case word (bad-scheme, outside-skill,
// digest-mismatch, ...) that the mount and the CLI show to users, with a
// Subject (the URI or field) escaped so that it is safe to print.
//
// # URIs
//
// ParseURI accepts only scheme://authority/seg/... and decides by the parsed
// scheme, never by string prefix: file, http(s), data and the other schemes
// in deniedSchemes are BadScheme however they are spelled (FILE:x,
// file:/etc/x). Relative references, a missing or empty authority (skill:x,
// skill:///x), userinfo, ports, IP literals, queries and fragments are
// BadURI, and so are raw ASCII characters RFC 3986 forbids (space, "<>\^`{|}
// and controls). Raw non-ASCII UTF-8 is accepted IRI-style. Segments and the
// authority are percent-decoded, then must not be empty, ".", "..", contain
// "/", "\", NUL, C0/DEL/C1 controls, invalid UTF-8, bidi formatting
// characters (RFC 3987 §4.1), tag characters or ZWSP/word joiner/BOM, nor
// exceed 255 bytes; a URI has at most 32 components (the authority counts)
// and 4096 bytes, as received and in canonical form.
//
// The canonical form (URI.String) is the identity of a resource:
// lowercase scheme, authority case kept (it is a skill-path segment, not a
// host name, and the server is the only judge of it), uppercase
// percent-encoding of exactly the bytes RFC 3986 does not allow raw. So
// skill://a/x and skill://a/%78 are the same resource, and ParseURI(u.String())
// == u.
//
// URI.Path maps skill://a/b/F to "a/b/F" and any other scheme to
// "@scheme/authority/...". A skill authority starting with "@" is
// ReservedName, so the two namespaces cannot meet; URIFromPath inverts Path
// exactly and rejects "@skill/...". The mapping is injective because decoded
// segments never contain "/".
//
// # Entries
//
// CheckEntry applies what SEP-2640 allows from the entry alone, before any
// fetch: the uri ends in /SKILL.md; its last skill-path segment equals
// frontmatter.name, which follows the Agent Skills rules (1–64 of a-z, 0-9,
// "-", no leading, trailing or double hyphen — ASCII only); description is a
// non-blank string; every resource parses, lies inside the skill directory,
// carries a well-formed digest and a non-negative size within the per-file
// cap; the entry's own uri is listed exactly once and no canonical uri twice;
// at most 512 resources and 16 MiB declared in total; no two resources are
// one path after NFC normalisation and full case folding (SKILL.md and
// Skill.md), and no file is also a directory of another resource (a/b and
// a/b/c), since the tree could not show both. Sizes are optional unless
// EntryOptions.Strict. "resources" must be present (an array or the
// string "dynamic") in either mode: the Final text makes an entry without
// it invalid, never a dynamic skill.
//
// # Content
//
// CheckContent and Checker verify bytes: length against size first, then
// sha256 against digest. A Checker refuses the first byte beyond the
// declared size, so a caller streaming a response never holds more.
//
// # Frontmatter
//
// A SKILL.md's frontmatter block starts at the first line, which must be
// exactly "---" (one leading UTF-8 BOM is skipped, as editors on Windows
// write one), and ends at the next line that is exactly "---" or "...";
// CRLF is tolerated. The block must hold one YAML document whose top level
// is a mapping (or nothing), in at most MaxFrontmatterBytes (yaml.v3
// allocates about a hundred times its input before any other bound applies). It is converted to the JSON data model, and
// compared field by field with the entry's frontmatter, under these rules:
//
//   - Aliases are expanded, within MaxFrontmatterNodes visits (each
//     expansion counted again) and MaxFrontmatterDepth levels; an anchor
//     that contains itself is FrontmatterInvalid.
//   - Merge keys (<<) follow yaml.v3: keys written in the mapping win, then
//     the earlier of several merged mappings.
//   - Keys are strings: a scalar key compares by its literal text (1: x is
//     the key "1"); duplicate keys, also after that conversion, and
//     collection keys are FrontmatterInvalid.
//   - Plain scalars take the YAML 1.2 core schema's types (true/false,
//     null/~/empty, decimal integers — 0755 is 755 —, 0o octal, 0x hex,
//     floats; everything else, yes, on, 1:30, 1_000, 0b101, is a string),
//     not yaml.v3's, which reads 0755, 1_000 and 0b101 as YAML 1.1 does.
//     For exactly the plain scalars that YAML 1.1 types differently, an
//     entry in the 1.1 reading also matches (a server whose parser is 1.1):
//     0755 == 493, yes == true, 1:30 == 90. FrontmatterAmbiguities lists
//     them. Quoted and tagged scalars take yaml.v3's resolved types.
//     Numbers compare by exact decimal value, not as float64: YAML 1 ==
//     JSON 1 == JSON 1.0, YAML 0x1F == JSON 31, YAML 0.1 == JSON 0.1. .inf
//     and .nan equal nothing.
//   - null (~, null, empty) equals JSON null; a key present with null is not
//     an absent key.
//   - A timestamp equals a JSON string with the same literal text, or an
//     RFC 3339 string for the same instant. A quoted date is a string.
//   - !!binary compares as its base64 text. Scalars with other tags
//     (!Ref x) are their text, as yaml.v3 decodes them.
//
// ParseFrontmatter uses the same conversion — numbers as json.Number with a
// valid JSON spelling of the exact value, timestamps as their literal text —
// so a listing rendered from ParseFrontmatter always compares equal; .inf
// and .nan have no JSON spelling and are FrontmatterInvalid there.
//
// # Flags
//
// FrontmatterFlags and ContentFlags report, without enforcing: Unicode tag
// characters, bidi controls, zero-width characters, HTML comments in a
// SKILL.md, !`cmd` command expansions in its body, and permission-widening
// frontmatter — allowed-tools, hooks, and the fields in permissionFields.
package verify
