package verify

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/skillfs/skillfs/internal/skill"
)

// SEP-2640 per-skill limits, the defaults of EntryOptions.
const (
	DefaultMaxResources = 512
	DefaultMaxTotalSize = 16 << 20 // 16 MiB, summed over declared sizes
	DefaultMaxFileSize  = 16 << 20 // one file's declared size
)

// MaxNameLength is the Agent Skills limit on frontmatter.name.
const MaxNameLength = 64

// EntryOptions tune CheckEntry. The zero value is lenient with SEP limits.
type EntryOptions struct {
	// Strict accepts only the newest revision's shapes: every resource
	// carries size. (resources must be present, an array or "dynamic", in
	// either mode.)
	Strict bool
	// MaxResources bounds len(resources); 0 (or less) means 512.
	MaxResources int
	// MaxTotalSize bounds the sum of declared sizes; 0 (or less) means 16 MiB.
	MaxTotalSize int64
	// MaxFileSize bounds one declared size; 0 (or less) means 16 MiB.
	MaxFileSize int64
}

func (o EntryOptions) withDefaults() EntryOptions {
	if o.MaxResources <= 0 {
		o.MaxResources = DefaultMaxResources
	}
	if o.MaxTotalSize <= 0 {
		o.MaxTotalSize = DefaultMaxTotalSize
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	return o
}

// Skill is an entry that passed CheckEntry.
type Skill struct {
	Entry skill.Entry // as received
	URI   URI         // the SKILL.md
	Dir   URI         // the skill directory (URI minus the last segment)
	// Dynamic is true when the entry's resources is "dynamic": it
	// publishes no manifest, and its files cannot be verified.
	Dynamic bool
	Files   []File // one per resource, in manifest order; empty when Dynamic
	Flags   []Flag // from the entry's frontmatter, sorted
	// Private is set by the resolver when the skills/get answer that
	// carried the entry was marked cacheScope "private": the entry belongs
	// to the credentials it was asked with, as a private listing does.
	Private bool
}

// File is one resource of a checked skill. Resource points into the
// skill's Entry.Resources: a manifest is held once, and must not be
// changed after the check.
type File struct {
	Resource *skill.Resource
	URI      URI
}

// DecodeEntry decodes one skills/list or skills/get entry and checks it.
// JSON whose types are wrong is Malformed.
func DecodeEntry(raw []byte, opts EntryOptions) (*Skill, error) {
	e, err := skill.ParseEntry(raw)
	if err != nil {
		return nil, newError(Malformed, "entry", "%s", sanitize(err.Error()))
	}
	return CheckEntry(e, opts)
}

// CheckEntry applies every check SEP-2640 allows from the entry alone,
// before a byte of the skill is fetched, and returns the first failure.
func CheckEntry(e skill.Entry, opts EntryOptions) (*Skill, error) {
	opts = opts.withDefaults()
	u, err := ParseURI(e.URI)
	if err != nil {
		return nil, err
	}
	if len(u.Segments) == 0 || u.Name() != "SKILL.md" {
		return nil, newError(NotSkillMD, e.URI, "an entry's uri must end in /SKILL.md")
	}
	dir, _ := u.Parent()
	s := &Skill{Entry: e, URI: u, Dir: dir, Flags: FrontmatterFlags(e.Frontmatter)}
	if err := checkNameAndDescription(e, dir); err != nil {
		return nil, err
	}
	switch e.Manifest {
	case skill.Dynamic:
		s.Dynamic = true
		return s, nil
	case skill.Missing:
		// The Final text: an entry with no resources is invalid and never
		// loaded; only the string "dynamic" makes a dynamic skill.
		return nil, newError(MissingResources, e.URI, "the entry has no resources (neither an array nor \"dynamic\"); only \"resources\": \"dynamic\" makes a dynamic skill")
	case skill.Listed:
	default:
		return nil, newError(Malformed, e.URI, "unknown manifest form %v", e.Manifest)
	}
	if err := s.checkFiles(opts); err != nil {
		return nil, err
	}
	return s, nil
}

// checkNameAndDescription checks the frontmatter's name (a valid name, the
// skill directory's) and that it has a description.
func checkNameAndDescription(e skill.Entry, dir URI) error {
	nameVal, ok := e.Frontmatter["name"]
	name, isString := nameVal.(string)
	switch {
	case !ok:
		return newError(BadName, e.URI, "frontmatter has no name")
	case !isString:
		return newError(BadName, e.URI, "frontmatter.name is not a string")
	}
	if err := ValidName(name); err != nil {
		return newError(BadName, e.URI, "frontmatter.name %s", err.(*Error).Detail)
	}
	if dir.Name() != name {
		return newError(NameMismatch, e.URI, "the skill directory is %s but frontmatter.name is %s", quote(dir.Name()), quote(name))
	}
	desc, isString := e.Frontmatter["description"].(string)
	if !isString || strings.TrimSpace(desc) == "" {
		return newError(MissingDescription, e.URI, "frontmatter.description must be a non-blank string")
	}
	return nil
}

// checkFiles checks a listed manifest, resource by resource in order, and
// fills s.Files: each inside the skill directory with a well-formed digest
// and size, within the caps, none twice (canonically or by case folding),
// and the entry's own SKILL.md among them.
func (s *Skill) checkFiles(opts EntryOptions) error {
	e := &s.Entry
	if n := len(e.Resources); n > opts.MaxResources {
		return newError(OverLimit, e.URI, "%d resources, at most %d", n, opts.MaxResources)
	}
	self := s.URI.String()
	var (
		total   int64
		seen    = make(map[string]bool, len(e.Resources))
		folds   = newFoldSet()
		selfHit bool
	)
	s.Files = make([]File, 0, len(e.Resources))
	for i := range e.Resources {
		r := &e.Resources[i]
		ru, err := ParseURI(r.URI)
		if err != nil {
			return err
		}
		if !ru.Within(s.Dir) {
			return newError(OutsideSkill, r.URI, "not inside the skill directory %s", s.Dir.String())
		}
		if err := checkResourceSize(r, e.URI, total, opts); err != nil {
			return err
		}
		total += r.Size
		canon := ru.canonical(r.URI)
		if seen[canon] {
			return newError(DuplicateResource, r.URI, "listed twice (as %s)", canon)
		}
		seen[canon] = true
		selfHit = selfHit || canon == self
		if err := folds.add(ru.Segments[len(s.Dir.Segments):], r.URI); err != nil {
			return err
		}
		s.Files = append(s.Files, File{Resource: r, URI: ru})
	}
	if !selfHit {
		return newError(MissingSkillMD, e.URI, "resources does not list the entry's own SKILL.md")
	}
	return nil
}

// checkResourceSize checks one resource's digest format and declared size
// against the caps, total being the sizes declared before it.
func checkResourceSize(r *skill.Resource, entryURI string, total int64, opts EntryOptions) error {
	if err := CheckDigestFormat(r.Digest); err != nil {
		return WithSubject(err, r.URI)
	}
	switch {
	case !r.HasSize && opts.Strict:
		return newError(MissingSize, r.URI, "no size (required by the newest revision)")
	case r.HasSize && r.Size < 0:
		return newError(BadSize, r.URI, "size %d is negative", r.Size)
	case r.HasSize && r.Size > opts.MaxFileSize:
		return newError(OverLimit, r.URI, "declared size %d is more than the per-file cap %d", r.Size, opts.MaxFileSize)
	case r.HasSize && r.Size > opts.MaxTotalSize-total:
		return newError(OverLimit, entryURI, "declared sizes add up to more than %d bytes", opts.MaxTotalSize)
	}
	return nil
}

// foldSet detects resources that would be one path on a case-insensitive or
// normalising filesystem, and files that are also directories.
type foldSet struct {
	caser cases.Caser
	files map[string]string // folded relative path → raw uri
	dirs  map[string]string // folded directory path → raw uri that implied it
}

func newFoldSet() *foldSet {
	return &foldSet{caser: cases.Fold(), files: map[string]string{}, dirs: map[string]string{}}
}

// fold is canonical caseless matching: NFC(fold(NFD(s))), so that folding
// cannot leave a string that composes differently.
func (f *foldSet) fold(s string) string {
	if lower, ok := foldASCII(s); ok {
		return lower
	}
	return norm.NFC.String(f.caser.String(norm.NFD.String(s)))
}

// foldASCII folds an ASCII s, for which normalisation changes nothing
// and case folding is lowercasing; ok is false for any other s. s itself
// is returned when it has no uppercase letter.
func foldASCII(s string) (string, bool) {
	upper := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return "", false
		}
		upper = upper || ('A' <= c && c <= 'Z')
	}
	if !upper {
		return s, true
	}
	return strings.ToLower(s), true
}

func (f *foldSet) add(rel []string, uri string) error {
	parts := make([]string, len(rel))
	for i, seg := range rel {
		parts[i] = f.fold(seg)
	}
	key := strings.Join(parts, "/")
	if other, ok := f.files[key]; ok {
		return newError(Collision, uri, "same path as %s after Unicode normalisation and case folding", quote(other))
	}
	if other, ok := f.dirs[key]; ok {
		return newError(Collision, uri, "is a file, but %s needs it to be a directory", quote(other))
	}
	for i := 1; i < len(parts); i++ {
		d := strings.Join(parts[:i], "/")
		if other, ok := f.files[d]; ok {
			return newError(Collision, uri, "needs %s to be a directory, but it is a file", quote(other))
		}
	}
	f.files[key] = uri
	for i := 1; i < len(parts); i++ {
		d := strings.Join(parts[:i], "/")
		if _, ok := f.dirs[d]; !ok {
			f.dirs[d] = uri
		}
	}
	return nil
}

// ValidName checks the Agent Skills naming rules: 1–64 characters, only
// lowercase ASCII letters, digits and hyphens, no leading, trailing or
// doubled hyphen. BadName's Detail names the broken rule.
func ValidName(name string) error {
	switch {
	case name == "":
		return newError(BadName, name, "is empty")
	case utf8.RuneCountInString(name) > MaxNameLength:
		return newError(BadName, name, "is longer than %d characters", MaxNameLength)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z') && !(r >= '0' && r <= '9') && r != '-' {
			return newError(BadName, name, "%s may contain only lowercase letters a-z, digits and hyphens", quote(name))
		}
	}
	switch {
	case name[0] == '-':
		return newError(BadName, name, "%s starts with a hyphen", quote(name))
	case name[len(name)-1] == '-':
		return newError(BadName, name, "%s ends with a hyphen", quote(name))
	case strings.Contains(name, "--"):
		return newError(BadName, name, "%s contains a double hyphen", quote(name))
	}
	return nil
}

// CheckDigestFormat checks d is "sha256:" followed by 64 lowercase hex
// digits, the one form skill.ParseDigest reads.
func CheckDigestFormat(d skill.Digest) error {
	if _, err := skill.ParseDigest(d); err != nil {
		return newError(BadDigest, string(d), "want \"sha256:\" followed by 64 lowercase hex digits")
	}
	return nil
}

// DigestOf returns the SEP-2640 digest of b; it is skill.DigestOf.
func DigestOf(b []byte) skill.Digest { return skill.DigestOf(b) }
