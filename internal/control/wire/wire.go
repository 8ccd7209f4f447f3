// Package wire is the control endpoint's language: the values that cross
// the socket between a running mount (package vfs answers through
// vfs.Consent) and the commands of its user (package control's Client).
// Both sides import it; it imports nothing of skillfs but the skill
// package's plain types, so a client's import graph holds neither the
// mount's core nor MCP. The JSON spellings are an interface: status.json,
// index.json and every control answer are made of these types.
package wire

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/skillfs/skillfs/internal/skill"
)

// ErrNotFound marks a request that names nothing on the mount (a path,
// URI or label): the endpoint answers 404 and the command says so.
var ErrNotFound = errors.New("not found")

// ErrInvalid marks a request that cannot be right whatever the mount holds
// (400).
var ErrInvalid = errors.New("invalid request")

// ErrChanged marks an approval refused because a skill's entry is no
// longer the one the user was shown (409).
var ErrChanged = errors.New("changed since you looked")

// NotFound is an error that Is ErrNotFound with a message of its own.
func NotFound(format string, args ...any) error {
	return &notFound{fmt.Sprintf(format, args...)}
}

type notFound struct{ msg string }

func (e *notFound) Error() string        { return e.msg }
func (e *notFound) Is(target error) bool { return target == ErrNotFound }

// A SkillRef names one skill: by mount-relative skill directory
// ("acme/billing/refunds"), or by origin label and SKILL.md URI.
type SkillRef struct {
	Path   string `json:"path,omitempty"`
	Origin string `json:"origin,omitempty"`
	URI    string `json:"uri,omitempty"`
	// Binding, in an approval, is the digest (Binding.Digest) of the
	// entry the user was shown, from Pending or Inspection; the skill is
	// approved only if the mount still holds exactly that.
	Binding string `json:"binding,omitempty"`
}

func (r SkillRef) String() string {
	if r.Path != "" {
		return r.Path
	}
	return r.Origin + " " + r.URI
}

// Inspection describes one skill for skillfs inspect.
type Inspection struct {
	Skill    SkillInfo       `json:"skill"`
	Entry    json.RawMessage `json:"entry"` // the held entry as the server sent it
	Files    []FileState     `json:"files"`
	Approval *ApprovalState  `json:"approval,omitempty"`
	// Binding is the digest of the entry as held (Binding.Digest): what
	// an approval of what this inspection shows must name.
	Binding string `json:"binding,omitempty"`
}

// FileState is one file of an inspected skill.
type FileState struct {
	Path     string `json:"path"` // mount-relative
	URI      string `json:"uri"`
	Digest   string `json:"digest"`
	Size     int64  `json:"size"`
	Verified bool   `json:"verified"` // passed every check in this run
	Cached   bool   `json:"cached"`   // the store holds bytes of its digest
}

// ApprovalState is an inspected skill's approval.
type ApprovalState struct {
	Required bool `json:"required"`
	// State: "approved", "pending", "changed", "refused" (dynamic under
	// required), "not-required".
	State string    `json:"state"`
	At    time.Time `json:"approved_at,omitzero"`
	// Bound is what the approval is bound to (for "changed", the entry as
	// approved, not as held now).
	Bound *Binding `json:"bound,omitempty"`
}

// Pending is a skill waiting for approval.
type Pending struct {
	Skill SkillInfo `json:"skill"`
	// Changed is what differs from the approved entry; nil for a skill
	// never approved.
	Changed *ApprovalChange `json:"changed,omitempty"`
	// Binding is the digest of the entry as held (Binding.Digest): what
	// an approval of this row must name.
	Binding string `json:"binding"`
	// Why it waits: WhyNew, WhyContent, WhyFrontmatter or WhyServerEntry.
	Why string `json:"why,omitempty"`
}

// A Binding is what an approval is bound to.
type Binding struct {
	Origin      string           `json:"origin"`
	Fingerprint string           `json:"fingerprint"`
	URI         string           `json:"uri"`
	Frontmatter map[string]any   `json:"frontmatter"`
	Resources   []skill.Resource `json:"resources"`
}

// Digest is the binding's digest, "sha256:" and 64 hex digits: sha256 over
// its canonical JSON (fields in the order above, frontmatter keys sorted,
// resources sorted by URI as bindingOf sorts them, no HTML escaping). The
// control endpoint shows it with every pending skill and inspection, and
// an approval names it: the daemon approves a skill only when the digest
// of the entry it holds is the one the user was shown.
func (b Binding) Digest() string {
	h := sha256.New()
	enc := json.NewEncoder(h)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(b); err != nil {
		// Unencodable frontmatter cannot be shown either: no digest
		// matches it.
		return ""
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// An ApprovalChange is what differs between an approval's binding and the
// entry now held: files by path (mount-relative), frontmatter by field.
type ApprovalChange struct {
	Added       []string `json:"files_added,omitempty"`
	Removed     []string `json:"files_removed,omitempty"`
	Changed     []string `json:"files_changed,omitempty"`
	Frontmatter []string `json:"frontmatter_changed,omitempty"`
}

// SkillInfo is one row of index.json.
type SkillInfo struct {
	Origin      string `json:"origin"`
	URI         string `json:"uri"`
	Path        string `json:"path,omitempty"` // mount-relative skill directory
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	// State: "available" (held; files are fetched and verified when read),
	// "failed" (a file failed; Reason says why), "dynamic" (shown
	// unverified, allow_dynamic), "pending" (held, but not in the tree
	// until the user approves it: approval required; such rows are in
	// the control API's answers only, index.json counts them), "rejected" (left out
	// of the tree; a dynamic skill under approval: required is rejected
	// with reason "not-approvable").

	State  SkillState `json:"state"`
	Reason string     `json:"reason,omitempty"`
	Detail string     `json:"detail,omitempty"`
	// Flags are content and frontmatter findings, reported and never acted
	// on: allowed-tools and hooks are requested-and-ignored.
	Flags         []string `json:"flags,omitempty"`
	Source        string   `json:"source,omitempty"` // "list", "pin", "get", "instructions"
	Files         int      `json:"files,omitempty"`
	VerifiedFiles int      `json:"verified_files,omitempty"`
	// NestedIn is the enclosing skill's path: this skill's files are plain
	// files of that one, and loading it as a skill needs its own approval.
	NestedIn string `json:"nested_in,omitempty"`
	// Collisions are other skills, in any origin, with the same name: at
	// most render.MaxCollisionExamples (3) of them; CollisionCount is how many there
	// are in all.
	Collisions     []string `json:"name_collisions,omitempty"`
	CollisionCount int      `json:"name_collision_count,omitempty"`
	// Approval is the skill's approval state when its origin requires
	// approval: "approved", "pending" (never approved), "changed" (the
	// entry differs from the approved one), "refused" (dynamic); "" when
	// approval is not required.
	Approval string `json:"approval,omitempty"`
}

// OriginStatus is one origin in status.json.
type OriginStatus struct {
	Label         string      `json:"label"`
	ID            string      `json:"id"`
	Transport     string      `json:"transport"`
	State         OriginState `json:"state"`
	Protocol      string      `json:"protocol,omitempty"`
	ServerName    string      `json:"server_name,omitempty"`
	DirectoryRead bool        `json:"directory_read"`
	Catalog       string      `json:"catalog"` // "live", "saved" or "none"
	Skills        int         `json:"skills"`
	Rejected      int         `json:"rejected"`
	Truncated     string      `json:"truncated,omitempty"`
	// ListResources and ListBytes are what the listing cost against
	// max_list_resources and max_list_bytes.
	ListResources int   `json:"list_resources"`
	ListBytes     int64 `json:"list_bytes"`
	// CacheScope is the listing's cacheScope, "public" or "private".
	CacheScope string `json:"cache_scope,omitempty"`
	// Withheld says why the catalog is not shown on this mount.
	Withheld string `json:"withheld,omitempty"`
	// CatalogUnsaved says why the catalog could not be saved: a restart
	// with the server down will not show it.
	CatalogUnsaved string    `json:"catalog_unsaved,omitempty"`
	ListedAt       time.Time `json:"listed_at,omitzero"`
	BytesFetched   int64     `json:"bytes_fetched"`
	Budget         int64     `json:"budget"`
	BudgetWindow   string    `json:"budget_window"` // bytes_fetched counts what this window saw
	// KeepFetched is what the mount fetched in the window to keep approved
	// files for later diffs, against KeepBudget (a quarter of Budget):
	// an account of its own, not counted in BytesFetched.
	KeepFetched int64     `json:"keep_fetched"`
	KeepBudget  int64     `json:"keep_budget"`
	Reads       int64     `json:"reads"`
	FailedReads int       `json:"failed_reads"`
	LastError   string    `json:"last_error,omitempty"`
	LastErrorAt time.Time `json:"last_error_at,omitzero"`
	// FailedStarts counts the attempts in a row that could not start a
	// session (state "gave-up" once it reaches limits.start_attempts).
	FailedStarts int `json:"failed_starts,omitempty"`
	// Instructions are the first render.MaxInstructions bytes of the
	// instructions the server sent at connect, exactly; InstructionsBytes
	// is their whole length. Under approval: required the mount leaves
	// them out of what the generated files are rendered from and says why
	// in InstructionsNotShown (internal/vfs/instructions.go).
	Instructions         string `json:"instructions,omitempty"`
	InstructionsBytes    int    `json:"instructions_bytes,omitempty"`
	InstructionsNotShown string `json:"instructions_not_shown,omitempty"`
}

// Status is the content of .skillfs/status.json.
type Status struct {
	Version   string         `json:"version"`
	StartedAt time.Time      `json:"started_at"`
	Origins   []OriginStatus `json:"origins"`
	Cache     CacheStatus    `json:"cache"`
	// Reload is set while the last reload of the config (SIGHUP) failed:
	// the mount serves the servers it had.
	Reload *ReloadStatus `json:"reload,omitempty"`
}

// CacheStatus is the store's counters: how reads were served.
type CacheStatus struct {
	MemoryBytes   int64  `json:"memory_bytes"`
	MemoryHits    uint64 `json:"memory_hits"`
	DiskLoads     uint64 `json:"disk_loads"`
	Discards      uint64 `json:"discards"`
	PendingWrites int64  `json:"pending_writes"`
	// MaxSize is cache.max_size, 0 when there is no bound. HeldOverMaxSize
	// is set when the files running mounts and approvals hold take more
	// than it on their own: they are all kept, and the cache stays over.
	MaxSize         int64 `json:"max_size,omitempty"`
	HeldOverMaxSize int64 `json:"held_over_max_size,omitempty"`
}

// A ReloadStatus is status.json's "reload": the last reload failed, and
// why. It is absent once a reload succeeds.
type ReloadStatus struct {
	At    time.Time `json:"at"`
	Error string    `json:"error"`
}

// ControlEndpoint is the content of .skillfs/control.json: what a client
// reads to find a mount's socket.
type ControlEndpoint struct {
	// Mountpoint is the mount's path as the daemon knows it.
	Mountpoint string `json:"mountpoint"`
	// PID is the process serving the mount, which also answers on Socket.
	PID int `json:"pid"`
	// Socket is the control socket's path; empty while the mount has
	// none (not yet started, or it could not be; the log says why).
	Socket string `json:"socket,omitempty"`
}

// MountInfo describes the mount a server answers for.
type MountInfo struct {
	Path     string    `json:"path"`
	PID      int       `json:"pid"`
	Started  time.Time `json:"started"`
	CacheDir string    `json:"cache_dir"`
}

// StatusReport is the answer to `skillfs status`.
type StatusReport struct {
	Mount      MountInfo      `json:"mount"`
	Uptime     string         `json:"uptime"`
	CacheBytes int64          `json:"cache_bytes"`
	Version    string         `json:"version"`
	Servers    []ServerStatus `json:"servers"`
	Cache      CacheStatus    `json:"cache"`
	// State is MountStarting while the servers are still listing and the
	// tree is not mounted yet, MountLive after.
	State string `json:"state,omitempty"`
	// Reload is set while the last reload of the config failed.
	Reload *ReloadStatus `json:"reload,omitempty"`
}

// ServerStatus is one server in a StatusReport: status.json's row plus the
// skills counted by state.
type ServerStatus struct {
	OriginStatus
	Available int `json:"available"`
	Pending   int `json:"pending"`
	Failed    int `json:"failed"`
	// PendingWhy counts the pending skills by why they wait (Pending.Why).
	PendingWhy map[string]int `json:"pending_why,omitempty"`
	// Exit: the server (stdio) last ended on its own, and how; absent if
	// it has not. Not in status.json (ServerExit says why).
	Exit *ServerExit `json:"exit,omitempty"`
	// Stderr counts what the server (stdio) wrote to its stderr since the
	// mount started, with its last warnings; absent if it wrote nothing.
	// Not in status.json, for the same reason as Exit.
	Stderr *ServerStderr `json:"stderr,omitempty"`
}

// MetaDir is the generated directory at a mount's root, and
// ControlFileName the file in it that holds the mount's ControlEndpoint.
const (
	MetaDir         = ".skillfs"
	ControlFileName = "control.json"
)

// A SkillState is a skill's "state" in index.json and the control answers.
type SkillState string

const (
	// SkillAvailable is held: its files are fetched and verified when read.
	SkillAvailable SkillState = "available"
	// SkillFailed is held, and a file of it failed (Reason says why).
	SkillFailed SkillState = "failed"
	// SkillDynamic is shown unverified (allow_dynamic).
	SkillDynamic SkillState = "dynamic"
	// SkillPending is held, but not in the tree until the user approves it.
	SkillPending SkillState = "pending"
	// SkillRejected is left out of the tree (Reason says why).
	SkillRejected SkillState = "rejected"
	// SkillRemoved is a skill an approval or revocation named that the
	// server's listing no longer has.
	SkillRemoved SkillState = "removed"
)

// An OriginState is an origin's "state" in status.json: its MCP session's,
// as the resolver names them (resolver.State).
type OriginState string

const (
	OriginConnecting OriginState = "connecting"
	OriginConnected  OriginState = "connected"
	OriginNoSkills   OriginState = "no-skills"
	OriginOffline    OriginState = "offline"
	OriginFailed     OriginState = "failed-to-start"
	OriginGaveUp     OriginState = "gave-up"
	OriginStopped    OriginState = "stopped"
)
