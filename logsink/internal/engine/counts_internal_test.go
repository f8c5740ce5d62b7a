package engine

import (
	"sync"
	"testing"
)

// A shard's two counts share one word (shardCounts): neither carries into
// the other, at the largest values they take, while goroutines move both
// at once.
func TestShardCountsKeepApart(t *testing.T) {
	var c shardCounts
	const big = 1 << 30 // a full ring of the largest capacity
	if q := c.addQueued(big); q != big {
		t.Fatalf("addQueued(%d) = %d", big, q)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 10000 {
				if q := c.begin(); q < big-8 || q > big+8 {
					t.Errorf("begin saw queued %d, want %d±8", q, big)
					return
				}
				c.addQueued(1)
				c.end()
				c.addQueued(-1)
			}
		})
	}
	wg.Wait()
	if q, n := c.queued(), c.inflight(); q != big || n != 0 {
		t.Fatalf("queued %d, inflight %d; want %d and 0", q, n, big)
	}
	c.addQueued(-big)
	for range 3 {
		c.begin()
	}
	if q, n := c.queued(), c.inflight(); q != 0 || n != 3 {
		t.Fatalf("queued %d, inflight %d; want 0 and 3", q, n)
	}
}
