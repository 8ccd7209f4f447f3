package control

import (
	"fmt"
	"slices"
	"testing"

	"github.com/skillfs/skillfs/internal/control/wire"
)

func TestCompletePaths(t *testing.T) {
	skills := []wire.SkillInfo{
		{Path: "acme/billing/refunds", Approval: "approved"},
		{Path: "acme/billing/invoices", Approval: "pending"},
		{Path: "acme/bots", Approval: "changed"},
		{Path: "acme/team/beta"},
		{Path: "acme/team/beta/gamma"},
		{Path: "docs/guide"},
		{Origin: "acme", URI: "skill://x/SKILL.md"}, // no path: rejected, not in the tree
	}
	for _, tc := range []struct {
		prefix, approval string
		max              int
		want             []string
		more             int
	}{
		{"", "", 0, []string{"acme/", "docs/"}, 0},
		{"a", "", 0, []string{"acme/"}, 0},
		{"acme/", "", 0, []string{"acme/billing/", "acme/bots", "acme/team/"}, 0},
		{"acme/b", "", 0, []string{"acme/billing/", "acme/bots"}, 0},
		{"acme/billing/", "", 0, []string{"acme/billing/invoices", "acme/billing/refunds"}, 0},
		{"acme/team/beta", "", 0, []string{"acme/team/beta", "acme/team/beta/"}, 0},
		{"acme/billing/refunds", "", 0, []string{"acme/billing/refunds"}, 0},
		{"nope", "", 0, []string{}, 0},
		{"acme/", CompletePending, 0, []string{"acme/billing/", "acme/bots"}, 0},
		{"acme/billing/", CompletePending, 0, []string{"acme/billing/invoices"}, 0},
		{"acme/", CompleteApproved, 0, []string{"acme/billing/", "acme/bots"}, 0},
		{"acme/billing/", CompleteApproved, 0, []string{"acme/billing/refunds"}, 0},
		{"acme/", "", 2, []string{"acme/billing/", "acme/bots"}, 1},
	} {
		got := completePaths(skills, tc.prefix, tc.approval, tc.max)
		if !slices.Equal(got.Candidates, tc.want) || got.More != tc.more {
			t.Errorf("completePaths(%q, %q, %d) = %q (%d more), want %q (%d more)", tc.prefix, tc.approval, tc.max, got.Candidates, got.More, tc.want, tc.more)
		}
	}
}

// TestCompletePathsIsCapped: a server with many skills gives at most
// MaxCompletions candidates, whatever the request asks.
func TestCompletePathsIsCapped(t *testing.T) {
	var skills []wire.SkillInfo
	for i := range MaxCompletions + 5 {
		skills = append(skills, wire.SkillInfo{Path: fmt.Sprintf("crowd/c-%05d/x", i)})
	}
	for _, max := range []int{0, -1, MaxCompletions + 1, 1 << 30} {
		got := completePaths(skills, "crowd/", "", max)
		if len(got.Candidates) != MaxCompletions || got.More != 5 || got.Candidates[0] != "crowd/c-00000/" {
			t.Errorf("max %d: %d candidates (%d more), first %q", max, len(got.Candidates), got.More, got.Candidates[0])
		}
	}
}
