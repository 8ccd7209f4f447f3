package vfs

import (
	"testing"
)

// settle answers only once every subscriber has acted on what was published
// before it: the user's approve and revoke answer after the kernel is told.
func TestSettleWaitsForEverySubscriber(t *testing.T) {
	var f feed
	queues := []chan Change{make(chan Change, 4), make(chan Change, 4)}
	for _, q := range queues {
		f.Subscribe(func(c Change) { q <- c })
	}
	f.publish(Change{Files: []string{"o/a"}})
	settled := make(chan bool)
	go func() { settled <- f.settle() }()
	for i, q := range queues {
		if c := <-q; len(c.Files) != 1 {
			t.Fatalf("subscriber %d first got %+v, want the published change", i, c)
		}
		c := <-q // the barrier
		select {
		case <-settled:
			t.Fatalf("settle answered before subscriber %d acted", i)
		default:
		}
		c.Done()
		c.Done() // a second Done is harmless
	}
	if ok := <-settled; !ok {
		t.Fatal("settle reported a subscriber that did not act")
	}
	var none feed
	if !none.settle() {
		t.Fatal("settle with no subscriber waited")
	}
}
