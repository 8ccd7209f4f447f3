// Package vfs owns what the mount shows and serves; package fs only adapts
// it to go-fuse.
//
// The tree. The mount root holds one directory per configured origin, named
// by its host-assigned label, and the generated .skillfs directory
// (index.json, index.md, catalog.md — the skills catalog an agent host is
// given, see render.Catalog —, status.json, control.json — where the control
// socket is, controlfile.go —, and servers/LABEL.md for each origin: see
// package render, which renders them from a snapshot the mount
// takes: generated.go). Under an origin, every file of every held skill sits at
// the path its resource URI maps to (verify.URI.Path: skill://a/b/FILE →
// a/b/FILE, other schemes under @scheme/); directories
// are exactly the ancestors of those files. A skill directory therefore
// lists exactly its manifest, and nothing a server says outside the manifest
// (a directory read, a stray resources/list entry) adds a file to it.
//
// Rooms. Core (fs.go) is the mount surface: one route maps a
// mount-relative path to an origin's branch (branch.go) or to the
// generated files (meta.go), and it carries the feed of Change values
// that fs subscribes to. Consent (consent.go) is what the control socket
// serves the user's commands. The rows of index.json and of Consent's
// answers are built from one origin's tree at a time (rows.go). Each mount has its own memory policy
// (memory.go). A branch is one origin's part of the mount, made of parts
// that each have their own lock:
//
//   - catalog (catalog.go, times.go): the held entries — the immutable
//     tree, swaps, the unlisted skills confirmed with skills/get, the saved
//     copy in the store, the first time each digest was held — and the
//     Change of each swap. It needs neither MCP nor a kernel.
//   - reader (read.go, file.go, gate.go, flags.go, failures.go, dynamic.go):
//     the read path — one fetch for concurrent first reads, the origin's
//     fetch bounds, the checks that belong to the entry, learned lengths,
//     the verified set, content flags, failed reads, the stale-entry retry.
//     A File is one version of a file as the kernel holds it (an inode).
//   - dirReads (dirread.go): directory reads of unlisted territory and of
//     dynamic skills, and the confirmation of the skills they find.
//
// Snapshots. Each origin holds an immutable tree built from its last
// catalog; a new catalog (a re-list, a skills/get after a mismatch) builds a
// new tree and swaps it in atomically. Subscribers then learn the paths whose
// contents, children or times changed so the kernel's caches can be
// invalidated.
//
// Times. A file's mtime is when this host first held an entry naming its
// digest, kept in the store (times.bin), so re-lists, server restarts and
// remounts show the same times and only new content a new one; reading
// never moves it. A directory's is the newest below it. See SEMANTICS.md.
//
// Reads. A file's bytes come from the store when it holds them (re-hashed
// on every load from disk); otherwise the first read fetches the file with
// resources/read, checks size, digest and — for a SKILL.md — the
// frontmatter against every held entry whose SKILL.md it is, stores the
// bytes and only then serves them. Concurrent first reads of one file share
// one request. A failed check may mean the listing is stale: the owning
// skill is asked for again with skills/get (at most once per skill per
// Options.StaleRetry), a changed entry replaces the held one, and the read is
// retried once against it. Anything else fails the read with a *ReadError
// naming the reason, which index.json also shows.
//
// Listings. An origin whose listing a cap cut short shows what was kept;
// status.json ("truncated", "list_resources", "list_bytes") and index.json
// ("truncated", by origin) say why. A listing the server marked
// cacheScope "private" is saved under the origin's keyed identity, which
// covers its credentials (env, headers, URL), and shown again after a
// restart only under the same ones. On a mount shared with other users
// (--allow-other) a private catalog is withheld: the origin's directory is
// empty, index.json names none of its skills, and status.json and
// index.json ("withheld") say why. The catalog is still saved for the
// mounting user.
//
// Approval. Under approval: required (approval.go, consent.go) the catalog
// places only skills whose approval holds: a Binding of origin identity,
// URI, frontmatter and every (uri, size, digest), compared on every swap.
// The others are held back whole (in the control API's rows: state
// "pending", approval "pending" or "changed"; a dynamic skill is
// "rejected", reason "not-approvable"): no node of theirs is in the tree,
// no directory read is made (so no name the server chose shows before an
// approval), the generated files only count them and the origin's
// rejected entries (modelIndex: Index.PendingApproval,
// Index.RejectedNotShown), and a File
// of a skill that became pending fails with ReasonNotApproved. A nested
// skill is placed on its own approval with exactly its own manifest; its
// files stay plain files of an approved enclosing skill. Approve approves
// a skill only when the SkillRef names the Binding.Digest of the entry held
// at that instant (the one the user was shown); Approve and Revoke (the
// control socket's methods) save the origin's approvals.json once per call
// and rebuild the tree, so they take effect at once, the kernel told like
// any swap.
//
// Nothing is fetched ahead of need: Stat, ReadDir and Open never read a
// file; only the first read does.
package vfs
