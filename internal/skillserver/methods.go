package skillserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/skillfs/skillfs/internal/skill"
)

// go-sdk's wrappers around the SEP-2640 shapes of package skill. The
// results carry, in the 2026-07-28 protocol, the resultType and the
// caching attributes (ttlMs, cacheScope) that the Final SEP-2640 text
// makes REQUIRED on skills/list and skills/get there (and that
// resources/directory/read carries too); the older protocol has neither.

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

func (s *Server) addMethods() error {
	if err := mcp.AddReceivingCustomMethod(s.mcp, skill.MethodList, s.listSkills); err != nil {
		return fmt.Errorf("register %s: %w", skill.MethodList, err)
	}
	if err := mcp.AddReceivingCustomMethod(s.mcp, skill.MethodGet, s.getSkill); err != nil {
		return fmt.Errorf("register %s: %w", skill.MethodGet, err)
	}
	if err := mcp.AddReceivingCustomMethod(s.mcp, skill.MethodReadDir, s.readDir); err != nil {
		return fmt.Errorf("register %s: %w", skill.MethodReadDir, err)
	}
	return nil
}

// newProtocol reports whether a request speaks the 2026-07-28 protocol,
// which carries its version in every request's _meta.
func newProtocol(meta mcp.Meta) bool {
	v, _ := meta[mcp.MetaKeyProtocolVersion].(string)
	return v >= "2026-07-28"
}

// cacheable fills the 2026-07-28 result fields. ttlMs is 0: the folder can
// change at any moment, and list_changed says when it did.
func cacheable(resultType *string, ttl **int64, scope *string) {
	zero := int64(0)
	*resultType, *ttl, *scope = skill.ResultComplete, &zero, skill.ScopePublic
}

func invalidParams(uri, format string, args ...any) error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...), Data: data}
}

// Cursors are the base64 of the page's scope (skills/list, or the
// directory read), a NUL, and the URI that ended the page before. Resuming
// after a key rather than at an index keeps paging consistent across a
// rescan. A cursor that does not decode, names another scope (another
// method's, another directory's) or a key outside it is -32602: a client
// given an empty page for it would think the listing complete.
const cursorPrefix = "skillfs1\x00"

// scopeList is the scope of skills/list cursors; a directory read's scope
// is the directory's canonical URI.
const scopeList = "skills/list"

func encodeCursor(scope, key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + scope + "\x00" + key))
}

func decodeCursor(scope, c string) (string, error) {
	bad := &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid cursor %q: not one this server gave for this request", c)}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return "", bad
	}
	rest, ok := strings.CutPrefix(string(b), cursorPrefix)
	if !ok {
		return "", bad
	}
	key, ok := strings.CutPrefix(rest, scope+"\x00")
	if !ok || !utf8.ValidString(key) {
		return "", bad
	}
	within := "skill://"
	if scope != scopeList {
		within = strings.TrimSuffix(scope, "/") + "/"
	}
	if !strings.HasPrefix(key, within) || len(key) == len(within) {
		return "", bad
	}
	return key, nil
}

func (s *Server) listSkills(_ context.Context, _ *mcp.ServerSession, p *listSkillsParams) (*listSkillsResult, error) {
	if p == nil {
		p = &listSkillsParams{}
	}
	cat := s.lib.cat.Load()
	start := 0
	if p.Cursor != "" {
		after, err := decodeCursor(scopeList, p.Cursor)
		if err != nil {
			return nil, err
		}
		start = sort.Search(len(cat.skills), func(i int) bool { return cat.skills[i].URI > after })
	}
	end := min(start+s.opts.PageSize, len(cat.skills))
	res := &listSkillsResult{}
	res.Skills = append([]skill.Entry{}, cat.skills[start:end]...)
	if end < len(cat.skills) {
		res.NextCursor = encodeCursor(scopeList, cat.skills[end-1].URI)
	}
	if newProtocol(p.Meta) {
		cacheable(&res.ResultType, &res.TTLMs, &res.CacheScope)
	}
	return res, nil
}

func (s *Server) getSkill(_ context.Context, _ *mcp.ServerSession, p *getSkillParams) (*getSkillResult, error) {
	if p == nil || p.URI == "" {
		return nil, invalidParams("", "skills/get needs params.uri, the URI of a skill's SKILL.md")
	}
	cat := s.lib.cat.Load()
	uri, ok := canonicalURI(p.URI)
	if !ok {
		return nil, invalidParams(p.URI, "%s is not a skill:// URI this server serves", p.URI)
	}
	i, ok := cat.skillIdx[uri]
	if !ok {
		if reason, refused := cat.refused[uri]; refused {
			return nil, invalidParams(p.URI, "%s is not served: %s", p.URI, reason)
		}
		return nil, invalidParams(p.URI, "%s is not the SKILL.md of a skill this server serves", p.URI)
	}
	res := &getSkillResult{}
	res.Skill = cat.skills[i]
	if newProtocol(p.Meta) {
		cacheable(&res.ResultType, &res.TTLMs, &res.CacheScope)
	}
	return res, nil
}

func (s *Server) readDir(_ context.Context, _ *mcp.ServerSession, p *readDirParams) (*readDirResult, error) {
	if p == nil || p.URI == "" {
		return nil, invalidParams("", "resources/directory/read needs params.uri, the URI of a directory")
	}
	cat := s.lib.cat.Load()
	uri, ok := canonicalURI(p.URI)
	if !ok {
		return nil, invalidParams(p.URI, "%s is not a skill:// URI this server serves", p.URI)
	}
	children, ok := cat.dirs[uri]
	if !ok {
		if cat.files[uri] != nil {
			return nil, invalidParams(p.URI, "%s is a file, not a directory", p.URI)
		}
		return nil, invalidParams(p.URI, "no directory %s", p.URI)
	}
	start := 0
	if p.Cursor != "" {
		after, err := decodeCursor(uri, p.Cursor)
		if err != nil {
			return nil, err
		}
		start = sort.Search(len(children), func(i int) bool { return children[i].URI > after })
	}
	end := min(start+s.opts.PageSize, len(children))
	res := &readDirResult{}
	res.Resources = append([]skill.DirChild{}, children[start:end]...)
	if end < len(children) {
		res.NextCursor = encodeCursor(uri, children[end-1].URI)
	}
	if newProtocol(p.Meta) {
		cacheable(&res.ResultType, &res.TTLMs, &res.CacheScope)
	}
	return res, nil
}
