// Package control is the local endpoint a running mount answers its user's
// commands on (`skillfs status`, `list`, `inspect`, `pending`, `approve`,
// `revoke`, `get`), and the client those commands use to find it.
//
// Transport. HTTP/1.1 over a unix socket, one POST endpoint per method
// (/v1/status, /v1/approve, …), JSON in and out; a failure is
// {"error": "..."} with 404 for a path, URI or label that names nothing,
// 400 for a request that cannot be right, 409 for an approval of a skill
// that changed since the user was shown it (each approved ref names the
// binding digest shown; see vfs.Consent.Approve), 500 otherwise.
//
// Who may connect. The socket is 0600 in a directory that is 0700 and owned
// by the user: $XDG_RUNTIME_DIR/skillfs/ when XDG_RUNTIME_DIR names a
// directory the user owns, else <cache-dir>/run/. Serve refuses a directory
// owned by someone else or writable by group or others. On Linux each
// connection's peer uid (SO_PEERCRED) must also be the daemon's own, so a
// mode loosened by mistake still lets no one else in.
//
// Finding a mount. Beside each socket the daemon writes <name>.json
// (mountpoint, pid, socket, start time; <name> is a hash of the
// mountpoint), written atomically after the socket listens and removed with
// it at exit. Find reads the registrations of every candidate directory,
// trusting only what is the user's own (trust.go: directory, registration
// and socket checked without following links, and the uid and pid of the
// process answering), removes those of the user's daemons that died
// without cleaning up (pid gone, or the socket refuses), and picks the one
// for --mount DIR, or the only one. What it skipped it reports. Given
// --mount DIR and no registration for it, Find reads the mount's own
// .skillfs/control.json with a timeout (mountfile.go) and checks the
// endpoint it names the same way; it is never called from the process
// serving a mount.
//
// Shell completion. POST /v1/complete answers the skill paths that start
// with a prefix, one path segment at a time, at most MaxCompletions, with
// the count of those left out (complete.go): the mount filters, so that
// a completion reads a short answer whatever the mount holds. Mounts
// lists the running mounts' mountpoints.
//
// Refused connections are logged once, then counted (refusals.go).
//
// The daemon side is the API interface, implemented over the mount's core;
// this package knows nothing of FUSE.
package control
