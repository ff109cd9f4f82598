package listing

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"
)

// Cache keeps a server's last listing of resources or prompts, so that the
// chat's commands and completions do not ask the server each time. On a
// session of protocol 2025-11-25, notifications/…/list_changed (or a
// restart) marks it stale and the next Get lists again. On a session of
// 2026-07-28 the server's caching hints decide (SEP-2549: ttlMs): the
// SDK's per-session cache keeps each page for its ttlMs and drops it on a
// list_changed, so Get always asks the SDK and keeps no second copy.
type Cache[T any] struct {
	stale   atomic.Bool
	mu      sync.Mutex
	loaded  bool
	offered bool // the server advertises the capability
	hinted  bool // protocol 2026-07-28: the SDK's cache decides
	items   []*T
}

// Set records a listing made on connecting; offered says whether the
// server advertises the capability, hinted whether the session's protocol
// has caching hints.
func (l *Cache[T]) Set(offered, hinted bool, items []*T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.offered, l.hinted, l.items, l.loaded = offered, hinted, items, true
	l.stale.Store(false)
}

// Offered reports whether the server advertised the capability when it
// (last) connected.
func (l *Cache[T]) Offered() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.offered
}

// MarkStale makes the next Get list again. It does not wait, so the SDK's
// reading goroutine can call it from a notification handler.
func (l *Cache[T]) MarkStale() { l.stale.Store(true) }

// Get returns the items of the last listing, calling list first when the
// listing is stale, was never made, or the SDK's cache decides. A server
// without the capability has none.
func (l *Cache[T]) Get(ctx context.Context, list func(context.Context) ([]*T, error)) ([]*T, error) {
	l.mu.Lock()
	if !l.offered {
		l.mu.Unlock()
		return nil, nil
	}
	if l.loaded && !l.hinted && !l.stale.Load() {
		items := l.items
		l.mu.Unlock()
		return items, nil
	}
	l.mu.Unlock()
	// Cleared before listing, so a change announced during the listing
	// is not lost.
	l.stale.Store(false)
	items, err := list(ctx)
	if err != nil {
		l.stale.Store(true)
		return nil, err
	}
	l.mu.Lock()
	l.items, l.loaded = items, true
	l.mu.Unlock()
	return items, nil
}

// TTL gathers the caching hints (ttlMs) of the pages of one listing.
type TTL struct{ ms int }

// Page notes the hint of one page.
func (t *TTL) Page(r interface{ GetTTLMs() int }) { t.ms = max(t.ms, r.GetTTLMs()) }

// Until is when a listing made now on a session whose protocol has caching
// hints (hinted) goes stale; the zero time (never: only a list_changed makes
// it stale) without them. It is the longest hint of the pages, not the
// shortest: by then the SDK's cache holds none of them, so the next listing
// reads every page from the server (whose raw bytes the bridge captures).
func (t TTL) Until(hinted bool) time.Time {
	if !hinted {
		return time.Time{}
	}
	return time.Now().Add(time.Duration(t.ms) * time.Millisecond)
}

// Expired reports whether a listing that is fresh until until (zero:
// forever) is stale now.
func Expired(until time.Time) bool { return !until.IsZero() && !time.Now().Before(until) }

// Sum is a digest of a listing's items, to tell a listing that changed
// nothing from one that did.
func Sum[T any](items []*T) [32]byte {
	b, _ := json.Marshal(items)
	return sha256.Sum256(b)
}
