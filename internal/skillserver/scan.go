package skillserver

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/verify"
)

// SEP-2640 per-skill limits. Hosts must accept skills up to these and may
// refuse larger ones, so the server refuses to publish larger ones.
const (
	maxResources  = verify.DefaultMaxResources
	maxSkillBytes = verify.DefaultMaxTotalSize
)

// entryChecks are the host's checks every published entry must pass:
// strict, the newest revision's shapes, at the SEP limits.
var entryChecks = verify.EntryOptions{Strict: true}

// racyWindow: a file changed this shortly before it was read may change
// again within the same timestamp tick without its size, mtime or ctime
// moving, so what was read from it is not trusted on the next scan (git's
// "racy" entries, for the same reason).
const racyWindow = time.Second

// A fileKey identifies one version of a file on disk; see keyOf.
type fileKey struct {
	size         int64
	mtime, ctime int64
	dev, ino     uint64
}

// A cacheEntry is what the scanner learned from reading one version of a
// file, kept so that an unchanged file is never read again.
type cacheEntry struct {
	key    fileKey
	digest skill.Digest
	size   int64
	utf8   bool
	racy   bool // see racyWindow; a racy entry is read again next scan
	// For SKILL.md files only: the parsed frontmatter or why it failed.
	fmParsed bool
	fm       map[string]any
	fmErr    error
	// fmEither: the plain scalars YAML 1.1 and 1.2 read differently.
	fmEither []string
}

// A walkedFile is a regular file found under DIR.
type walkedFile struct {
	rel     string     // slash-separated path below DIR
	segs    []string   // rel split into names
	path    string     // filesystem path, possibly through symlinks
	viaLink bool       // some component of path below DIR is a symlink
	key     fileKey    //
	uri     verify.URI // zero for files directly in DIR, which no skill holds
}

// scanner turns DIR into catalogs. Everything but the fixed fields at the
// top is owned by whoever holds library.mu.
type scanner struct {
	dir      string // DIR as the user wrote it, for messages
	root     string // absolute DIR
	realRoot string // DIR with symlinks resolved, for containment checks
	// openFile opens a file for reading; tests replace it to simulate
	// unreadable files, which root cannot produce with permissions.
	openFile func(name string) (*os.File, error)

	cache  map[string]*cacheEntry // by rel
	uris   map[string]verify.URI  // by rel, for paths that passed uriOf
	last   *walk                  // the walk behind lastCat
	lastOK bool                   // lastCat may stand for an equal walk
	// lastCat is the latest catalog: a rescan whose walk equals last (and
	// read nothing racy) returns it as it is.
	lastCat *catalog
	hashed  int // files read so far, for tests of the cache
}

func newScanner(dir string) (*scanner, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", dir, err)
	}
	return &scanner{
		dir:      dir,
		root:     abs,
		realRoot: real,
		openFile: openNoFollow,
		cache:    map[string]*cacheEntry{},
		uris:     map[string]verify.URI{},
	}, nil
}

// openNoFollow opens a regular file without blocking: O_NONBLOCK keeps a
// FIFO swapped in since the scan from hanging the open, and O_NOFOLLOW
// refuses a final component that became a symlink after it was resolved.
func openNoFollow(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
}

var (
	errOutside    = errors.New("resolves outside DIR")
	errNotRegular = errors.New("not a regular file")
	errTooLarge   = fmt.Errorf("larger than %d bytes", maxSkillBytes)
)

// within reports whether path is root or below it.
func within(root, path string) bool {
	if path == root {
		return true
	}
	return strings.HasPrefix(path, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

// openServed opens a file that is being served. Symlinks are resolved and
// the result must still lie inside DIR: a link re-pointed outside after the
// scan is refused at read time, not only at the next scan.
func (sc *scanner) openServed(path string) (*os.File, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	if !within(sc.realRoot, real) {
		return nil, errOutside
	}
	return sc.openRegular(real)
}

// openRegular opens path and makes sure it is a regular file.
func (sc *scanner) openRegular(path string) (*os.File, error) {
	f, err := sc.openFile(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, errNotRegular
	}
	return f, nil
}

// openWalked opens a file the walk just found. One whose path crossed no
// symlink is opened as it is (O_NOFOLLOW refuses a link swapped in since);
// resolving every path component costs more than hashing a small file.
func (sc *scanner) openWalked(f walkedFile) (*os.File, error) {
	if f.viaLink {
		return sc.openServed(f.path)
	}
	return sc.openRegular(f.path)
}

// readAll reads at most a skill's worth of bytes from f, into a buffer of
// the size fstat gives (io.ReadAll alone would grow one by doubling: about
// twice the file in allocations, which a large file makes costly).
func readAll(f *os.File) ([]byte, error) {
	defer f.Close()
	var buf bytes.Buffer
	if fi, err := f.Stat(); err == nil && fi.Size() >= 0 && fi.Size() <= maxSkillBytes {
		buf.Grow(int(fi.Size()) + bytes.MinRead) // room for the read that finds the end
	}
	if _, err := buf.ReadFrom(io.LimitReader(f, maxSkillBytes+1)); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	if len(b) > maxSkillBytes {
		return nil, errTooLarge
	}
	return b, nil
}

// readServed returns the current bytes of a served file.
func (sc *scanner) readServed(path string) ([]byte, error) {
	f, err := sc.openServed(path)
	if err != nil {
		return nil, err
	}
	return readAll(f)
}

// A walk is the raw result of walking DIR.
type walk struct {
	files     []walkedFile
	skillDirs [][]string // folders holding a SKILL.md, as segments
	problems  []Problem
}

// same reports whether two walks saw the same files in the same versions.
func (w *walk) same(o *walk) bool {
	if o == nil || len(w.files) != len(o.files) || len(w.skillDirs) != len(o.skillDirs) || !slices.Equal(w.problems, o.problems) {
		return false
	}
	for i := range w.files {
		a, b := &w.files[i], &o.files[i]
		if a.rel != b.rel || a.key != b.key || a.path != b.path || a.viaLink != b.viaLink {
			return false
		}
	}
	for i := range w.skillDirs {
		if !slices.Equal(w.skillDirs[i], o.skillDirs[i]) {
			return false
		}
	}
	return true
}

// display is the path a person reads for rel, a path below dir.
func display(dir, rel string) string {
	if rel == "" {
		return dir
	}
	return filepath.Join(dir, filepath.FromSlash(rel))
}

func (w *walk) problem(sc *scanner, rel, format string, args ...any) {
	w.problems = append(w.problems, Problem{Path: display(sc.dir, rel), Reason: fmt.Sprintf(format, args...)})
}

// walkTree lists every regular file below DIR. Only DIR itself being
// unreadable is an error; anything below it that cannot be walked is a
// Problem.
func (sc *scanner) walkTree() (*walk, error) {
	fi, err := os.Stat(sc.root)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", sc.dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("scan %s: not a directory", sc.dir)
	}
	entries, err := os.ReadDir(sc.root)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", sc.dir, err)
	}
	w := &walk{}
	k := keyOf(fi)
	ancestors := map[[2]uint64]bool{{k.dev, k.ino}: true}
	uris := make(map[string]verify.URI, len(sc.uris))
	sc.walkDir(w, sc.root, nil, false, entries, ancestors, uris)
	sc.uris = uris
	sort.Slice(w.files, func(i, j int) bool { return w.files[i].rel < w.files[j].rel })
	return w, nil
}

func (sc *scanner) walkDir(w *walk, path string, segs []string, viaLink bool, entries []fs.DirEntry, ancestors map[[2]uint64]bool, uris map[string]verify.URI) {
	for _, e := range entries {
		name := e.Name()
		// VCS metadata is no part of a skill, and a work tree's .git holds
		// thousands of files; every other hidden file (.gitignore,
		// .editorconfig) is served as the author wrote it.
		if name == ".git" {
			continue
		}
		childSegs := append(slices.Clip(segs), name)
		rel := strings.Join(childSegs, "/")
		full := filepath.Join(path, name)
		link := e.Type()&fs.ModeSymlink != 0
		var fi fs.FileInfo
		var err error
		if link {
			var real string
			real, err = filepath.EvalSymlinks(full)
			if err != nil {
				w.problem(sc, rel, "broken symlink: %v", unwrapPathError(err))
				continue
			}
			if !within(sc.realRoot, real) {
				w.problem(sc, rel, "symlink resolves outside DIR (to %s)", real)
				continue
			}
			fi, err = os.Stat(real)
		} else {
			fi, err = e.Info()
		}
		if err != nil {
			w.problem(sc, rel, "cannot stat: %v", unwrapPathError(err))
			continue
		}
		if len(segs) == 0 && !fi.IsDir() {
			// Files directly in DIR belong to no skill (a skill is a
			// folder); only a SKILL.md there is worth a word.
			if name == "SKILL.md" && fi.Mode().IsRegular() {
				w.skillDirs = append(w.skillDirs, nil)
			}
			continue
		}
		u, ok := sc.uris[rel]
		if !ok {
			if u, err = uriOf(childSegs); err != nil {
				w.problem(sc, rel, "%s", reason(err))
				continue
			}
		}
		uris[rel] = u
		switch {
		case fi.IsDir():
			k := keyOf(fi)
			id := [2]uint64{k.dev, k.ino}
			if ancestors[id] {
				w.problem(sc, rel, "symlinked folder loops back to a folder that encloses it")
				continue
			}
			sub, err := os.ReadDir(full)
			if err != nil {
				w.problem(sc, rel, "cannot read folder: %v", unwrapPathError(err))
				continue
			}
			ancestors[id] = true
			sc.walkDir(w, full, childSegs, viaLink || link, sub, ancestors, uris)
			delete(ancestors, id)
		case fi.Mode().IsRegular():
			w.files = append(w.files, walkedFile{rel: rel, segs: childSegs, path: full, viaLink: viaLink || link, key: keyOf(fi), uri: u})
			if name == "SKILL.md" {
				w.skillDirs = append(w.skillDirs, slices.Clone(segs))
			}
		default:
			w.problem(sc, rel, "special file (%s) is not served", kindOf(fi.Mode()))
		}
	}
}

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return m.Type().String()
}

// unwrapPathError drops the path from an *fs.PathError: Problems already
// name the path, relative to DIR.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// A pass is one scan in progress: the cache it builds, and whether it read
// anything racy.
type pass struct {
	start time.Time
	next  map[string]*cacheEntry
	racy  bool
}

// lookup returns the cache entry for f if it is still current, moving it
// into the pass's cache.
func (sc *scanner) lookup(f walkedFile, p *pass) *cacheEntry {
	if ce := p.next[f.rel]; ce != nil && ce.key == f.key {
		return ce
	}
	if ce := sc.cache[f.rel]; ce != nil && ce.key == f.key && !ce.racy {
		p.next[f.rel] = ce
		return ce
	}
	return nil
}

// store records what was read from f, marking it racy when its content
// changed too shortly before the pass began. (A rewrite that restores an
// old mtime moves ctime, which is part of the key, so mtime is the one to
// watch.)
func (p *pass) store(f walkedFile, ce *cacheEntry) {
	if ce.key.mtime >= p.start.Add(-racyWindow).UnixNano() {
		ce.racy, p.racy = true, true
	}
	p.next[f.rel] = ce
}

// hash returns the digest, size and UTF-8 validity of f, reading it only
// when the cache has nothing for its current key. The bytes are streamed
// through the hash, never held.
func (sc *scanner) hash(f walkedFile, p *pass) (*cacheEntry, error) {
	if ce := sc.lookup(f, p); ce != nil {
		return ce, nil
	}
	if f.segs[len(f.segs)-1] == "SKILL.md" {
		return sc.readSkillMD(f, p)
	}
	fh, err := sc.openWalked(f)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	sc.hashed++
	h := sha256.New()
	u := &utf8Checker{ok: true}
	n, err := io.Copy(io.MultiWriter(h, u), io.LimitReader(fh, maxSkillBytes+1))
	if err != nil {
		return nil, err
	}
	if n > maxSkillBytes {
		return nil, errTooLarge
	}
	ce := &cacheEntry{
		key:    f.key,
		digest: skill.FormatDigest([sha256.Size]byte(h.Sum(nil))),
		size:   n,
		utf8:   u.valid(),
	}
	p.store(f, ce)
	return ce, nil
}

// readSkillMD reads a SKILL.md once for both its digest and its
// frontmatter. Unlike other files it is held briefly in memory: the
// frontmatter parser needs the bytes.
func (sc *scanner) readSkillMD(f walkedFile, p *pass) (*cacheEntry, error) {
	if ce := sc.lookup(f, p); ce != nil && ce.fmParsed {
		return ce, nil
	}
	fh, err := sc.openWalked(f)
	if err != nil {
		return nil, err
	}
	b, err := readAll(fh)
	if err != nil {
		return nil, err
	}
	sc.hashed++
	ce := &cacheEntry{
		key:      f.key,
		digest:   skill.DigestOf(b),
		size:     int64(len(b)),
		utf8:     utf8.Valid(b),
		fmParsed: true,
	}
	ce.fm, _, ce.fmErr = verify.ParseFrontmatter(b)
	if ce.fmErr == nil {
		ce.fmEither = verify.FrontmatterAmbiguities(b)
	}
	if bytes.HasPrefix(b, utf8BOM) {
		// verify's check forgives one leading BOM; a strict client (the
		// SKILL.md must begin with "---") does not, and the bytes are
		// served as they are on disk. So serve refuses the skill.
		ce.fmErr = errBOM
	}
	p.store(f, ce)
	return ce, nil
}

var utf8BOM = []byte("\xEF\xBB\xBF")

// errBOM refuses a SKILL.md that starts with a UTF-8 byte order mark.
var errBOM = errors.New(`starts with a UTF-8 byte order mark (EF BB BF), and a SKILL.md must begin with "---": save it as UTF-8 without a BOM`)

// forget drops what is cached about rel (a read found it changed although
// its key did not) so that the next scan reads it again.
func (sc *scanner) forget(rel string) {
	delete(sc.cache, rel)
	sc.lastOK = false
}

// A served file is one file resource of the catalog.
type served struct {
	path   string // filesystem path
	rel    string // path below DIR
	size   int64
	digest skill.Digest
	res    *mcp.Resource // what resources/list and directory reads show
}

// A catalog is one immutable snapshot of what the server publishes.
type catalog struct {
	gen      uint64
	skills   []skill.Entry     // sorted by URI
	skillIdx map[string]int    // SKILL.md URI → index in skills
	refused  map[string]string // SKILL.md URI of a refused skill → reason
	files    map[string]*served
	dirs     map[string][]skill.DirChild // directory URI → children sorted by URI
	problems []Problem
	// warnings: what is published but may mean something else to a
	// client (frontmatter YAML 1.1 reads otherwise), sorted by path.
	warnings []Problem
}

// scan walks DIR and builds a catalog; when nothing changed since the last
// scan it returns the last catalog itself. It returns an error only when
// DIR itself cannot be read.
func (sc *scanner) scan() (*catalog, error) {
	start := time.Now()
	w, err := sc.walkTree()
	if err != nil {
		return nil, err
	}
	if sc.lastOK && w.same(sc.last) {
		return sc.lastCat, nil
	}
	p := &pass{start: start, next: map[string]*cacheEntry{}}
	cat := sc.build(w, p)
	sc.cache = p.next
	sc.last, sc.lastCat, sc.lastOK = w, cat, !p.racy
	return cat, nil
}

// build makes the catalog of one walk: every skill that passes a host's
// checks, and a Problem for every one refused and every file not served.
func (sc *scanner) build(w *walk, p *pass) *catalog {
	cat := &catalog{
		skillIdx: map[string]int{},
		refused:  map[string]string{},
		files:    map[string]*served{},
		dirs:     map[string][]skill.DirChild{},
		problems: slices.Clone(w.problems),
	}
	var members [][]member // per accepted skill, parallel to cat.skills
	for _, segs := range w.skillDirs {
		entry, ms, why := sc.readSkill(cat, w.files, p, segs)
		if why != "" {
			sc.refuse(cat, segs, why)
			continue
		}
		cat.skills = append(cat.skills, entry)
		members = append(members, ms)
		md := ms[0] // SKILL.md comes first
		for _, e := range md.ce.fmEither {
			cat.warnings = append(cat.warnings, Problem{Path: display(sc.dir, md.f.rel), Reason: "frontmatter " + e +
				"; published as YAML 1.2 reads it (YAML 1.1 clients read it otherwise): quote it, or write the value both read alike"})
		}
	}
	cat.index(members)
	cat.problems = dedupe(cat.problems)
	return cat
}

// A member is one file of a skill and what was read from it.
type member struct {
	f  walkedFile
	ce *cacheEntry
}

// refuse records why the skill in the folder segs is not published.
func (sc *scanner) refuse(cat *catalog, segs []string, why string) {
	rel := strings.Join(append(slices.Clip(segs), "SKILL.md"), "/")
	cat.problems = append(cat.problems, Problem{Path: display(sc.dir, rel), Reason: why})
	if u, ok := sc.uris[rel]; ok {
		cat.refused[u.String()] = why
	}
}

// readSkill reads the skill in the folder segs, taking its files from all
// (the walk's, sorted by path), and returns its entry and its files,
// SKILL.md first; or why it is refused. The cheap checks come first, so a
// refused skill costs as little reading as can be.
func (sc *scanner) readSkill(cat *catalog, all []walkedFile, p *pass, segs []string) (entry skill.Entry, ms []member, why string) {
	if len(segs) == 0 {
		return entry, nil, "a SKILL.md directly in DIR has no skill path; put each skill in a folder named after it"
	}
	prefix := strings.Join(segs, "/") + "/"
	files, total := filesUnder(all, prefix)
	// The limits are checked from stat before anything is read, so an
	// oversized skill costs no hashing.
	if len(files) > maxResources {
		return entry, nil, fmt.Sprintf("over-limit: %d files, SEP-2640 hosts need accept only %d", len(files), maxResources)
	}
	if total > maxSkillBytes {
		return entry, nil, fmt.Sprintf("over-limit: %d bytes, SEP-2640 hosts need accept only %d", total, maxSkillBytes)
	}
	mdAt := slices.IndexFunc(files, func(f walkedFile) bool { return f.rel == prefix+"SKILL.md" })
	md := files[mdAt]
	ce, err := sc.readSkillMD(md, p)
	if err != nil {
		return entry, nil, "cannot read SKILL.md: " + reason(err)
	}
	if ce.fmErr != nil {
		return entry, nil, reason(ce.fmErr)
	}
	// Checked before the other files are hashed: a skill refused for
	// its frontmatter costs no reading.
	if problem := agentSkillsProblem(ce.fm); problem != "" {
		return entry, nil, problem
	}
	ms = sc.hashMembers(cat, p, files, member{md, ce})
	entry = entryOf(ms)
	// The entry goes out only if it passes the checks a host makes on
	// it: name and folder, description, limits, colliding paths.
	if _, err := verify.CheckEntry(entry, entryChecks); err != nil {
		return skill.Entry{}, nil, reason(err)
	}
	return entry, ms, ""
}

// filesUnder returns the run of files (sorted by path) whose path starts
// with prefix, and their total size as stat gave it.
func filesUnder(files []walkedFile, prefix string) ([]walkedFile, int64) {
	lo := sort.Search(len(files), func(i int) bool { return files[i].rel >= prefix })
	hi := lo
	var total int64
	for hi < len(files) && strings.HasPrefix(files[hi].rel, prefix) {
		total += files[hi].key.size
		hi++
	}
	return files[lo:hi], total
}

// hashMembers returns a skill's files with what was read from them: md
// (its SKILL.md, read already) first, then the others in path order. A
// file that cannot be read is left out with a Problem; it does not refuse
// the skill.
func (sc *scanner) hashMembers(cat *catalog, p *pass, files []walkedFile, md member) []member {
	ms := []member{md}
	for _, f := range files {
		if f.rel == md.f.rel {
			continue
		}
		fce, err := sc.hash(f, p)
		if err != nil {
			cat.problems = append(cat.problems, Problem{Path: display(sc.dir, f.rel), Reason: "cannot read: " + reason(err)})
			continue
		}
		ms = append(ms, member{f, fce})
	}
	return ms
}

// entryOf is the skills/list entry of a skill whose files are ms, SKILL.md
// first.
func entryOf(ms []member) skill.Entry {
	md := ms[0]
	entry := skill.Entry{URI: md.f.uri.String(), Frontmatter: md.ce.fm, Manifest: skill.Listed, Resources: make([]skill.Resource, len(ms))}
	for i, m := range ms {
		entry.Resources[i] = skill.Resource{URI: m.f.uri.String(), Digest: m.ce.digest, Size: m.ce.size, HasSize: true}
	}
	return entry
}

// index sorts the accepted skills by URI and records their files and
// folders; members[i] are the files of cat.skills[i].
func (cat *catalog) index(members [][]member) {
	order := make([]int, len(cat.skills))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return cat.skills[order[a]].URI < cat.skills[order[b]].URI })
	sorted := make([]skill.Entry, len(order))
	for i, j := range order {
		sorted[i] = cat.skills[j]
		cat.skillIdx[sorted[i].URI] = i
		for k, m := range members[j] {
			uri := sorted[i].Resources[k].URI
			if cat.files[uri] != nil {
				continue
			}
			name := m.f.uri.Name()
			res := &mcp.Resource{URI: uri, Name: name, MIMEType: mimeType(name, m.ce.utf8), Size: m.ce.size}
			cat.files[uri] = &served{path: m.f.path, rel: m.f.rel, size: m.ce.size, digest: m.ce.digest, res: res}
			cat.addToDirs(m.f.uri, res)
		}
	}
	cat.skills = sorted
	// A listed skill's SKILL.md carries its name and description
	// (SEP-2640, Resource Metadata), also when it was first met as a file
	// of its enclosing skill.
	for _, e := range cat.skills {
		r := cat.files[e.URI].res
		r.Name, r.Description = e.Name(), e.Description()
	}
	for uri, children := range cat.dirs {
		slices.SortFunc(children, func(a, b skill.DirChild) int { return strings.Compare(a.URI, b.URI) })
		cat.dirs[uri] = children
	}
}

// addToDirs records a served file and every folder above it in the
// directory index, up to the top-level folder. Only folders holding served
// files exist there. A child is named by its last path segment, as in
// SEP-2640's example and the Working Group's SDK: a host builds `ls` from
// the names, so a SKILL.md is "SKILL.md" here even though resources/list
// names it after its skill (SEP-2640, Resource Metadata).
func (cat *catalog) addToDirs(u verify.URI, res *mcp.Resource) {
	child := skill.DirChild{URI: res.URI, Name: u.Name(), MIMEType: res.MIMEType, Size: res.Size}
	for {
		p, ok := u.Parent()
		if !ok {
			return
		}
		key := p.String()
		_, existed := cat.dirs[key]
		cat.dirs[key] = append(cat.dirs[key], child)
		if existed {
			return
		}
		child = skill.DirChild{URI: key, Name: p.Name(), MIMEType: skill.MIMEDirectory}
		u = p
	}
}

func dedupe(ps []Problem) []Problem {
	slices.SortFunc(ps, func(a, b Problem) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Reason, b.Reason)
	})
	return slices.Compact(ps)
}

// utf8Checker validates UTF-8 across the chunks of a stream.
type utf8Checker struct {
	carry []byte // an incomplete rune at the end of the last chunk
	ok    bool
}

func (u *utf8Checker) Write(p []byte) (int, error) {
	if !u.ok {
		return len(p), nil
	}
	b := p
	if len(u.carry) > 0 {
		b = append(u.carry, p...)
	}
	cut := len(b)
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				cut = i
			}
			break
		}
	}
	if !utf8.Valid(b[:cut]) {
		u.ok = false
		return len(p), nil
	}
	u.carry = append([]byte(nil), b[cut:]...)
	return len(p), nil
}

func (u *utf8Checker) valid() bool { return u.ok && len(u.carry) == 0 }
