package wire

// Why a skill waits for approval (Pending.Why).
const (
	// WhyNew: no approval of this skill was ever given to this server.
	WhyNew = "new"
	// WhyContent: approved once; files were added, removed or changed
	// since (Pending.Changed names them).
	WhyContent = "content-changed"
	// WhyFrontmatter: approved once; its frontmatter changed since
	// (Pending.Changed names the fields, and SKILL.md among the files).
	WhyFrontmatter = "frontmatter-changed"
	// WhyServerEntry: the skill was approved under another entry of the
	// same server label (another command argument, env value, URL or
	// header: another origin identity). Such approvals do not carry over.
	WhyServerEntry = "server-entry-changed"
)

// A Review is what `skillfs approve` shows of one skill before it asks:
// the server it comes from, the skill's name, description and content
// flags, and, for a skill approved once, each changed file against the
// version last approved. Binding is the digest of the entry reviewed: an
// approval of what the review showed names it.
type Review struct {
	Skill   SkillInfo  `json:"skill"`
	Server  ServerDesc `json:"server"`
	Binding string     `json:"binding"`
	Why     string     `json:"why,omitempty"`
	// Changed is what differs from the approved entry (Pending.Changed).
	Changed *ApprovalChange `json:"changed,omitempty"`
	// Files are the changed files, in path order, for a skill approved
	// once; empty for a new one.
	Files []FileReview `json:"files,omitempty"`
	// For a skill never approved (Why WhyNew or WhyServerEntry): SkillMD
	// is its SKILL.md as verified against the entry bound, at most
	// MaxShownSkillMD bytes of its SkillMDSize; SkillMDNote says why it is
	// cut or not shown. Listing is every file of the entry, in path order.
	SkillMD     []byte       `json:"skill_md,omitempty"`
	SkillMDSize int64        `json:"skill_md_size,omitempty"`
	SkillMDNote string       `json:"skill_md_note,omitempty"`
	Listing     []ListedFile `json:"listing,omitempty"`
}

// MaxShownSkillMD is the most of a new skill's SKILL.md a review carries.
const MaxShownSkillMD = 64 << 10

// A ListedFile is one file of a reviewed skill's entry: its size as
// declared and what to know of it before approving (ListedFile flags:
// FlagScript, FlagNestedSkill, FlagNotKept; a SKILL.md's content flags
// are the skill's).
type ListedFile struct {
	Path    string   `json:"path"` // mount-relative
	Size    int64    `json:"size"`
	HasSize bool     `json:"has_size"`
	Flags   []string `json:"flags,omitempty"`
}

// Flags of a ListedFile.
const (
	// FlagScript: a file an agent may be told to run (under scripts/, or
	// named as a script: .sh, .py, .js, ...).
	FlagScript = "script"
	// FlagNestedSkill: another skill's SKILL.md inside this one's
	// directory; approving this skill does not approve that one.
	FlagNestedSkill = "nested-skill"
	// FlagNotKept: past what an approval keeps for a later diff (256 KiB
	// a file, 1 MiB a skill): a change to it shows by size and digest.
	FlagNotKept = "not-kept-for-diffs"
)

// ServerDesc says which server a skill comes from, its secrets masked as
// `skillfs config check` masks them: env values and header values are not
// sent, only their names, and the URL's user info, query values and
// fragment are *** (config.MaskURL).
type ServerDesc struct {
	Label     string   `json:"label"`
	Transport string   `json:"transport"`
	Command   []string `json:"command,omitempty"` // stdio: the command and its arguments
	Env       []string `json:"env,omitempty"`     // stdio: names of the variables the config sets
	URL       string   `json:"url,omitempty"`     // http, sse: masked
	Headers   []string `json:"headers,omitempty"` // http, sse: names
}

// A FileReview is one changed file of a reviewed skill.
type FileReview struct {
	Path   string `json:"path"`   // mount-relative
	Change string `json:"change"` // "added", "removed", "changed"
	// Diff is the unified diff against the version last approved, from
	// the verified bytes of both (or, as Note says, of the new version
	// alone); empty when Note says why there is none.
	Diff string `json:"diff,omitempty"`
	// Note is the change without a diff: a binary file's size and digest,
	// a file past the diff caps or too large to diff, an approved version
	// whose bytes were not kept. Beside a Diff it says why the diff is not
	// against the approved version: its bytes were not kept, so Diff
	// shows the new version whole, as an added file.
	Note string `json:"note,omitempty"`
}
