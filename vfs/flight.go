package vfs

import (
	"context"
	"encoding/json"
	"sync"
)

// flight makes concurrent first reads of one file share one fetch. The
// fetch runs detached from the cancellation of whichever reader started it,
// so an interrupted reader does not fail the others; the resolver's call
// timeout bounds it.
type flight struct {
	mu    sync.Mutex
	calls map[string]*call
}

type call struct {
	done chan struct{}
	b    []byte
	err  error
}

func (g *flight) do(ctx context.Context, key string, fn func(context.Context) ([]byte, error)) ([]byte, error) {
	g.mu.Lock()
	c, ok := g.calls[key]
	if !ok {
		if g.calls == nil {
			g.calls = map[string]*call{}
		}
		c = &call{done: make(chan struct{})}
		g.calls[key] = c
		go func() {
			c.b, c.err = fn(context.WithoutCancel(ctx))
			g.mu.Lock()
			delete(g.calls, key)
			g.mu.Unlock()
			close(c.done)
		}()
	}
	g.mu.Unlock()
	select {
	case <-c.done:
		return c.b, c.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// sameEntryJSON compares two values by their JSON encoding, which is how
// entries are compared: the wire form is what the server asserted.
func sameEntryJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}
