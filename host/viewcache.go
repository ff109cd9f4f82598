package host

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/agentapp/agentapp/budget"
	"github.com/agentapp/agentapp/model"
)

// viewCache keeps the model's view of recently used sessions between
// turns, with each message's token estimate, so that a turn reads from the
// database only the messages stored since the last one instead of the
// whole unfolded history (and counts only those). The database stays the
// truth: every read checks the session's creation time and stored fold
// (summary, folded_seq, folds) and that the last message read is still
// stored as it was, and reads the whole view again when anything
// disagrees (another process folded the session, or removed and rewrote
// it). Rows of chat_messages are only ever added after the last one (a
// turn takes MAX(seq)+1 inside its transaction), which is what makes
// reading on from the last seq seen enough. Bounded in sessions and in
// bytes, least recently used out first.
type viewCache struct {
	maxSessions, maxBytes int
	// whole and since count the reads of a whole view and of the rows
	// after a cached one, for tests.
	whole, since atomic.Int64

	mu    sync.Mutex
	m     map[string]*cachedView
	tick  uint64
	bytes int
}

// Bounds of the view cache: a host serving many sessions (the web) keeps
// the busiest ones.
const (
	viewCacheSessions = 256
	viewCacheBytes    = 64 << 20
)

func newViewCache() *viewCache {
	return &viewCache{maxSessions: viewCacheSessions, maxBytes: viewCacheBytes, m: map[string]*cachedView{}}
}

// cachedView is one session's view as last read. Its view is never
// changed once in the cache: a newer read replaces it (sharing its arrays,
// see extend).
type cachedView struct {
	v view
	// created and folds are the session's as stored when v was read: a
	// session removed and written again, or folded by another process,
	// differs in one of them.
	created string
	folds   int64
	// lastSeq is the highest seq read and last the row stored there, as
	// stored, to see that it still is.
	lastSeq int64
	last    storedRow
	est     *budget.Estimator // the estimator of v.tokens
	size    int
	used    uint64
	// extended says a newer view was made by appending to v's arrays
	// (c.mu held).
	extended bool
}

// storedRow is a chat_messages row as read.
type storedRow struct {
	seq                                int64
	role, content, calls, callID, name string
}

func (r storedRow) message(id string) (model.Message, error) {
	m := model.Message{Role: model.Role(r.role), Content: r.content, ToolCallID: r.callID, Name: r.name}
	if r.calls != "" {
		if err := json.Unmarshal([]byte(r.calls), &m.ToolCalls); err != nil {
			return m, fmt.Errorf("read chat session %s: a stored tool call is corrupt: %w", id, err)
		}
	}
	return m, nil
}

// messageSize approximates the memory a message holds, for the bound.
func messageSize(m model.Message) int {
	n := 96 + len(m.Content) + len(m.ToolCallID) + len(m.Name)
	for _, c := range m.ToolCalls {
		n += 64 + len(c.ID) + len(c.Name) + len(c.Arguments)
	}
	return n
}

// get returns the cached view of a session, or nil.
func (c *viewCache) get(id string) *cachedView {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.m[id]
	if e != nil {
		c.tick++
		e.used = c.tick
	}
	return e
}

// extend returns the view of base followed by the rows read after it,
// keeping the newest limit and starting at a user message, as a
// full read would.
func (c *viewCache) extend(id string, base *cachedView, rows []storedRow, est *budget.Estimator, limit int) (*cachedView, error) {
	msgs := make([]model.Message, len(rows))
	seqs := make([]int64, len(rows))
	for i, r := range rows {
		m, err := r.message(id)
		if err != nil {
			return nil, err
		}
		msgs[i], seqs[i] = m, r.seq
	}
	tokens := est.MessageTokens(msgs)
	n := &cachedView{v: view{summary: base.v.summary, foldedSeq: base.v.foldedSeq}, created: base.created, folds: base.folds,
		lastSeq: base.lastSeq, last: base.last, est: est}
	if len(rows) > 0 {
		n.lastSeq, n.last = rows[len(rows)-1].seq, rows[len(rows)-1]
	}
	c.mu.Lock()
	if !base.extended {
		// Only the first extension of base may write past its end (the
		// views handed out hold no more than their own length); any
		// other copies, or two turns would write the same elements.
		base.extended = true
		n.v.msgs = append(base.v.msgs, msgs...)
		n.v.seqs = append(base.v.seqs, seqs...)
		n.v.tokens = append(base.v.tokens, tokens...)
	} else {
		n.v.msgs = slices.Concat(base.v.msgs, msgs)
		n.v.seqs = slices.Concat(base.v.seqs, seqs)
		n.v.tokens = slices.Concat(base.v.tokens, tokens)
	}
	c.mu.Unlock()
	if k := len(n.v.msgs) - limit; k > 0 {
		n.v.msgs, n.v.seqs, n.v.tokens = n.v.msgs[k:], n.v.seqs[k:], n.v.tokens[k:]
	}
	k := 0
	for k < len(n.v.msgs) && n.v.msgs[k].Role != model.RoleUser {
		k++
	}
	n.v.msgs, n.v.seqs, n.v.tokens = n.v.msgs[k:], n.v.seqs[k:], n.v.tokens[k:]
	return n, nil
}

// put makes e the session's cached view, evicting the least recently
// used ones beyond the bounds. A view larger than the whole bound is not
// kept.
func (c *viewCache) put(id string, e *cachedView) {
	e.size = 0
	for _, m := range e.v.msgs {
		e.size += messageSize(m)
	}
	e.size += len(e.v.summary) + len(e.last.content) + len(e.last.calls)
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.m[id]; old != nil {
		c.bytes -= old.size
		delete(c.m, id)
	}
	if e.size > c.maxBytes {
		return
	}
	c.tick++
	e.used = c.tick
	c.m[id] = e
	c.bytes += e.size
	for len(c.m) > c.maxSessions || c.bytes > c.maxBytes {
		oldest := ""
		var at uint64
		for k, v := range c.m {
			if k != id && (oldest == "" || v.used < at) {
				oldest, at = k, v.used
			}
		}
		if oldest == "" {
			break
		}
		c.bytes -= c.m[oldest].size
		delete(c.m, oldest)
	}
}

// forget drops a session's cached view.
func (c *viewCache) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.m[id]; old != nil {
		c.bytes -= old.size
		delete(c.m, id)
	}
}

// fresh returns what the view shares with the cache as slices no longer
// than their length, so that a caller's append copies them.
func (e *cachedView) fresh() view {
	v := e.v
	v.msgs, v.seqs, v.tokens = slices.Clip(v.msgs), slices.Clip(v.seqs), slices.Clip(v.tokens)
	return v
}

// readRows reads the rows of a session from seq on, oldest first, at most
// limit.
func (s *sessions) readRows(ctx context.Context, id string, from int64, limit int) ([]storedRow, error) {
	rows, err := s.prepared(nil).QueryContext(ctx, `SELECT seq, role, content, tool_calls, tool_call_id, name
		FROM chat_messages WHERE session_id = ? AND seq >= ? ORDER BY seq LIMIT ?`, id, from, limit)
	if err != nil {
		return nil, fmt.Errorf("read chat session %s: %w", id, err)
	}
	defer rows.Close()
	var out []storedRow
	for rows.Next() {
		var r storedRow
		if err := rows.Scan(&r.seq, &r.role, &r.content, &r.calls, &r.callID, &r.name); err != nil {
			return nil, fmt.Errorf("read chat session %s: %w", id, err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read chat session %s: %w", id, err)
	}
	return out, nil
}
