package store

// timesName holds, per digest, when this host first held an entry naming
// that content (its format is package vfs's): what a file's mtime is, so
// that it survives remounts. Like flags.json it is informational — a
// tampered copy can change the times shown, never the bytes served — so it
// is written without fsync and a broken one is only logged.
const timesName = "times.bin"

// maxTimesSize bounds times.bin: 40 bytes an entry, so some 400 000
// digests, four times the default cap on resources in one listing.
const maxTimesSize = 16 << 20
