package vfs

import (
	"slices"
	"testing"

	"github.com/skillfs/skillfs/internal/skill"
	"github.com/skillfs/skillfs/internal/store"
)

func TestBucketHeldDigests(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b, err := st.Bucket("acme-1")
	if err != nil {
		t.Fatal(err)
	}
	none, err := SavedCatalogDigests(b)
	if err != nil || len(none) != 0 {
		t.Fatalf("no catalog: %v, %v", none, err)
	}
	if none, err := ApprovedDigests(b); err != nil || len(none) != 0 {
		t.Fatalf("no approvals: %v, %v", none, err)
	}
	const (
		d1 = skill.Digest("sha256:1111111111111111111111111111111111111111111111111111111111111111")
		d2 = skill.Digest("sha256:2222222222222222222222222222222222222222222222222222222222222222")
		d3 = skill.Digest("sha256:3333333333333333333333333333333333333333333333333333333333333333")
	)
	catalog := `{"version":2,"cache_scope":"public","entries":[{"uri":"skill://a/SKILL.md","frontmatter":{"name":"a","description":"d"},` +
		`"resources":[{"uri":"skill://a/SKILL.md","digest":"` + string(d1) + `","size":1}]}]}`
	approvals := `{"version": 1, "approvals": [{"origin":"acme","fingerprint":"1","uri":"skill://a/SKILL.md","frontmatter":{},` +
		`"resources":[{"uri":"skill://a/SKILL.md","digest":"` + string(d2) + `","size":1,"has_size":true}],"kept":["` + string(d3) + `"],"approved_at":"2026-01-01T00:00:00Z"}]}`
	if err := b.NewSaver(store.CatalogSidecar, store.SaverOptions{}).Write([]byte(catalog)); err != nil {
		t.Fatal(err)
	}
	if err := b.NewSaver(store.ApprovalsSidecar, store.SaverOptions{}).Write([]byte(approvals)); err != nil {
		t.Fatal(err)
	}
	got, err := SavedCatalogDigests(b)
	if err != nil || !slices.Equal(got, []skill.Digest{d1}) {
		t.Errorf("catalog digests = %v, %v; want [%s]", got, err, d1)
	}
	got, err = ApprovedDigests(b)
	if err != nil || !slices.Equal(got, []skill.Digest{d2, d3}) {
		t.Errorf("approval digests = %v, %v; want the approved resource and the kept file", got, err)
	}
}
