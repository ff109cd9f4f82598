// Package support implements the customer-service tools of the demo domain
// on agentapp's database (SQLite, or PostgreSQL shared by replicas): order status look-up, after-sales tickets
// and the hand-off to a human agent.
//
// Each tool is an ordinary *agent.Tool whose input schema is a package-level
// JSON value, so the loop's local validation and the MCP server publish the
// very same bytes. Execute checks the business rules again by itself, because
// the MCP server and tests call it without the loop's validation.
//
// All state lives in the shared database, never in the process: ticket
// numbers come from a counter row updated inside a write transaction, so two
// processes (a chat and the `agentapp serve` it spawned) never hand out the
// same number, and a restart continues the sequence.
package support

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/store"
)

// IdempotencyWindow is how long an identical createTicket call in the same
// session returns the first ticket instead of opening a duplicate. A model
// that retries after a timeout, or a user who repeats themselves, should not
// leave two tickets behind; a genuine new request later still gets its own.
const IdempotencyWindow = 10 * time.Minute

// Service owns the support tables and builds the three tools. The tools it
// returns are created once in New and are safe for concurrent use.
type Service struct {
	st  *store.Store
	now func() time.Time

	// writeSlot (capacity 1 on SQLite) queues this Service's writers before they take
	// the database's write lock. Without it they would contend inside
	// SQLite, whose busy handler polls with growing sleeps (twice as slow
	// with 8 writers); the database lock still serialises writers of
	// different processes. A channel rather than a mutex, so a cancelled
	// caller stops waiting.
	writeSlot chan struct{}

	// changes wakes WaitChange's callers (changes.go).
	changes changes

	// orderQuery is getOrderStatus's statement, prepared once: parsing it
	// anew cost a third of each look-up. It lives as long as the database.
	orderQuery *sql.Stmt
	// orders caches the look-ups on SQLite (nil: read every time).
	orders *orderCache

	orderTool    *agent.Tool
	ticketTool   *agent.Tool
	escalateTool *agent.Tool

	// maxPending and maxPerMinute bound one caller's refund requests
	// (refunds.go; WithRefundBounds).
	maxPending, maxPerMinute int
}

// Option configures a Service.
type Option func(*Service)

// WithClock replaces the wall clock, so tests can move time past the
// idempotency window and pin the date in ticket ids. The clock must be safe
// for concurrent use.
func WithClock(now func() time.Time) Option {
	return func(s *Service) {
		if now != nil {
			s.now = now
		}
	}
}

// WithRefundBounds replaces the bounds of one caller's refund requests
// (MaxPendingRefundsPerCaller undecided, MaxRefundsPerCallerMinute a
// minute); a bound below 1 keeps its default.
func WithRefundBounds(pending, perMinute int) Option {
	return func(s *Service) {
		if pending > 0 {
			s.maxPending = pending
		}
		if perMinute > 0 {
			s.maxPerMinute = perMinute
		}
	}
}

// New migrates the support tables of st (seeding the demo orders the first
// time) and returns a Service whose tools use st.
func New(ctx context.Context, st *store.Store, opts ...Option) (*Service, error) {
	if st == nil || st.DB == nil {
		return nil, errors.New("support.New: no open store (call store.Open first)")
	}
	if err := st.MigrateDialect(ctx, "support", migrations, postgresMigrations); err != nil {
		return nil, err
	}
	// PostgreSQL runs writers side by side (createTicket's row and
	// advisory locks serialise only what must be), so there the slot only
	// bounds them to a share of the pool.
	writers := 1
	if st.Dialect() == store.Postgres {
		writers = 4
	}
	s := &Service{st: st, now: time.Now, writeSlot: make(chan struct{}, writers),
		maxPending: MaxPendingRefundsPerCaller, maxPerMinute: MaxRefundsPerCallerMinute}
	for _, o := range opts {
		o(s)
	}
	var err error
	s.orderQuery, err = st.DB.PrepareContext(ctx, `SELECT id, status, eta FROM support_orders WHERE id = ?`)
	if err != nil {
		return nil, fmt.Errorf("support: prepare the order query: %w", err)
	}
	s.orders = newOrderCache(st)
	s.orderTool = s.newOrderStatusTool()
	s.ticketTool = s.newCreateTicketTool()
	s.escalateTool = s.newEscalateTool()
	return s, nil
}

// Close releases what the Service holds beside the store: the connection
// that watches the database for getOrderStatus's cache (the store's Close
// releases it too). The tools must not be running.
func (s *Service) Close() error {
	s.changes.close() // changes.go
	if s.orders == nil {
		return nil
	}
	return s.orders.close()
}

// write runs fn in a write transaction, one writer of this Service at a time.
func (s *Service) write(ctx context.Context, fn func(*sql.Tx) error) error {
	select {
	case s.writeSlot <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.writeSlot }()
	return s.st.Tx(ctx, func(tx *sql.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		return s.notifyTx(ctx, tx) // wakes WaitChange in other processes
	})
}

// OrderStatusTool returns the getOrderStatus tool; every call returns the
// same *agent.Tool, so its compiled schema is shared.
func (s *Service) OrderStatusTool() *agent.Tool { return s.orderTool }

// CreateTicketTool returns the createTicket tool (the same value every call).
func (s *Service) CreateTicketTool() *agent.Tool { return s.ticketTool }

// EscalateTool returns the escalateToHuman tool (the same value every call).
// It is for the local tool set only: a hand-off needs the conversation, and
// MCP is session-less, so the server must never publish it.
func (s *Service) EscalateTool() *agent.Tool { return s.escalateTool }
