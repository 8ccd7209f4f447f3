package resolver

import (
	"errors"
	"fmt"

	"github.com/skillfs/skillfs/internal/skill"
)

// Cache scopes of a listing (SEP-2549's cacheScope, on skills/list,
// skills/get and resources/directory/read results of the 2026-07-28
// protocol).
const (
	// ScopePublic: any client may cache and show the listing. A result
	// without cacheScope (the older protocol, or a server that leaves it
	// out) is public, as SEP-2549 says.
	ScopePublic = skill.ScopePublic
	// ScopePrivate: the listing belongs to the credentials it was asked
	// with. skillfs saves it only with a fingerprint of those credentials
	// and shows it on no mount other users can read (--allow-other).
	ScopePrivate = skill.ScopePrivate
)

// ErrPrivate: the server marked a listing private, and the mount is shared
// with other users.
var ErrPrivate = errors.New(`the server marked the listing cacheScope "private" and the mount is shared with other users (--allow-other)`)

// ErrPrivateEntry: the server marked a skills/get answer private, and the
// mount is shared with other users. The skill is not shown (nor saved).
var ErrPrivateEntry = errors.New(`the server marked the skills/get answer cacheScope "private" and the mount is shared with other users (--allow-other)`)

// scopeOf reads a result's cacheScope. Anything but public (or nothing) is
// taken as private: an unknown scope is not permission to share.
func scopeOf(s string) string {
	if s == "" || s == ScopePublic {
		return ScopePublic
	}
	return ScopePrivate
}

// WithheldReason is what status.json says about a private catalog that is
// not shown on a shared mount.
func WithheldReason(skills int) string {
	return fmt.Sprintf("%d skills withheld: %v", skills, ErrPrivate)
}
