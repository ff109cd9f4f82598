package web

import (
	"container/list"
	"sync"
)

// v1SummaryEntries bounds the summaries /v1/chat/completions keeps. Each
// is bounded by the host's summary reserve (a few thousand tokens at
// most), so the cache stays within a few megabytes.
const v1SummaryEntries = 256

// summaryLRU is the host.SummaryCache of /v1/chat/completions: a caller
// sends the whole conversation with every request, and the summary of
// its folded prefix is reused instead of asking the model for it again.
// The least recently used entry goes when it is full.
type summaryLRU struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *lruEntry, most recent first
	byKey map[string]*list.Element
}

type lruEntry struct{ key, summary string }

func newSummaryLRU(max int) *summaryLRU {
	return &summaryLRU{max: max, order: list.New(), byKey: map[string]*list.Element{}}
}

func (c *summaryLRU) Get(key string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[key]
	if !ok {
		return "", false
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruEntry).summary, true
}

func (c *summaryLRU) Put(key, summary string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[key]; ok {
		e.Value.(*lruEntry).summary = summary
		c.order.MoveToFront(e)
		return
	}
	c.byKey[key] = c.order.PushFront(&lruEntry{key: key, summary: summary})
	for c.order.Len() > c.max {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byKey, last.Value.(*lruEntry).key)
	}
}

// Len is the number of summaries kept.
func (c *summaryLRU) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
