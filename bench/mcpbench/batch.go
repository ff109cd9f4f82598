//go:build linux

package mcpbench

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// A batch is a run of tools/call requests that the reader goroutine drives
// itself: it checks each response as it reads it and at once writes the
// next request, keeping up to inflight outstanding. No other goroutine
// takes part per call, and the request is the same bytes each time but
// for the id, so a call costs the harness little more than the system
// calls that carry it. The waiting goroutine only learns of the end.
type batch struct {
	s     *Server
	tool  string
	first int64 // the ids are first … first+n-1
	n     int
	done  chan struct{} // closed once, when finished is set

	mu       sync.Mutex
	sent     int
	got      int    // answered and checked
	open     []bool // open[id-first]: written and not answered yet
	req      []byte // the request being written: head, id, tail
	head     int
	tail     []byte
	lat      []time.Duration // when timing (one in flight): each call's time
	t0       time.Time       // when the request in flight was written
	err      error
	finished bool
}

// owns reports whether id is one of the batch's.
func (b *batch) owns(id int64) bool { return id >= b.first && id < b.first+int64(b.n) }

// send writes the next request; b.mu is held.
func (b *batch) send() error {
	id := b.first + int64(b.sent)
	b.open[b.sent] = true
	b.sent++
	if b.lat != nil {
		b.t0 = time.Now()
	}
	b.req = append(strconv.AppendInt(b.req[:b.head], id, 10), b.tail...)
	b.s.wmu.Lock()
	_, err := b.s.stdin.Write(b.req)
	b.s.wmu.Unlock()
	return err
}

// answer handles the response m to the batch's request id, on the reader
// goroutine. It returns an error only for a response that must end the
// reading, as an unknown id does for other requests.
func (b *batch) answer(id int64, m Message) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := id - b.first
	if !b.open[k] {
		return fmt.Errorf("response to an id we did not send: %s", m.ID)
	}
	b.open[k] = false
	if b.finished { // failed already: the answers still coming are dropped
		return nil
	}
	if err := checkToolCall(m); err != nil {
		b.finish(fmt.Errorf("tools/call %s: %w", b.tool, err))
		return nil
	}
	if b.lat != nil {
		b.lat = append(b.lat, time.Since(b.t0))
	}
	if b.got++; b.got == b.n {
		b.finish(nil)
	} else if b.sent < b.n {
		if err := b.send(); err != nil {
			b.finish(fmt.Errorf("writing to the server: %w", err))
		}
	}
	return nil
}

// finish ends the batch; b.mu is held.
func (b *batch) finish(err error) {
	b.err, b.finished = err, true
	close(b.done)
}

func (b *batch) answered() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.got
}

// runBatch makes n tools/call requests of tool with params, keeping up to
// inflight of them outstanding, and returns once every one was answered
// and checked as CheckToolResult checks. With timing (which needs inflight
// 1) it returns each call's time, from just before its request was
// written until its response was read and checked. It fails when a
// response fails the check, when the server stops answering, when no call
// was answered for stall, or with ctx; label names the batch in errors.
func (s *Server) runBatch(ctx context.Context, label, tool string, params json.RawMessage, n, inflight int, timing bool, stall time.Duration) ([]time.Duration, error) {
	if n <= 0 {
		return nil, nil
	}
	if timing && inflight != 1 {
		return nil, fmt.Errorf("%s: timing calls needs one in flight, not %d", label, inflight)
	}
	s.mu.Lock()
	err := s.readErr
	s.mu.Unlock()
	if err != nil {
		return nil, s.describe(err)
	}
	b := &batch{s: s, tool: tool, n: n, done: make(chan struct{}), open: make([]bool, n)}
	b.first = s.nextID.Add(int64(n)) - int64(n) + 1
	// The same bytes as AppendRequest writes, split around the id.
	b.req = AppendRequest(nil, 0, "tools/call", params)
	b.head = len(`{"jsonrpc":"2.0","id":`)
	b.tail = b.req[b.head+1:]
	b.req = make([]byte, 0, len(b.req)+20)
	b.req = append(b.req, `{"jsonrpc":"2.0","id":`...)
	if timing {
		b.lat = make([]time.Duration, 0, n)
	}
	s.batch.Store(b)

	b.mu.Lock()
	for b.sent < min(inflight, n) && !b.finished {
		if err := b.send(); err != nil {
			b.finish(fmt.Errorf("writing to the server: %w", err))
		}
	}
	b.mu.Unlock()

	result := func() ([]time.Duration, error) {
		if b.err != nil { // set before done was closed
			return nil, s.describe(b.err)
		}
		s.batch.Store(nil)
		return b.lat, nil
	}
	tick := time.NewTicker(max(stall/4, time.Millisecond))
	defer tick.Stop()
	last, lastAt := -1, time.Now()
	for {
		select {
		case <-b.done:
			return result()
		case <-s.readEnd:
			select { // the last answer may have come just before the end
			case <-b.done:
				return result()
			default:
			}
			s.mu.Lock()
			err := s.readErr
			s.mu.Unlock()
			return nil, s.describe(fmt.Errorf("reading from the server: %w", err))
		case <-ctx.Done():
			return nil, s.describe(fmt.Errorf("%s: %d of %d calls answered: %w", label, b.answered(), n, ctx.Err()))
		case now := <-tick.C:
			got := b.answered()
			if got != last {
				last, lastAt = got, now
			} else if now.Sub(lastAt) >= stall {
				return nil, s.describe(fmt.Errorf("%s: %d of %d calls answered, none in %v: %w",
					label, got, n, now.Sub(lastAt).Round(time.Millisecond), context.DeadlineExceeded))
			}
		}
	}
}
