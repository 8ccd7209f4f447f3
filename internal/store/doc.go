// Package store keeps the bytes skillfs has verified, so that a file is
// fetched from its server once and a restart with the server down still
// shows — and serves — what was verified before.
//
// # Layout
//
//	<root>/                              0700, default $XDG_CACHE_HOME/skillfs
//	  .identity-key                      0600, 32 random bytes keying origin ids (IdentityKey)
//	  <origin-id>/                       0700, one per origin identity
//	    catalog.json                     0600, the origin's last held catalog (its format is package vfs's)
//	    flags.json                       0600, content flags found per verified SKILL.md (package vfs's)
//	    approvals.json                   0600, the user's approvals of skills (package vfs's), written durably
//	    times.bin                        0600, when each digest was first held: the files' mtimes (package vfs's)
//	    last-used                        0600, empty: locked while a mount uses the origin; its mtime, when one last did (gc.go)
//	    objects/<hex[:2]>/<hex>          0400, a file's bytes, named by its sha256; mtime: when last used (gc.go)
//	    .tmp-<random>                    a write in progress (or left by a crash)
//
// The origin id (label plus a keyed fingerprint of the command, args, env,
// URL and headers, computed by package config with IdentityKey) keeps a
// label re-pointed at another server from reusing the old server's bytes. The store takes it as an opaque path segment and
// checks only that it is one (CheckID). Objects are content-addressed and
// never modified in place: a file is written under a temporary name and
// renamed. catalog.json is replaced the same way, durably (fsync of the
// file and the directory); objects are not fsynced, because a torn object
// fails its re-hash and is fetched again.
//
// # Sidecars
//
// catalog.json, approvals.json, flags.json and times.bin (Sidecar) are
// written only through a Saver, one per file and session: writes of one
// file are one at a time and in order, each an atomic replace (a locked
// O_EXCL temporary file, 0600, fsynced with its directory for the durable
// two, renamed into place; a symlink or directory at the name is replaced,
// never followed), capped before a byte is written. A Saver gathers a
// burst of changes into one write after a delay (Soon), or writes at once
// for a caller that must answer with the result (Write, or Save to encode
// the state when the write's turn comes); it skips a document the file
// already holds. Its Stop is the final flush: it waits for a write under
// way and ends the writes, so an exiting daemon never cuts one off and a
// new session of the origin never sees an old one land after it. A
// delayed write that fails is logged to the caller's logger and stays due.
//
// # Objects held by approvals
//
// An approval (approvals.json, package vfs) names objects of its bucket:
// the digest of every resource it approved and, in "kept", the files whose
// bytes it keeps so that `skillfs approve` can show the diff of a later
// change against them (vfs.MaxKeptFile, vfs.MaxKeptSkill). Those objects
// are held: eviction of any kind (a size cap, a gc) must never remove an
// object an approval record names. Package vfs lists them: the approval
// book's heldDigests for a mounted origin, vfs.ApprovalsHeld for the bytes
// of an approvals.json (LoadApprovals) of one that is not. An approval
// never carries over to another identity of its label;
// Bucket.EarlierApprovals only lets a pending skill say that it had one.
//
// # Trust
//
// The agent reading the mount usually runs as the same user as skillfs, so
// its tools can write here despite the modes. SEP-2640 then requires that
// every file served from a disk cache be re-hashed on access. So:
//
//   - Every load of an object from disk reads the whole file (at most
//     Options.MaxFileSize), hashes it and compares it with the digest the
//     caller holds before returning a byte. The caller's digest comes from
//     the entry it holds, never from the store.
//   - A file that fails — wrong hash, wrong size, a symlink, a FIFO or any
//     non-regular file, unreadable — is removed, logged at Warn with origin,
//     digest, path and reason, and reported as ErrNotFound: the caller
//     fetches afresh, exactly as after a mismatch on a fresh read.
//   - Verified bytes are kept in a memory cache shared by all origins (LRU,
//     bounded by Options.MemoryLimit). Memory hits are not re-hashed: the
//     agent cannot write into this process. Bytes returned by Get are
//     shared and must not be modified; the fs layer serves reads by slicing.
//   - Symlinks are never followed: paths are resolved through os.Root
//     handles (nothing resolves outside an origin's directory), and every
//     file and directory the store uses is Lstat-checked, the opened file
//     compared with what Lstat saw. Something planted in place of a store
//     directory or file is removed.
//   - The root itself must be a real directory owned by the user running
//     skillfs and not writable by group or others (Open refuses otherwise).
//
// A catalog over Options.MaxCatalogSize is refused; the refusal is kept
// (Bucket.CatalogUnsaved) for status.json, so that a catalog a restart
// will not show is never a silent skip.
//
// What this does not cover: catalog.json is only bounded and type-checked,
// not authenticated. An agent that rewrites it, while the server is down,
// changes which digests the next start believes; objects it plants under
// those digests then pass re-hashing. Re-hashing guards bytes against a held
// entry; it cannot guard the entry. Keeping the mount's consumers from
// writing the store's directory (a separate user, a sandbox) is the remedy.
//
// # Cleaning
//
// See gc.go: objects nothing holds are evicted least recently used first
// past Options.MaxSize (Options.Held, SetHeld: skillfs holds what running
// mounts' trees name and, as above, what approvals name), and origins no
// mount has used for keep_days are dropped whole.
//
// # Concurrency
//
// A Store and its Origins are safe for concurrent use. Two skillfs processes
// may share a root: temporary files are flock-ed by their writer, so the
// cleanup each Bucket call runs removes only those whose writer died.
package store
