package mcpserver

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestSessionCapNeverEvictsABusySession races requests on open sessions
// (use and done, which take no lock) against new sessions making room
// (reserve, which claims idle ones): a session a request holds must never
// be chosen, and the count must stay within the bound.
func TestSessionCapNeverEvictsABusySession(t *testing.T) {
	const max, users, rounds = 6, 12, 300
	c := &sessionCap{max: max}
	type entry struct {
		id    string
		s     *capSession
		inUse atomic.Int32 // requests between a successful use and their done
	}
	var mu sync.Mutex
	live := map[string]*entry{}
	add := func(i int) {
		e := &entry{id: fmt.Sprint("s", i), s: &capSession{}}
		c.mu.Lock()
		c.open.Store(e.id, e.s)
		c.n++
		c.mu.Unlock()
		mu.Lock()
		live[e.id] = e
		mu.Unlock()
	}
	for i := range max {
		add(i)
	}
	pick := func(k int) *entry {
		mu.Lock()
		defer mu.Unlock()
		for _, e := range live {
			if k--; k < 0 {
				return e
			}
		}
		return nil
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for u := range users {
		wg.Go(func() {
			for k := u; !stop.Load(); k++ {
				e := pick(k % max)
				if e == nil {
					continue
				}
				s := c.use(e.id, true)
				if s == nil {
					continue // evicted meanwhile: the SDK would answer 404
				}
				e.inUse.Add(1)
				runtime.Gosched() // hold it a while, as a request does
				if b := s.busy.Load(); b < 1 {
					t.Errorf("session %s was evicted while a request held it (busy %d)", e.id, b)
				}
				e.inUse.Add(-1)
				s.done(true)
			}
		})
	}
	evicted := 0
	for i := range rounds {
		victims, ok := c.reserve()
		if ok {
			c.mu.Lock()
			c.pending--
			c.mu.Unlock()
			mu.Lock()
			for id, e := range live {
				if e.s.busy.Load() < 0 {
					if n := e.inUse.Load(); n != 0 {
						t.Errorf("session %s was evicted with %d requests in progress", id, n)
					}
					delete(live, id)
					evicted++
				}
			}
			mu.Unlock()
			if len(victims) > 1 {
				t.Errorf("one new session evicted %d", len(victims))
			}
			add(max + i)
		}
		c.mu.Lock()
		n, pending := c.n, c.pending
		c.mu.Unlock()
		if n+pending > max {
			t.Fatalf("%d sessions and %d pending with a bound of %d", n, pending, max)
		}
	}
	stop.Store(true)
	wg.Wait()
	if evicted == 0 {
		t.Fatalf("no session was ever idle enough to evict in %d rounds", rounds)
	}
	// Every session left is counted once, and none is marked busy.
	count := 0
	c.open.Range(func(_, v any) bool {
		count++
		if b := v.(*capSession).busy.Load(); b != 0 {
			t.Errorf("a session is left with busy %d after every request ended", b)
		}
		return true
	})
	if count != c.n {
		t.Errorf("%d sessions stored, %d counted", count, c.n)
	}
}
