package support

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sync"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/store"
)

// orderIDPattern is the order number after trimming; the schema's pattern is
// the same with optional white space around it.
var orderIDPattern = regexp.MustCompile(`^[A-Z]{1,4}-[0-9]{4,12}$`)

// OrderStatus is getOrderStatus's result for a known order, which the tool
// returns encoded (json.RawMessage).
type OrderStatus struct {
	OrderID string `json:"orderId"`
	Status  string `json:"status"`
	ETA     string `json:"eta"`
}

// OrderNotFound is getOrderStatus's result for an unknown order number (also
// returned encoded). It is
// a normal result, not an error: the model should tell the customer and ask
// them to check the number, not retry the call.
type OrderNotFound struct {
	OrderID string `json:"orderId"`
	Found   bool   `json:"found"`
	Message string `json:"message"`
}

func (s *Service) newOrderStatusTool() *agent.Tool {
	return &agent.Tool{
		Name:  "getOrderStatus",
		Title: "Order status",
		Description: "Look up the shipping status and expected delivery of one customer order. " +
			"Use it whenever the customer gives an order number or asks where an order is. " +
			"orderId is the order number in upper case: 1-4 letters, a dash and 4-12 digits, e.g. \"A-1024\". " +
			"Returns {orderId, status, eta}; status and eta are in Chinese, translate them when the customer writes another language. " +
			"An unknown number is not an error: the result has found=false and a message; ask the customer to check the number instead of retrying.",
		InputSchema:  orderStatusInputSchema,
		OutputSchema: orderStatusOutputSchema,
		ReadOnly:     true,
		Idempotent:   true,
		// It reads or adds records of its own database: it deletes and
		// overwrites nothing and reaches nothing outside the domain.
		Destructive: new(false),
		OpenWorld:   new(false),
		Validate:    true,
		Execute:     s.orderStatus,
	}
}

// orderStatus is getOrderStatus's Execute.
func (s *Service) orderStatus(ctx context.Context, raw json.RawMessage) (any, error) {
	const tool = "getOrderStatus"
	a, err := decodeArgs(tool, raw, "orderId")
	if err != nil {
		return nil, err
	}
	id, err := a.text(textRule{name: "orderId", maxChars: maxOrderIDChars})
	if err != nil {
		return nil, err
	}
	if !orderIDPattern.MatchString(id) {
		return nil, &ArgError{Tool: tool, Field: "orderId",
			Msg: fmt.Sprintf("%q is not an order number; expected 1-4 upper-case letters, a dash and 4-12 digits, e.g. A-1024", id)}
	}
	// The look-up does not watch the request's cancellation: for a
	// cancellable context, database/sql and the SQLite driver each start a
	// goroutine per query to watch it, which cost more than this one-row
	// primary-key read (about a third of Execute's time). A request
	// cancelled before the read still stops here; one cancelled during it
	// waits the few microseconds it takes (or, if another process holds the
	// database in recovery, at most store.BusyTimeout).
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.orders == nil {
		return s.readOrder(ctx, id)
	}
	return s.orders.get(ctx, id, func() (any, error) { return s.readOrder(ctx, id) })
}

// readOrder reads one order from the database: getOrderStatus's plain path.
// The result is an OrderStatus or an OrderNotFound, encoded once here
// (json.RawMessage, which every consumer of tool output takes as is) so
// that the cache hands out the encoded form and no call encodes it again.
func (s *Service) readOrder(ctx context.Context, id string) (any, error) {
	var out OrderStatus
	err := s.orderQuery.QueryRowContext(context.WithoutCancel(ctx), id).
		Scan(&out.OrderID, &out.Status, &out.ETA)
	if errors.Is(err, sql.ErrNoRows) {
		return encodeOrder(OrderNotFound{
			OrderID: id,
			Found:   false,
			Message: fmt.Sprintf("No order with number %s was found. Ask the customer to check the order number.", id),
		})
	}
	if err != nil {
		return nil, fmt.Errorf("getOrderStatus: cannot read order %s from the database: %w", id, err)
	}
	return encodeOrder(out)
}

// encodeOrder returns v encoded by json.Marshal (compact, HTML-escaped:
// what agent.FormatOutput would make of v) as a json.RawMessage in an
// interface, so that a cached result is boxed once and not again on every
// call that returns it.
func encodeOrder(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("getOrderStatus: tool output cannot be encoded as JSON: %w", err)
	}
	return json.RawMessage(b), nil
}

// orderCache keeps getOrderStatus's results, each valid only while nothing
// has been committed to the database since it was read. Even a prepared
// point query costs several microseconds in SQLite (most of it beginning
// and ending the read transaction), while store.Watch answers "has anything
// been committed?" from memory. Any commit, by any connection or process and
// to any table, empties the cache in effect, which is rare next to reads.
type orderCache struct {
	st *store.Store

	// The watch is opened on the first look-up, so that a Service made only
	// to migrate the schema holds no extra connection; nil after that when
	// it could not be opened.
	open  sync.Once
	watch *store.Watch

	mu      sync.Mutex
	entries map[string]orderEntry
}

type orderEntry struct {
	v   store.Version
	out any // readOrder's result: a value, never changed once made
}

// maxCachedOrders bounds the cache; when it is full it starts again empty.
const maxCachedOrders = 4096

func newOrderCache(st *store.Store) *orderCache {
	if st.Dialect() != store.SQLite {
		return nil // PostgreSQL has no cheap change counter: read every time
	}
	return &orderCache{st: st, entries: map[string]orderEntry{}}
}

// get returns id's cached result if nothing was committed since it was
// read, or else read's and keeps it. The Version is taken before read runs,
// so a commit that lands during the read makes the entry stale at once
// instead of being missed.
func (c *orderCache) get(ctx context.Context, id string, read func() (any, error)) (any, error) {
	c.open.Do(func() {
		// Without a watch the plain path serves every call.
		c.watch, _ = c.st.Watch(context.WithoutCancel(ctx))
	})
	if c.watch == nil {
		return read()
	}
	v, err := c.watch.Version()
	if err != nil {
		return read()
	}
	c.mu.Lock()
	e, ok := c.entries[id]
	c.mu.Unlock()
	if ok && e.v == v {
		return e.out, nil
	}
	out, err := read()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.entries) >= maxCachedOrders {
		clear(c.entries)
	}
	c.entries[id] = orderEntry{v: v, out: out}
	c.mu.Unlock()
	return out, nil
}

func (c *orderCache) close() error {
	c.open.Do(func() {}) // a later look-up opens nothing
	if c.watch == nil {
		return nil
	}
	return c.watch.Close()
}
