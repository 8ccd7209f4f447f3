package mcpserve

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"path"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/verify"
)

// The SEP-2640 face: with Options.Skills set, the server declares the
// skills extension (with directoryRead) and answers skills/list,
// skills/get, resources/read and resources/directory/read for the skills
// the tree shows, under skill://LABEL/... URIs (the mount's path,
// LABEL/..., as a skill URI). Each entry is its origin's — the
// frontmatter, and every resource's size and digest — with its URIs moved
// under the label; resources/read answers a file of a listed manifest
// only, from the Tree, so only from verified bytes. A directory read
// answers the folders that hold a listed file, from skill://LABEL down
// (children by URI, folders as inode/directory, a file's size as its
// manifest gives it, a SKILL.md's description), so a client walking the
// face sees exactly the files skills/list names and nothing else.

// A Skill is one skill the tree shows, with the entry its origin sent.
type Skill struct {
	Label string
	// Path is the mount-relative path of its SKILL.md.
	Path  string
	Entry skill.Entry
	// Files are the mount-relative paths of Entry.Resources, in order.
	Files []string
}

// Skills lists what the SEP-2640 face serves.
type Skills interface {
	Skills(ctx context.Context) ([]Skill, error)
}

// PageSize is how many skills one skills/list answer carries.
const PageSize = 100

type listSkillsParams struct {
	mcp.ParamsBase
	skill.ListParams
}

type listSkillsResult struct {
	mcp.ResultBase
	skill.ListResult[skill.Entry]
}

type getSkillParams struct {
	mcp.ParamsBase
	skill.GetParams
}

type getSkillResult struct {
	mcp.ResultBase
	skill.GetResult[skill.Entry]
}

type readDirParams struct {
	mcp.ParamsBase
	skill.ReadDirParams
}

type readDirResult struct {
	mcp.ResultBase
	skill.ReadDirResult[skill.DirChild]
}

// uriOf is a mount-relative path as a skill URI: skill://LABEL/REST.
func uriOf(p string) string {
	segs := strings.Split(p, "/")
	return verify.URI{Scheme: verify.SkillScheme, Authority: segs[0], Segments: segs[1:]}.String()
}

// faceEntry is s's entry as the face serves it: the origin's, with its
// URIs under the label.
func faceEntry(s Skill) skill.Entry {
	e := s.Entry
	e.URI = uriOf(s.Path)
	e.Resources = slices.Clone(s.Entry.Resources)
	for i := range e.Resources {
		if i < len(s.Files) {
			e.Resources[i].URI = uriOf(s.Files[i])
		}
	}
	return e
}

// face is the skills of one request, by URI.
type face struct {
	entries []skill.Entry     // sorted by URI
	files   map[string]string // file URI → mount-relative path
	// dirs are the children of every folder holding a listed file, by
	// the folder's URI, each sorted by URI.
	dirs map[string][]skill.DirChild
}

// addFile enters the file at mount-relative path p (and every folder
// above it, up to its label) into f.dirs.
func (f *face) addFile(p string, size int64, description string) {
	child := skill.DirChild{URI: uriOf(p), Name: path.Base(p), MIMEType: mimeOf(p), Size: size, Description: description}
	for dir := path.Dir(p); ; dir = path.Dir(dir) {
		key := uriOf(dir)
		_, existed := f.dirs[key]
		f.dirs[key] = append(f.dirs[key], child)
		if existed || !strings.Contains(dir, "/") {
			return
		}
		child = skill.DirChild{URI: key, Name: path.Base(dir), MIMEType: skill.MIMEDirectory}
	}
}

func (s *Server) face(ctx context.Context) (*face, error) {
	skills, err := s.opts.Skills.Skills(ctx)
	if err != nil {
		return nil, err
	}
	f := &face{files: map[string]string{}, dirs: map[string][]skill.DirChild{}}
	for _, sk := range skills {
		e := faceEntry(sk)
		f.entries = append(f.entries, e)
		description, _ := e.Frontmatter["description"].(string)
		for i, r := range e.Resources {
			if i >= len(sk.Files) {
				continue
			}
			if _, dup := f.files[r.URI]; dup {
				continue
			}
			f.files[r.URI] = sk.Files[i]
			d := ""
			if sk.Files[i] == sk.Path {
				d = description
			}
			f.addFile(sk.Files[i], r.Size, d)
		}
	}
	slices.SortFunc(f.entries, func(a, b skill.Entry) int { return strings.Compare(a.URI, b.URI) })
	for _, children := range f.dirs {
		slices.SortFunc(children, func(a, b skill.DirChild) int { return strings.Compare(a.URI, b.URI) })
	}
	return f, nil
}

func (s *Server) addSEP() error {
	if err := mcp.AddReceivingCustomMethod(s.mcp, skill.MethodList, s.listSkills); err != nil {
		return fmt.Errorf("register %s: %w", skill.MethodList, err)
	}
	if err := mcp.AddReceivingCustomMethod(s.mcp, skill.MethodGet, s.getSkill); err != nil {
		return fmt.Errorf("register %s: %w", skill.MethodGet, err)
	}
	if err := mcp.AddReceivingCustomMethod(s.mcp, skill.MethodReadDir, s.readDir); err != nil {
		return fmt.Errorf("register %s: %w", skill.MethodReadDir, err)
	}
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "skill-file",
		Title:       "A file of a verified skill",
		URITemplate: "skill://{+path}",
		Description: "A file of a skill the skillfs tree shows, by its URI in skills/list: its origin's bytes, verified.",
	}, s.readResource)
	return nil
}

const cursorPrefix = "skillfs-mcp1\x00"

// dirCursor is the cursor of the directory read of dir after the child
// after; a skills/list cursor never decodes as one, nor one of another
// directory.
func dirCursor(dir, after string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + "dir\x00" + dir + "\x00" + after))
}

func dirCursorAfter(dir, cursor string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return "", false
	}
	after, ok := strings.CutPrefix(string(b), cursorPrefix+"dir\x00"+dir+"\x00")
	return after, ok && strings.HasPrefix(after, dir+"/")
}

func invalidParams(uri, format string, args ...any) error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...), Data: data}
}

// newProtocol reports whether a request speaks the 2026-07-28 protocol,
// which carries its version in every request's _meta and wants the
// caching fields.
func newProtocol(meta mcp.Meta) bool {
	v, _ := meta[mcp.MetaKeyProtocolVersion].(string)
	return v >= "2026-07-28"
}

// cacheable fills the 2026-07-28 result fields. ttlMs is 0: the tree can
// change with any re-list or approval. The scope is private: the tree is
// this user's (their approvals, a private listing of their credentials).
func cacheable(resultType *string, ttl **int64, scope *string) {
	zero := int64(0)
	*resultType, *ttl, *scope = skill.ResultComplete, &zero, skill.ScopePrivate
}

func (s *Server) listSkills(ctx context.Context, _ *mcp.ServerSession, p *listSkillsParams) (*listSkillsResult, error) {
	if p == nil {
		p = &listSkillsParams{}
	}
	f, err := s.face(ctx)
	if err != nil {
		return nil, err
	}
	start := 0
	if p.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(p.Cursor)
		after, ok := strings.CutPrefix(string(b), cursorPrefix)
		if err != nil || !ok || !strings.HasPrefix(after, "skill://") {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid cursor %q: not one this server gave", p.Cursor)}
		}
		start, _ = slices.BinarySearchFunc(f.entries, after, func(e skill.Entry, k string) int { return strings.Compare(e.URI, k) })
		if start < len(f.entries) && f.entries[start].URI == after {
			start++
		}
	}
	end := min(start+PageSize, len(f.entries))
	res := &listSkillsResult{}
	res.Skills = append([]skill.Entry{}, f.entries[start:end]...)
	if end < len(f.entries) {
		res.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + f.entries[end-1].URI))
	}
	if newProtocol(p.Meta) {
		cacheable(&res.ResultType, &res.TTLMs, &res.CacheScope)
	}
	return res, nil
}

func (s *Server) getSkill(ctx context.Context, _ *mcp.ServerSession, p *getSkillParams) (*getSkillResult, error) {
	if p == nil || p.URI == "" {
		return nil, invalidParams("", "skills/get needs params.uri, the URI of a skill's SKILL.md")
	}
	u, err := verify.ParseURI(p.URI)
	if err != nil || u.Scheme != verify.SkillScheme {
		return nil, invalidParams(p.URI, "%s is not a skill:// URI this server serves", sanitize(p.URI, maxErrorBytes))
	}
	f, err := s.face(ctx)
	if err != nil {
		return nil, err
	}
	want := u.String()
	i, ok := slices.BinarySearchFunc(f.entries, want, func(e skill.Entry, k string) int { return strings.Compare(e.URI, k) })
	if !ok {
		return nil, invalidParams(p.URI, "%s is not the SKILL.md of a skill this server shows (pending, failed and rejected skills are not shown)", sanitize(p.URI, maxErrorBytes))
	}
	res := &getSkillResult{}
	res.Skill = f.entries[i]
	if newProtocol(p.Meta) {
		cacheable(&res.ResultType, &res.TTLMs, &res.CacheScope)
	}
	return res, nil
}

func (s *Server) readDir(ctx context.Context, _ *mcp.ServerSession, p *readDirParams) (*readDirResult, error) {
	if p == nil || p.URI == "" {
		return nil, invalidParams("", "resources/directory/read needs params.uri, the URI of a directory")
	}
	u, err := verify.ParseURI(p.URI)
	if err != nil || u.Scheme != verify.SkillScheme {
		return nil, invalidParams(p.URI, "%s is not a skill:// URI this server serves", sanitize(p.URI, maxErrorBytes))
	}
	f, err := s.face(ctx)
	if err != nil {
		return nil, err
	}
	dir := u.String()
	children, ok := f.dirs[dir]
	if !ok {
		if _, file := f.files[dir]; file {
			return nil, invalidParams(p.URI, "%s is a file, not a directory", sanitize(p.URI, maxErrorBytes))
		}
		return nil, invalidParams(p.URI, "no directory %s among the skills this server shows", sanitize(p.URI, maxErrorBytes))
	}
	start := 0
	if p.Cursor != "" {
		after, ok := dirCursorAfter(dir, p.Cursor)
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid cursor %q: not one this server gave for %s", sanitize(p.Cursor, maxErrorBytes), sanitize(dir, maxErrorBytes))}
		}
		start, _ = slices.BinarySearchFunc(children, after, func(c skill.DirChild, k string) int { return strings.Compare(c.URI, k) })
		if start < len(children) && children[start].URI == after {
			start++
		}
	}
	end := min(start+PageSize, len(children))
	res := &readDirResult{}
	res.Resources = append([]skill.DirChild{}, children[start:end]...)
	if end < len(children) {
		res.NextCursor = dirCursor(dir, children[end-1].URI)
	}
	if newProtocol(p.Meta) {
		cacheable(&res.ResultType, &res.TTLMs, &res.CacheScope)
	}
	return res, nil
}

func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	u, err := verify.ParseURI(uri)
	if err != nil || u.Scheme != verify.SkillScheme {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	f, err := s.face(ctx)
	if err != nil {
		return nil, err
	}
	p, ok := f.files[u.String()]
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	b, err := s.tree.ReadFile(ctx, p)
	if err != nil {
		s.log.Warn("resources/read failed", "op", "resources/read", "uri", uri, "path", p, "err", err)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("read %s: %s; no unverified byte is ever returned", sanitize(uri, maxErrorBytes), sanitize(err.Error(), maxErrorBytes))}
	}
	c := &mcp.ResourceContents{URI: uri, MIMEType: mimeOf(p)}
	if isText(b) {
		c.Text = string(b)
	} else {
		c.Blob = b
		if c.Blob == nil {
			c.Blob = []byte{}
		}
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
}

func mimeOf(p string) string {
	switch ext := path.Ext(p); ext {
	case ".md":
		return "text/markdown"
	case "":
		return "text/plain"
	default:
		if t := mime.TypeByExtension(ext); t != "" {
			return t
		}
	}
	return "application/octet-stream"
}
