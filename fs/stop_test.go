package fs

import (
	"sync"
	"testing"
)

// An unmount we asked for and the end of the server's loop both mark the
// mount stopped; when they raced, the second close of done panicked and
// the daemon exited 2 instead of 0.
func TestStopTwiceAtOnce(t *testing.T) {
	for range 50000 {
		m := &Mount{done: make(chan struct{})}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 8 {
			wg.Go(func() {
				<-start
				m.stop()
			})
		}
		close(start)
		wg.Wait()
		select {
		case <-m.done:
		default:
			t.Fatal("done is not closed after stop")
		}
	}
}
