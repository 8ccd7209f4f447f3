package verify

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/skillfs/skillfs/internal/skill"
)

func TestCheckContent(t *testing.T) {
	body := []byte("# Refunds\nDo the thing.\n")
	good := res("skill://a/SKILL.md", string(body))
	noSize := good
	noSize.HasSize, noSize.Size = false, 0
	tests := []struct {
		name string
		r    skill.Resource
		b    []byte
		want Reason
	}{
		{"match", good, body, ""},
		{"match without size", noSize, body, ""},
		{"empty file", res("skill://a/e", ""), nil, ""},
		{"truncated", good, body[:len(body)-1], SizeMismatch},
		{"padded", good, append(append([]byte{}, body...), '\n'), SizeMismatch},
		{"same length, other bytes", good, bytes.ToUpper(body), DigestMismatch},
		{"no size, other bytes", noSize, body[1:], DigestMismatch},
		{"size checked before digest", func() skill.Resource { r := good; r.Digest = DigestOf([]byte("x")); r.Size = 3; return r }(), body, SizeMismatch},
		{"malformed declared digest", func() skill.Resource { r := good; r.Digest = skill.Digest(strings.ToUpper(string(r.Digest))); return r }(), body, BadDigest},
	}
	for _, tt := range tests {
		err := CheckContent(tt.r, tt.b)
		if ReasonOf(err) != tt.want {
			t.Errorf("%s: CheckContent = %v, want %q", tt.name, err, tt.want)
		}
		if err != nil && err.(*Error).Subject != tt.r.URI {
			t.Errorf("%s: Subject = %q", tt.name, err.(*Error).Subject)
		}
	}
}

func TestCheckerStreams(t *testing.T) {
	content := bytes.Repeat([]byte("0123456789"), 1000)
	r := res("skill://a/big", string(content))

	// One byte at a time verifies like the whole.
	c := NewChecker(r)
	if _, err := io.Copy(c, iotest.OneByteReader(bytes.NewReader(content))); err != nil {
		t.Fatal(err)
	}
	if err := c.Finish(); err != nil || c.Written() != int64(len(content)) {
		t.Errorf("Finish = %v after %d bytes", err, c.Written())
	}

	// Fails fast: the write that crosses the declared size is refused
	// whole, and everything after it fails the same way.
	c = NewChecker(r)
	if n, err := c.Write(content[:9999]); n != 9999 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	n, err := c.Write([]byte("99"))
	if n != 0 || ReasonOf(err) != SizeMismatch {
		t.Fatalf("overflowing Write = %d, %v; want 0, size-mismatch", n, err)
	}
	if c.Written() != 9999 {
		t.Errorf("Written = %d after a refused write", c.Written())
	}
	if _, err := c.Write([]byte("9")); ReasonOf(err) != SizeMismatch {
		t.Errorf("Write after failure = %v", err)
	}
	if err := c.Finish(); ReasonOf(err) != SizeMismatch {
		t.Errorf("Finish after failure = %v", err)
	}

	// A server streaming forever is stopped at size+1.
	c = NewChecker(res("skill://a/x", "abc"))
	if _, err := io.Copy(c, io.LimitReader(neverEnding('x'), 1<<30)); ReasonOf(err) != SizeMismatch {
		t.Errorf("io.Copy of an endless body = %v", err)
	}

	// Short content.
	c = NewChecker(r)
	c.Write(content[:10])
	if err := c.Finish(); ReasonOf(err) != SizeMismatch {
		t.Errorf("Finish short = %v", err)
	}

	// Right length, wrong bytes.
	c = NewChecker(r)
	c.Write(bytes.Repeat([]byte("x"), len(content)))
	if err := c.Finish(); ReasonOf(err) != DigestMismatch {
		t.Errorf("Finish wrong bytes = %v", err)
	}

	// A malformed digest fails before any byte is taken.
	bad := r
	bad.Digest = "sha256:nope"
	c = NewChecker(bad)
	if n, err := c.Write(content); n != 0 || ReasonOf(err) != BadDigest {
		t.Errorf("Write with bad digest = %d, %v", n, err)
	}
}

type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}
