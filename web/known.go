package web

import (
	"context"
	"sync"
	"time"
)

// knownSessions remembers the session ids this server created or found
// stored, so that a message to one of them is answered without a database
// read before its stream opens. Under load that read waited for one of the
// store's few connections behind the running turns' queries, and was most
// of the time to a message's first event (bench/NOTES.md, "The chat API's
// first event").
//
// A remembered id that is no longer stored costs nothing wrong: the only
// removal is the prune of sessions left empty for host.EmptySessionTTL, and
// a turn on a pruned id stores its session row again. Entries expire after
// knownTTL all the same, so the cache never vouches for an id for long,
// and the set is capped at 2×knownCap entries in two generations: when the
// newer is full it becomes the older and the older is dropped.
type knownSessions struct {
	mu       sync.Mutex
	cur, old map[string]time.Time // id → when it was last seen stored
	cap      int
	ttl      time.Duration
}

const (
	// knownCap is the size of one generation of knownSessions.
	knownCap = 1 << 15
	// knownTTL is how long a remembered id is trusted, well under
	// host.EmptySessionTTL.
	knownTTL = time.Hour
)

func newKnownSessions(capacity int, ttl time.Duration) *knownSessions {
	return &knownSessions{cur: map[string]time.Time{}, old: map[string]time.Time{}, cap: max(capacity, 1), ttl: ttl}
}

// add remembers id as stored at now; on nil it does nothing.
func (k *knownSessions) add(id string, now time.Time) {
	if k == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.cur[id]; !ok && len(k.cur) >= k.cap {
		k.old, k.cur = k.cur, make(map[string]time.Time, k.cap)
	}
	k.cur[id] = now
}

// has reports whether id was seen stored within the TTL before now; nil
// knows none.
func (k *knownSessions) has(id string, now time.Time) bool {
	if k == nil {
		return false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	at, ok := k.cur[id]
	if !ok {
		at, ok = k.old[id]
	}
	if ok && now.Sub(at) < k.ttl {
		return true
	}
	if ok {
		delete(k.cur, id)
		delete(k.old, id)
	}
	return false
}

// sessionExists reports whether a session is stored, from memory when this
// server created or saw it recently, else from the store (remembering a
// yes).
func (s *Server) sessionExists(ctx context.Context, id string) (bool, error) {
	if s.known.has(id, s.clock.Now()) {
		return true, nil
	}
	ok, err := s.sessions.Exists(ctx, id)
	if ok && err == nil {
		s.known.add(id, s.clock.Now())
	}
	return ok, err
}
