package store

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/skillfs/skillfs/internal/skill"
)

const (
	// maxIDLen matches NAME_MAX on the filesystems a cache directory lives on.
	maxIDLen = 255

	objectsDir  = "objects"
	catalogName = "catalog.json"
	// tempPrefix names files being written. The leading dot keeps them out of
	// anything that lists objects, and temps.clean recognises them by it.
	tempPrefix = ".tmp-"
)

var (
	// ErrNotFound means the store holds no verified copy: it was never
	// stored, or the stored copy failed re-verification and was discarded.
	// The caller fetches afresh.
	ErrNotFound = errors.New("not in store")
	// ErrBadID rejects an origin id that is not one safe path segment.
	ErrBadID = errors.New("invalid origin id")
	// ErrBadDigest rejects a digest that is not "sha256:" and 64 lowercase
	// hex digits; nothing else is ever turned into a path.
	ErrBadDigest = errors.New("invalid digest")
	// ErrTooLarge rejects a file over Options.MaxFileSize or a catalog over
	// Options.MaxCatalogSize.
	ErrTooLarge = errors.New("too large")
	// ErrDigestMismatch rejects a Put whose bytes do not hash to the digest.
	ErrDigestMismatch = errors.New("bytes do not match digest")
	// ErrRemoved is returned by a Bucket whose directory Store.Remove deleted.
	ErrRemoved = errors.New("origin removed from store")
	// ErrUnsafeRoot rejects a store root that other users or a symlink could
	// redirect.
	ErrUnsafeRoot = errors.New("unsafe store root")
)

// CheckID reports whether id can name an origin's directory: one path
// segment, not "." or "..", at most 255 bytes of valid UTF-8 without
// separators, NUL or control characters. A leading ".tmp-" is reserved.
func CheckID(id string) error {
	bad := func(why string) error { return fmt.Errorf("%w %q: %s", ErrBadID, id, why) }
	switch {
	case id == "":
		return bad("empty")
	case id == "." || id == "..":
		return bad("dot segment")
	case len(id) > maxIDLen:
		return bad(fmt.Sprintf("longer than %d bytes", maxIDLen))
	case !utf8.ValidString(id):
		return bad("not valid UTF-8")
	case strings.HasPrefix(id, tempPrefix):
		return bad("prefix " + tempPrefix + " is reserved")
	}
	for _, r := range id {
		switch {
		case r == '/' || r == '\\':
			return bad("contains a path separator")
		case r == 0:
			return bad("contains NUL")
		case unicode.IsControl(r):
			return bad("contains a control character")
		}
	}
	return nil
}

// digestHex returns the 64 hex digits of a well-formed digest. Only its
// result is ever used to build a path.
func digestHex(d skill.Digest) (string, error) {
	sum, err := skill.ParseDigest(d)
	if err != nil {
		return "", fmt.Errorf("%w %q: want sha256: and 64 lowercase hex digits", ErrBadDigest, string(d))
	}
	return hex.EncodeToString(sum[:]), nil
}

// objectRel is the object's path relative to its origin directory.
func objectRel(h string) string { return objectsDir + "/" + h[:2] + "/" + h }
