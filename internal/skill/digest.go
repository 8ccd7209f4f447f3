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

// lowerHex maps a lowercase hex digit to its value and anything else to
// 0xff.
var lowerHex = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c - '0'
	}
	for c := byte('a'); c <= 'f'; c++ {
		t[c] = c - 'a' + 10
	}
	return t
}()

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
	for i := range sum {
		hi, lo := lowerHex[h[2*i]], lowerHex[h[2*i+1]]
		if hi|lo > 0xf {
			return sum, fmt.Errorf("malformed digest %q: want %q followed by 64 lowercase hex digits", s, digestPrefix)
		}
		sum[i] = hi<<4 | lo
	}
	return sum, nil
}
