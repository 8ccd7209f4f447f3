package skill

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// digestPrefix names the one algorithm SEP-2640 digests use.
const digestPrefix = "sha256:"

// DigestOf returns the digest of b.
func DigestOf(b []byte) Digest { return FormatDigest(sha256.Sum256(b)) }

// FormatDigest renders a sha256 sum as a Digest: "sha256:" and 64
// lowercase hexadecimal digits.
func FormatDigest(sum [sha256.Size]byte) Digest {
	return Digest(digestPrefix + hex.EncodeToString(sum[:]))
}

// ParseDigest returns the sha256 sum d names. It accepts only the form
// FormatDigest writes: uppercase digits, another algorithm or another
// length are errors, so that one file has one digest.
func ParseDigest(d Digest) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	s := string(d)
	if len(s) != len(digestPrefix)+2*sha256.Size || s[:len(digestPrefix)] != digestPrefix {
		return sum, fmt.Errorf("malformed digest %q: want %q followed by 64 lowercase hex digits", s, digestPrefix)
	}
	h := s[len(digestPrefix):]
	for i := 0; i < len(h); i++ {
		if c := h[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return sum, fmt.Errorf("malformed digest %q: want %q followed by 64 lowercase hex digits", s, digestPrefix)
		}
	}
	hex.Decode(sum[:], []byte(h)) // cannot fail: 64 hex digits, checked above
	return sum, nil
}
