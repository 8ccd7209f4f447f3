// Package resolver owns MCP: one supervised go-sdk client session per origin
// (a configured server), and the SEP-2640 calls skillfs makes on it.
//
// A Session connects over the transport its config names (a stdio command,
// streamable HTTP, legacy SSE, or an in-process byte stream for the demo),
// reads the io.modelcontextprotocol/skills extension from the server's
// capabilities, enumerates skills/list within caps on pages, entries,
// resources, bytes and time (an entry is kept whole or not at all; no page
// is asked for once a cap is reached), checks every entry with package
// verify and publishes the result as a Catalog. It re-lists on notifications/resources/list_changed, on a
// timer and on request, and reconnects with backoff when the session ends.
//
// Fetch reads one file with resources/read, bounded before it is decoded
// (package transport refuses an over-long response without ending the
// session) and charged to the origin's byte budget. Fetch does not verify:
// the caller checks the bytes against the held entry. GetSkill and ReadDir
// wrap skills/get and resources/directory/read.
//
// The server's instructions (initialize) are kept as a plain string in
// Status (the first MaxInstructions bytes, and their length), and the
// skill:// URIs they name (NamedSkills, at most MaxNamedSkills) are
// confirmed with skills/get on every enumeration, like the config's pins,
// within the listing's caps (instructions.go).
//
// The listing's cacheScope (SEP-2549) is read: anything but "public" (or
// no scope) makes the catalog private. On a mount shared with other users
// (config.Origin.Shared, from --allow-other) a private catalog is marked
// Withheld, and a directory read whose result is private fails with
// ErrPrivate.
//
// go-sdk types stay inside this package; callers see skillfs's own types
// and the error values in errors.go. Nothing leaves a Session with a URL's
// secrets in it: the errors its methods return, Status's LastError and
// every line it (and package transport under it) logs have each URL's user
// info, query values and fragment masked (config.MaskURLs), whoever wrote
// the URL into the text — net/http quotes the request URL, a server may
// redirect to any — while errors.Is and errors.As still see the original.
//
// A stdio server that ends on its own is kept in Status.Exit: its exit
// status and the last lines of its stderr, escaped (exit.go), for skillfs
// status and never for a generated file.
//
// A stdio server is started with config.Origin.Environ: a base set of
// skillfs's environment, the variables its pass_env names and its own env,
// not skillfs's whole environment.
package resolver
