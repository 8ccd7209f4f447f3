package vfs

import (
	"context"
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
