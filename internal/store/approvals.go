package store

// approvalsName holds the user's approvals of the origin's skills (its
// format is package vfs's). Unlike flags.json it decides what the mount
// shows, so it is written durably; and like everything here it is
// host-only, not secret from an agent running as the same user (see the
// package doc: such an agent can also run `skillfs approve`).
const approvalsName = "approvals.json"

// MaxApprovalsSize bounds approvals.json.
const MaxApprovalsSize = 16 << 20
