package resolver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skillfs/skillfs/resolver/transport"
	"github.com/skillfs/skillfs/skill"
	"github.com/skillfs/skillfs/verify"
)

// Fetch reads one file with resources/read and returns its raw bytes,
// unverified. The response is refused before it is decoded when it is
// larger than the file's declared size allows (or the per-file cap, when
// the size is unknown), and the bytes are charged to the origin's budget.
func (o *Origin) Fetch(ctx context.Context, r skill.Resource) ([]byte, error) {
	cap := o.limits.MaxFileSize
	if r.HasSize {
		if r.Size > cap {
			return nil, fmt.Errorf("read %s: %w: declared size %d is over the per-file cap of %d bytes", r.URI, ErrTooLarge, r.Size, cap)
		}
		cap = r.Size
	}
	reserve := cap
	if !r.HasSize {
		// Unknown sizes reserve nothing up front; the bytes are charged
		// when they arrive.
		reserve = 0
	}
	if err := o.reserve(reserve); err != nil {
		return nil, fmt.Errorf("read %s: %w", r.URI, err)
	}
	b, err := o.read(ctx, r.URI, cap)
	o.settle(reserve, int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", r.URI, err)
	}
	return b, nil
}

func (o *Origin) read(ctx context.Context, uri string, cap int64) ([]byte, error) {
	cs, err := o.session(ctx)
	if err != nil {
		return nil, err
	}
	want, err := verify.ParseURI(uri)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, o.limits.CallTimeout)
	defer cancel()
	o.mu.Lock()
	o.status.Reads++
	o.mu.Unlock()
	lctx := transport.WithResponseLimit(cctx, readLimit(cap, maxFrame(o.limits.MaxFileSize)))
	res, err := cs.ReadResource(lctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, o.lost(cs, classify(err))
	}
	var found *mcp.ResourceContents
	for _, c := range res.Contents {
		if c == nil {
			continue
		}
		if u, err := verify.ParseURI(c.URI); err == nil && u.String() == want.String() {
			if found != nil {
				return nil, fmt.Errorf("%w: two contents for the one URI", ErrMalformed)
			}
			found = c
		}
	}
	if found == nil {
		return nil, fmt.Errorf("%w: no contents for the URI asked for", ErrMalformed)
	}
	var b []byte
	switch {
	case found.Blob != nil && found.Text != "":
		return nil, fmt.Errorf("%w: contents carry both text and blob", ErrMalformed)
	case found.Blob != nil:
		b = found.Blob
	default:
		b = []byte(found.Text)
	}
	if int64(len(b)) > cap {
		return nil, fmt.Errorf("%w: %d bytes, more than the %d allowed", ErrTooLarge, len(b), cap)
	}
	return b, nil
}

// reserve takes n bytes of the origin's budget, or fails with ErrOverBudget.
func (o *Origin) reserve(n int64) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	budget := o.limits.Budget
	if budget > 0 && (o.budgetUsed >= budget || o.budgetUsed+n > budget) {
		return fmt.Errorf("%w: %d of %d bytes used", ErrOverBudget, o.budgetUsed, budget)
	}
	o.budgetUsed += n
	return nil
}

// settle replaces a reservation with the bytes actually received.
func (o *Origin) settle(reserved, got int64) {
	o.mu.Lock()
	o.budgetUsed += got - reserved
	o.mu.Unlock()
}
