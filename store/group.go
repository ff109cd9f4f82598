package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"
)

// groupCommit gathers the write transactions of GroupTx that arrive while
// one is being committed, and commits them together: one BEGIN IMMEDIATE
// and one COMMIT for the batch instead of one each. Without it, concurrent
// writers of one process each held a pool connection while they waited on
// SQLite's write lock, whose busy handler sleeps in steps of up to 100 ms,
// and 200 turns finishing at once queued behind each other that way
// (bench/NOTES.md, "The chat API's first event").
//
// There is no goroutine of its own: the writer that finds no batch running
// commits one, then hands the turn to the first writer still waiting.
type groupCommit struct {
	mu    sync.Mutex
	queue []*groupReq
	busy  bool // a writer is committing a batch
	// batches counts the committed or failed batches, for tests.
	batches int
}

type groupReq struct {
	ctx  context.Context
	fn   func(*sql.Tx) error
	done chan groupResult // buffered: a lead, then the result
}

type groupResult struct {
	err      error
	panicked any
	hasPanic bool
	lead     bool // no result yet: commit the next batch
}

// maxGroup caps the transactions of one batch, so that one batch's time
// stays short and the writers after it get their turn.
const maxGroup = 64

// groupTimeout bounds one batch: the wait for a connection and the write
// lock (BusyTimeout) and the statements of its transactions.
const groupTimeout = BusyTimeout + time.Minute

// groupSavepoint isolates each transaction of a batch.
const groupSavepoint = "agentapp_group"

// GroupTx is Tx for short write transactions that many goroutines run at
// once (a turn's messages, its usage): on SQLite, the transactions that
// wait while one commits are committed together, in the order they came,
// each inside a savepoint of its own, so that one that fails or panics is
// rolled back alone and the others commit. GroupTx returns only after the
// batch's COMMIT: a nil error means the writes are stored. A transaction
// that later ones read sees its own writes and those before it in the
// batch, as it would have after their commits.
//
// fn may run on another goroutine (the one committing the batch). It must
// not call GroupTx itself (it would wait for its own batch), nor commit or
// roll back tx. When ctx is done before fn starts, fn does not
// run and ctx's error is returned. On PostgreSQL, GroupTx is Tx.
func (s *Store) GroupTx(ctx context.Context, fn func(*sql.Tx) error) error {
	if s.Dialect() != SQLite {
		return s.Tx(ctx, fn)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r := &groupReq{ctx: ctx, fn: fn, done: make(chan groupResult, 1)}
	g := &s.group
	g.mu.Lock()
	g.queue = append(g.queue, r)
	lead := !g.busy
	g.busy = true
	g.mu.Unlock()
	for {
		if lead {
			s.commitGroup()
		}
		// The batch that holds r ends within groupTimeout, and every
		// batch before it too: this wait is bounded by theirs.
		res := <-r.done
		if res.lead {
			lead = true
			continue
		}
		if res.hasPanic {
			panic(res.panicked)
		}
		return res.err
	}
}

// commitGroup commits the next batch of the queue, delivers its results,
// and hands the next batch to the first writer left waiting.
func (s *Store) commitGroup() {
	g := &s.group
	g.mu.Lock()
	n := min(len(g.queue), maxGroup)
	batch := make([]*groupReq, n)
	copy(batch, g.queue)
	g.queue = append(g.queue[:0], g.queue[n:]...)
	g.mu.Unlock()

	results := s.runGroup(batch)

	g.mu.Lock()
	g.batches++
	var next *groupReq
	if len(g.queue) > 0 {
		next = g.queue[0]
	} else {
		g.busy = false
	}
	g.mu.Unlock()
	for i, r := range batch {
		r.done <- results[i]
	}
	if next != nil {
		next.done <- groupResult{lead: true}
	}
}

// runGroup runs batch in one transaction and returns each one's result.
func (s *Store) runGroup(batch []*groupReq) []groupResult {
	res := make([]groupResult, len(batch))
	// failAll gives err to every transaction that had not failed on its
	// own: nothing of the batch is stored.
	failAll := func(err error) []groupResult {
		for i := range res {
			if res[i].err == nil && !res[i].hasPanic {
				res[i].err = err
			}
		}
		return res
	}
	bctx, cancel := context.WithTimeout(context.Background(), groupTimeout)
	defer cancel()
	tx, err := s.DB.BeginTx(bctx, nil)
	if err != nil {
		return failAll(err)
	}
	ran := 0
	for i, r := range batch {
		if err := r.ctx.Err(); err != nil {
			res[i].err = err
			continue
		}
		if _, err := tx.ExecContext(bctx, "SAVEPOINT "+groupSavepoint); err != nil {
			tx.Rollback()
			return failAll(err)
		}
		res[i] = callGroupFn(r.fn, tx)
		if res[i].err == nil && !res[i].hasPanic {
			if _, err := tx.ExecContext(bctx, "RELEASE "+groupSavepoint); err != nil {
				tx.Rollback()
				return failAll(err)
			}
			ran++
			continue
		}
		// Undo this one alone. If SQLite rolled the whole transaction
		// back itself (an interrupted statement does), the savepoint is
		// gone and so is the batch.
		if _, err := tx.ExecContext(bctx, "ROLLBACK TO "+groupSavepoint); err != nil {
			tx.Rollback()
			return failAll(fmt.Errorf("a transaction committed with others failed and took them with it: %w", err))
		}
		if _, err := tx.ExecContext(bctx, "RELEASE "+groupSavepoint); err != nil {
			tx.Rollback()
			return failAll(err)
		}
	}
	if ran == 0 {
		tx.Rollback()
		return res
	}
	if err := tx.Commit(); err != nil {
		return failAll(err)
	}
	return res
}

// callGroupFn runs fn, turning a panic into a result the caller re-panics
// with.
func callGroupFn(fn func(*sql.Tx) error, tx *sql.Tx) (res groupResult) {
	defer func() {
		if p := recover(); p != nil {
			res = groupResult{panicked: p, hasPanic: true}
		}
	}()
	return groupResult{err: fn(tx)}
}
