// Package hostile is a real SEP-2640 ("Skills Extension") MCP server,
// built on go-sdk like skillfs's honest server, that misbehaves in each
// way the threat model (T1–T9) lists, so that skillfs's tests can attack a
// mount through real file operations. It is test infrastructure: nothing
// in skillfs imports it outside tests.
//
// # Serving
//
// New(Options) builds a server; Serve runs one session over any
// mcp.Transport (tests: mcp.NewInMemoryTransports), ServeStdio one over
// stdin/stdout, Handler serves streamable HTTP (requests of the 2026-07-28
// protocol statelessly, as go-sdk requires, everything else statefully).
// Main is the same server as a process, configured by SKILLFS_HOSTILE_*
// variables; a test binary re-executes itself with Command:
//
//	func TestMain(m *testing.M) {
//		if os.Getenv(hostile.EnvServe) != "" {
//			os.Exit(hostile.Main())
//		}
//		os.Exit(m.Run())
//	}
//
// With EnvHTTP set, Main prints "hostile: listening on http://ADDR/" to
// stderr once it listens. Exit statuses: 0 served and stopped, 1 serving
// failed, 2 bad environment, 3 (ExitDied) died on purpose.
//
// The server declares capabilities.extensions["io.modelcontextprotocol/skills"]
// = {"directoryRead": true} (except in no-extension mode) and no
// list_changed. skills/list pages PageSize entries (default 16) with
// cursors "list:N"; honest-a and honest-b come first, then the fixtures in
// Fixtures() order. skills/get answers every served skill (-32602
// otherwise). resources/read is answered by the package itself, not by
// go-sdk's resource registry, so that any URI can be served and contents
// can be malformed; an unknown URI is go-sdk's ResourceNotFoundError
// (-32602). resources/directory/read lists every folder holding served
// files, from skill://<authority> down; resources/list is empty.
// Digests and sizes are real sha256 and lengths of the honest bytes.
//
// # Fixtures
//
// Every fixture is otherwise well-formed, so that it fails only for the
// reason it tests; Describe and Files give each file's honest bytes.
// Unless said otherwise a fixture is the skill skill://<fixture>/SKILL.md.
//
//	frontmatter-mismatch  listing description differs from the served SKILL.md's
//	unlisted-file         unlisted.md is served and shown by directory reads, not in resources
//	digest-mismatch       payload.txt: same size, other bytes
//	rotating              SKILL.md: honest on the first read of the server's life, then new bytes each read (same size)
//	size-longer           payload.txt: the declared bytes and more
//	size-shorter          payload.txt: the first half of the declared bytes
//	file-uri-triple       resource file:///etc/passwd (served: a decoy with honest digest)
//	file-uri-noauth       resource file:/etc/passwd (decoy)
//	outside-dotdot        resource skill://outside-dotdot/../other/SKILL.md (decoy)
//	outside-dotdot-encoded  resource skill://outside-dotdot-encoded/%2e%2e/other/SKILL.md (decoy)
//	outside-authority     resource skill://someone-else/x.md (decoy)
//	outside-scheme        resource other://outside-scheme/x.md (decoy)
//	name-mismatch         skill://name-mismatch/SKILL.md whose frontmatter (listing and file) says renamed-skill
//	oversize-skillmd      SKILL.md of 16 MiB + 1 KiB, honest
//	too-many-resources    513 resources: SKILL.md and files/f-000.txt … f-511.txt
//	declared-total-over   parts/part-{1,2,3}.txt, 6 MiB each, honest
//	budget-1, -2, -3      big.txt, 640 KiB, honest
//	dynamic               "resources": "dynamic"; SKILL.md and notes.md served
//	no-resources          no "resources" key; SKILL.md served
//	allowed-tools         frontmatter allowed-tools: [Bash, Write]
//	nested-allowed-tools  skill://nested-outer and skill://nested-outer/inner-tools (allowed-tools and
//	                      hooks); the outer's resources include the inner's files
//	same-name             skill://team-a/dupe and skill://team-b/dupe, both named dupe
//	case-collision        SKILL.md and Skill.md
//	tag-chars             SKILL.md body hides an instruction in U+E0000 tag characters and an HTML comment
//	escaping-children     directory read of skill://escaping-children adds skill://escaping-children/../etc,
//	                      file:///etc, skill://other/x, skill://honest-a/SKILL.md and a grandchild
//	endless-dir-cursor    directory read of skill://endless-dir-cursor: same children, a fresh cursor forever
//	slow-read             SKILL.md after SlowReadDelay (1 s)
//	hang-read             SKILL.md never, until the request is cancelled
//	die-mid-read          reading SKILL.md kills the server (below)
//	malformed-read        bad-base64.bin (blob not base64), other-uri.md (contents under another URI),
//	                      two-contents.md (two identical honest contents), huge.txt (2 MiB text, size 10),
//	                      text-and-blob.md (one content with both)
//	stale                 data.txt, by the state file's phase (State): a = list/get/read A;
//	                      b = read B, list/get A; c = read B, get B, list A
//	same-uri-other-origin skill://shared/SKILL.md and notes.md, embedding Options.Variant
//	restart               data.txt and inflight.txt, by the state file's phase: a = honest, content A;
//	                      dying = reading inflight.txt kills the server mid-answer (as die-mid-read),
//	                      after it moved the state file to new;
//	                      new = data.txt is content B in list, get and read
//	markdown-steering     honest; skill://markdown-steering/<segment>/steer/SKILL.md whose folder
//	                      segment and description carry Markdown, line breaks and invisible
//	                      characters (MarkdownSteeringSegment, MarkdownSteeringDescription)
//
// # Modes
//
// One per server; honest-a and honest-b (and the fixtures) are still
// served. endless-list: after the catalog, pages of two generated skills
// (endless-N, real and readable) with a fresh cursor forever.
// huge-list-page: after the catalog, one last page of at least
// Options.HugePage bytes (HugeListPageSize by default) of generated
// bulk-N skills; later requests on the session work. malformed-list: the
// first page mixes MalformedEntries with the honest entries; after the
// catalog, a page whose "skills" is an object. no-extension: no extension declared, skills/* are -32601.
// die-after-list: the first resources/read kills the server unanswered.
// heavy-list (not in Modes(); see ModeHeavyList): after the catalog,
// endless pages of Heavy.Entries heavy-N skills, each inside every
// per-skill limit (Heavy.Resources resources of Heavy.URILength-byte URIs,
// Heavy.DescriptionLength-byte descriptions) and readable.
// Not in Modes() either: http-500, http-close and redirect-secret
// (httpfail.go: HTTP requests answered 500, dropped, or redirected within
// the origin to a URL carrying RedirectUser, RedirectPass and
// RedirectToken); terminal-escapes and refuse-initialize (escapes.go:
// TerminalEscapes in a SKILL.md, a description, read and skills/get
// errors, or the initialize refusal). EnvEnvironFile makes Main write its
// environment to a file.
//
// Crowd modes (not in Modes(); see CrowdModes), Options.Crowd skills
// besides the honest two: same-name-crowd lists skill://crowd-N/x, all
// named x; escape-crowd lists skills whose folder segment and description
// are made of '<', '>', '&' (sent unescaped) and control characters;
// unlisted-crowd serves skill://walk/w-N through skills/get, directory
// reads and resources/read, and never lists them.
//
// In the 2026-07-28 protocol list, directory-read and read results carry
// ttlMs 0 and cacheScope Options.CacheScope ("private" by default).
//
// notify-storm: from the first skills/list on, notifications
// (resources/list_changed, message, progress, resources/updated) as fast
// as the connection takes them, over stdio and in-memory sessions.
//
// # Dying
//
// The handler marks the result; the layer writing bytes recognises the
// mark, so the server dies while that very response is on the wire: over
// stdio after writing the first half of its line (die-mid-read) or none of
// it (die-after-list), then os.Exit(3); over HTTP likewise, the
// connection closing with the process. With Options.Exit set (in-process
// tests) the exit is reported there, the connection is broken, and the
// server refuses every later request and session as a dead process would.
//
// # Access log and state
//
// Options.AccessLog gets "<method> <arg>" per message received, arg being
// the uri of resources/read, skills/get and resources/directory/read, the
// cursor of skills/list, "-" otherwise (quoted if it holds blanks); the
// file is opened for each line, so lines are in the file before the
// request is handled. Options.StateFile is re-read on every message;
// write it with WriteState (atomic) — an invalid file keeps the last phase.
//
// # HTTP extras
//
// Handler also serves the legacy SSE transport under SSEPath ("/sse").
// Options.HeaderLog gets "<METHOD> <path> <quoted Authorization>" for
// every HTTP request, before anything else happens to it, so a test can
// show which credentials reached this server. Options.RedirectTo answers
// every HTTP request with 307 to RedirectTo plus the request's path and
// query: a server that tries to hand its client, and the client's
// configured headers, to another origin.
package hostile
