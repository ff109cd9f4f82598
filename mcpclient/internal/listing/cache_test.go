package listing

import (
	"context"
	"testing"
	"time"
)

type item struct{ N int }

func TestCache(t *testing.T) {
	calls := 0
	list := func(context.Context) ([]*item, error) { calls++; return []*item{{calls}}, nil }
	var c Cache[item]
	if got, _ := c.Get(context.Background(), list); got != nil || calls != 0 {
		t.Fatalf("not offered: %v, %d calls", got, calls)
	}
	// 2025-11-25: kept until a list_changed.
	c.Set(true, false, []*item{{0}})
	c.Get(context.Background(), list)
	c.Get(context.Background(), list)
	if calls != 0 {
		t.Errorf("%d calls before a change", calls)
	}
	c.MarkStale()
	if got, _ := c.Get(context.Background(), list); len(got) != 1 || got[0].N != 1 {
		t.Errorf("after a change: %v", got)
	}
	// 2026-07-28: the SDK's cache decides, so every Get asks it.
	c.Set(true, true, nil)
	c.Get(context.Background(), list)
	c.Get(context.Background(), list)
	if calls != 3 {
		t.Errorf("hinted: %d calls, want 3", calls)
	}
}

type ttlPage int

func (p ttlPage) GetTTLMs() int { return int(p) }

func TestTTL(t *testing.T) {
	var ttl TTL
	ttl.Page(ttlPage(100))
	ttl.Page(ttlPage(60_000))
	if u := ttl.Until(false); !u.IsZero() || Expired(u) {
		t.Errorf("without hints: %v", u)
	}
	if u := ttl.Until(true); time.Until(u) < 59*time.Second || Expired(u) {
		t.Errorf("the longest page's hint: %v", time.Until(u))
	}
	if u := (TTL{}).Until(true); !Expired(u) {
		t.Error("ttlMs 0 is stale at once")
	}
	if Sum([]*item{{1}}) == Sum([]*item{{2}}) || Sum([]*item{{1}}) != Sum([]*item{{1}}) {
		t.Error("Sum")
	}
}
