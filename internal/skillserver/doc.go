// Package skillserver is the server behind `skillfs serve DIR`: it publishes
// the skills in a local folder over MCP as SEP-2640 ("Skills Extension")
// describes, for skill authors, for the demo, and as the honest peer that
// skillfs's own tests talk to.
//
// # What is published
//
// Every folder below DIR that holds a SKILL.md is a skill, at any depth:
// DIR/acme/billing/refunds/SKILL.md is skill://acme/billing/refunds/SKILL.md.
// URIs are verify's canonical form: path segments percent-encoded as RFC
// 3986 pchar (a file "a b.md" is skill://x/a%20b.md), the first segment the
// URI's authority. A skill's resources are every file below its folder,
// nested skills' files included, each with its sha256 digest and size,
// SKILL.md first; a nested skill is also listed on its own. Files that
// belong to no published skill are not served.
//
// The server declares capabilities.extensions["io.modelcontextprotocol/skills"]
// = {"directoryRead": true} and answers
//
//   - skills/list: paged by cursor, frontmatter as verify.ParseFrontmatter
//     reads it (so a host comparing field by field agrees);
//   - skills/get: any published skill, by any spelling of its URI; -32602
//     for anything else, naming the reason when the skill was refused;
//   - resources/list: every served file (paged by go-sdk);
//   - skills/get, resources/read and resources/directory/read all take any
//     spelling of a URI that verify.ParseURI maps to a served one (see
//     canonicalRead);
//   - resources/read: the file as it is on disk now, as text when the bytes
//     are UTF-8 and as a blob otherwise (an empty file is an empty blob);
//     mimeType from a fixed extension table, text/markdown for SKILL.md,
//     text/plain or application/octet-stream for unknown extensions;
//   - resources/directory/read: the children of every folder that holds
//     served files, from the top-level folder (skill://acme) down, folders
//     as inode/directory; paged by cursor; -32602 for a missing URI or a
//     file. Empty folders and folders holding nothing served do not exist.
//     A cursor of skills/list or of a directory read names the listing it
//     belongs to; any other cursor (garbage, another method's, another
//     directory's) is -32602, as resources/list's are.
//     Each child is named by its last path segment ("SKILL.md", not the
//     skill's name, which resources/list gives it).
//
// In the 2026-07-28 protocol the results also carry resultType, and list
// results ttlMs 0 (the folder may change at any moment; list_changed says
// when) and cacheScope "public".
//
// # What is refused
//
// The server publishes nothing a conforming host must reject, and nothing it
// would have to lie about. Every entry passes verify.CheckEntry (strict)
// before it is listed. Each refusal is a Problem, returned by Problems and
// logged, while everything else is served:
//
//   - a skill whose SKILL.md cannot be read, starts with a UTF-8 byte
//     order mark (a strict client wants "---" first, and files are served
//     as they are on disk), has no or invalid frontmatter,
//     no description, a name that differs from its folder or breaks the
//     Agent Skills naming rules, two paths that differ only in case or
//     Unicode normalisation, or more than SEP-2640's 512 files or 16 MiB
//     (checked from stat before any file is read);
//   - a skill whose frontmatter breaks another rule of the Agent Skills
//     specification: a description over 1024 characters, a compatibility
//     that is not a string of 1 to 500, a license that is not a string,
//     an allowed-tools that is neither a string nor a list of strings (the
//     list is a tolerated spelling), metadata that is not a map of strings.
//     Characters are Unicode code points. Fields the specification does
//     not define are published as written;
//   - a SKILL.md directly in DIR, which has no skill path;
//   - a top-level folder that cannot be a URI authority (only letters,
//     digits and -._~!$&'()*+,;= and non-ASCII: go-sdk's url.Parse refuses
//     anything else percent-encoded in a host);
//   - a file or folder whose name verify refuses (control or invisible
//     characters, backslashes, invalid UTF-8, over 255 bytes, deeper than 32
//     components), that cannot be read, a symlink that is broken or resolves
//     outside DIR, a symlinked folder that loops back to an enclosing one,
//     and special files (FIFOs, sockets, devices), which are never opened.
//
// A file that cannot be read is left out of its skill; anything wrong with
// the SKILL.md or the entry as a whole leaves out the skill. Symlinks inside
// DIR are followed, also absolute ones, and re-checked at every read.
// Hidden files (.gitignore) are served; .git, folder or file, is skipped.
//
// # Transports
//
// ServeStdio and ServeConn serve one session; Handler serves streamable
// HTTP to any number. go-sdk speaks the 2026-07-28 protocol over HTTP only
// statelessly and delivers 2025-11-25 notifications only statefully, so
// Handler routes by the Mcp-Protocol-Version header: 2026-07-28 requests to
// a stateless handler (notifications ride subscriptions/listen), the rest to
// a stateful one.
//
// # Freshness and cost
//
// Watch asks the system for file notifications (fsnotify: inotify on Linux,
// kqueue on macOS and the BSDs) on every folder below DIR, adding a watch
// for each folder that appears and dropping those of folders that go;
// symlinks are not followed, as the ones served resolve inside DIR, where
// their targets are watched already, and .git is not watched. A burst of
// events is one rescan, 150 ms after its first event, and a rescan once a
// minute catches what notifications miss (a network filesystem changed from
// another machine). An idle folder costs no CPU. Where DIR cannot be
// watched — no watcher, a watch that cannot be added (the inotify watch
// limit, fs.inotify.max_user_watches, or kqueue's open-file limit), DIR
// itself removed — Watch logs the reason once and polls instead, every
// PollInterval, or four times as long as a scan took on trees where that
// is longer; Options.NoWatch polls from the start. A negative PollInterval
// turns change detection off. When a rescan finds anything changed — a
// file's bytes, a file added or removed, a skill appearing or going —
// clients receive notifications/resources/list_changed: in 2025-11-25 on
// the session, in 2026-07-28 on their subscriptions/listen stream. What a
// scan reads is cached by path, size, mtime, ctime and inode; a rescan whose
// walk finds every key unchanged reads no file and rebuilds nothing. A file
// modified less than a second before it was read is read again next time, as
// a second change within one timestamp tick would not move its key.
// Contents are never held: resources/read reads the file when asked, and
// when its bytes no longer match the catalog it rescans before answering, so
// that the skills/get a host makes on the mismatch is already current.
package skillserver
