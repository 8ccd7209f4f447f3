package control

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/skillfs/skillfs/internal/control/wire"
)

// Shell completion asks the mount for the skill paths that start with
// what the user typed, one path segment at a time, so that the answer is
// small whatever the mount holds (max_list_entries allows 100,000 skills a
// server): the mount filters, groups and cuts; the shell never sees the
// whole list.

// MaxCompletions is the most candidates a completion answer holds; a
// request may ask for fewer.
const MaxCompletions = 1000

// Which skills a completion offers, by approval (wire.SkillInfo.Approval).
const (
	// CompleteAny: every skill the mount holds.
	CompleteAny = ""
	// CompletePending: skills an approve would act on (pending, changed).
	CompletePending = "pending"
	// CompleteApproved: skills a revoke would act on (approved, changed).
	CompleteApproved = "approved"
)

type completeRequest struct {
	Prefix   string `json:"prefix"`
	Approval string `json:"approval,omitempty"`
	Max      int    `json:"max,omitempty"`
}

// Completions answers a completion: candidates in order, a directory (a
// prefix of further skill paths) ending in '/'; More is how many more
// candidates there were than were sent.
type Completions struct {
	Candidates []string `json:"candidates"`
	More       int      `json:"more"`
}

// completeRoute serves POST /v1/complete.
func (h *handler) completeRoute(m *http.ServeMux) {
	m.Handle("POST /v1/complete", endpoint(h, func(ctx context.Context, r completeRequest) (Completions, error) {
		switch r.Approval {
		case CompleteAny, CompletePending, CompleteApproved:
		default:
			return Completions{}, fmt.Errorf("%w: approval %q is not %q, %q or empty", ErrInvalid, r.Approval, CompletePending, CompleteApproved)
		}
		return completePaths(h.api.Skills(), r.Prefix, r.Approval, r.Max), nil
	}))
}

// completePaths returns the candidates for prefix among skills: each
// skill path that starts with it, cut after the first '/' past the prefix
// (acme/billing/ for acme/bi when acme/billing/refunds is a skill), sorted,
// duplicates dropped, at most max (MaxCompletions when max is not in
// 1..MaxCompletions).
func completePaths(skills []wire.SkillInfo, prefix, approval string, max int) Completions {
	if max <= 0 || max > MaxCompletions {
		max = MaxCompletions
	}
	seen := map[string]bool{}
	var all []string
	for _, s := range skills {
		if s.Path == "" || !strings.HasPrefix(s.Path, prefix) || !approvalMatches(s.Approval, approval) {
			continue
		}
		c := s.Path
		if i := strings.IndexByte(c[len(prefix):], '/'); i >= 0 {
			c = c[:len(prefix)+i+1]
		}
		if !seen[c] {
			seen[c] = true
			all = append(all, c)
		}
	}
	slices.Sort(all)
	out := Completions{Candidates: all}
	if len(all) > max {
		out.Candidates, out.More = all[:max], len(all)-max
	}
	if out.Candidates == nil {
		out.Candidates = []string{}
	}
	return out
}

func approvalMatches(state, want string) bool {
	switch want {
	case CompletePending:
		return state == "pending" || state == "changed"
	case CompleteApproved:
		return state == "approved" || state == "changed"
	}
	return true
}

// Complete asks the mount for the skill paths that start with prefix
// (completePaths), at most max of them.
func (c *Client) Complete(ctx context.Context, prefix, approval string, max int) (Completions, error) {
	var r Completions
	return r, c.call(ctx, "complete", completeRequest{Prefix: prefix, Approval: approval, Max: max}, &r)
}

// Mounts returns the mountpoints of the user's running mounts that
// register in dirs (Dirs), sorted, trusting them as Find does.
func Mounts(dirs []string) []string {
	live, _ := running(dirs)
	var out []string
	for _, r := range live {
		out = append(out, r.Mountpoint)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
