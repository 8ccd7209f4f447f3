package control

import (
	"context"
	"errors"
	"net/http"

	"github.com/skillfs/skillfs/internal/control/wire"
)

// Review is what `skillfs approve` shows of one skill before it asks
// (package internal/control/wire).
type Review = wire.Review

// ServerDesc is a Review's server, its secrets masked.
type ServerDesc = wire.ServerDesc

// FileReview is one changed file of a Review.
type FileReview = wire.FileReview

// ListedFile is one file of a new skill's Review.
type ListedFile = wire.ListedFile

// Flags of a ListedFile.
const (
	FlagScript      = wire.FlagScript
	FlagNestedSkill = wire.FlagNestedSkill
	FlagNotKept     = wire.FlagNotKept
)

// A Reviewer is an API that also shows a skill as approve asks about it:
// its server, flags and, for a changed skill, the diff of every changed
// file against the version last approved (vfs.Consent.Review).
type Reviewer interface {
	Review(ctx context.Context, ref SkillRef) (Review, error)
}

var errNoReview = errors.New("this mount does not show what an approval changes: use the mount's own skillfs")

// reviewRoute serves POST /v1/review.
func (h *handler) reviewRoute(m *http.ServeMux) {
	m.Handle("POST /v1/review", endpoint(h, func(ctx context.Context, r SkillRef) (Review, error) {
		if err := checkRef(r); err != nil {
			return Review{}, err
		}
		rv, ok := h.api.(Reviewer)
		if !ok {
			return Review{}, errNoReview
		}
		return rv.Review(ctx, r)
	}))
}

// Review shows one skill as approve asks about it; its Binding is what an
// approval of what it shows must name.
func (c *Client) Review(ctx context.Context, ref SkillRef) (Review, error) {
	var r Review
	return r, c.call(ctx, "review", ref, &r)
}

// Why a skill waits for approval (Pending.Why).
const (
	WhyNew         = wire.WhyNew
	WhyContent     = wire.WhyContent
	WhyFrontmatter = wire.WhyFrontmatter
	WhyServerEntry = wire.WhyServerEntry
)
