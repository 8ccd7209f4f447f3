package verify

import (
	"crypto/sha256"
	"hash"

	"github.com/skillfs/skillfs/internal/skill"
)

// CheckContent verifies fetched bytes against their resource: the declared
// digest's format, then the length (when the resource has a size, because a
// wrong length is cheaper to see than a wrong hash), then the sha256.
func CheckContent(r skill.Resource, b []byte) error {
	c := NewChecker(r)
	if _, err := c.Write(b); err != nil {
		return err
	}
	return c.Finish()
}

// A Checker hashes content as it is written and fails fast: Write returns a
// SizeMismatch error as soon as more than the declared size has been written
// (when the resource has a size), so a server cannot make the caller buffer
// more than it declared. A resource without a size (older revision) has no
// such bound here; the caller's hard per-file cap must apply. Once a Checker
// has failed, every call returns the same error. A Checker is not safe for
// concurrent use.
type Checker struct {
	r   skill.Resource
	h   hash.Hash
	n   int64
	err error
}

// NewChecker starts verifying content for r. A malformed digest in r fails
// the first Write (or Finish).
func NewChecker(r skill.Resource) *Checker {
	c := &Checker{r: r, h: sha256.New()}
	if err := CheckDigestFormat(r.Digest); err != nil {
		c.err = WithSubject(err, r.URI)
	}
	return c
}

// Write hashes p. It never accepts more bytes than the declared size.
func (c *Checker) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.r.HasSize && int64(len(p)) > c.r.Size-c.n {
		c.err = newError(SizeMismatch, c.r.URI, "more than the declared %d bytes", c.r.Size)
		return 0, c.err
	}
	c.h.Write(p)
	c.n += int64(len(p))
	return len(p), nil
}

// Written returns the number of bytes accepted so far.
func (c *Checker) Written() int64 { return c.n }

// Finish checks the length, then the digest, of everything written.
func (c *Checker) Finish() error {
	if c.err != nil {
		return c.err
	}
	if c.r.HasSize && c.n != c.r.Size {
		c.err = newError(SizeMismatch, c.r.URI, "got %d bytes, the entry declares %d", c.n, c.r.Size)
		return c.err
	}
	got := skill.FormatDigest([sha256.Size]byte(c.h.Sum(nil)))
	if got != c.r.Digest {
		c.err = newError(DigestMismatch, c.r.URI, "content hashes to %s, the entry declares %s", got, c.r.Digest)
		return c.err
	}
	return nil
}
