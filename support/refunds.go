package support

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/store"
)

// Refund requests: requestRefund files one and it waits for a person. An
// operator approves or declines it (the web's operator view, or the API
// below); getRefundStatus reads the decision back. Only the caller who
// filed a request can read it: its id alone is not enough.

// The states of a refund request.
const (
	RefundPending  = "pending"
	RefundApproved = "approved"
	RefundDeclined = "declined"
)

// RefundWaiting is the status message of a request no one decided yet.
const RefundWaiting = "waiting for an operator"

const (
	maxRefundReasonChars = 2000
	maxNoteChars         = 2000
	maxOrderChars        = 64
)

// Refund is a refund request as its caller and the operator see it.
type Refund struct {
	RefundID  string `json:"refundId"`
	OrderID   string `json:"orderId"`
	Reason    string `json:"reason"`
	Status    string `json:"status"`
	Message   string `json:"message"`
	Note      string `json:"note,omitempty"`
	CreatedAt string `json:"createdAt"`
	DecidedAt string `json:"decidedAt,omitempty"`
}

// QueuedRefund is a refund request in the operator's list: with its caller.
type QueuedRefund struct {
	Refund
	Caller string `json:"caller"`
}

var requestRefundInputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "orderId": {"type": "string", "minLength": 1, "maxLength": 64, "description": "The order to refund, like A-1024."},
    "reason": {"type": "string", "minLength": 1, "maxLength": 2000, "description": "Why the customer wants the refund, in their words. Required to file the request; an MCP client that can ask its user is asked for it when it is left out."}
  },
  "required": ["orderId"],
  "additionalProperties": false
}`)

var getRefundStatusInputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "refundId": {"type": "string", "minLength": 1, "maxLength": 64, "description": "The refundId requestRefund returned."}
  },
  "required": ["refundId"],
  "additionalProperties": false
}`)

var refundOutputSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "refundId": {"type": "string"},
    "orderId": {"type": "string"},
    "reason": {"type": "string"},
    "status": {"type": "string", "enum": ["pending", "approved", "declined"]},
    "message": {"type": "string"},
    "note": {"type": "string"},
    "createdAt": {"type": "string"},
    "decidedAt": {"type": "string"}
  },
  "required": ["refundId", "orderId", "status", "message"]
}`)

// RequestRefundTool returns the requestRefund tool: it files the request
// and answers at once with its id and state (pending). A person decides
// later; getRefundStatus reports the decision.
func (s *Service) RequestRefundTool() *agent.Tool {
	return &agent.Tool{
		Name:  "requestRefund",
		Title: "Request a refund",
		Description: "File a refund request for an order; an operator approves or declines it, which can take hours. " +
			"Returns {refundId, status: pending, message}; give the customer the refundId and check the decision later with getRefundStatus. " +
			"orderId: the order number (like A-1024). reason: why the customer wants the refund, at most 2000 characters.",
		InputSchema:  requestRefundInputSchema,
		OutputSchema: refundOutputSchema,
		Destructive:  new(false),
		OpenWorld:    new(false),
		Validate:     true,
		Execute: func(ctx context.Context, raw json.RawMessage) (any, error) {
			orderID, reason, err := refundArgs(ctx, raw)
			if err != nil {
				return nil, err
			}
			return s.RequestRefund(ctx, CallerFrom(ctx), orderID, reason)
		},
	}
}

// GetRefundStatusTool returns the getRefundStatus tool, the read that
// reports an operator's decision on a request of the same caller.
func (s *Service) GetRefundStatusTool() *agent.Tool {
	return &agent.Tool{
		Name:         "getRefundStatus",
		Title:        "Refund request status",
		Description:  "Report the state of a refund request filed with requestRefund: pending (waiting for an operator), approved or declined, with the operator's note. refundId: the id requestRefund returned.",
		InputSchema:  getRefundStatusInputSchema,
		OutputSchema: refundOutputSchema,
		ReadOnly:     true,
		Idempotent:   true,
		Destructive:  new(false),
		OpenWorld:    new(false),
		Validate:     true,
		Execute: func(ctx context.Context, raw json.RawMessage) (any, error) {
			a, err := decodeArgs("getRefundStatus", raw, "refundId")
			if err != nil {
				return nil, err
			}
			id, err := a.text(textRule{name: "refundId", maxChars: 64})
			if err != nil {
				return nil, err
			}
			return s.Refund(ctx, CallerFrom(ctx), id)
		},
	}
}

func refundArgs(ctx context.Context, raw json.RawMessage) (orderID, reason string, err error) {
	a, err := decodeArgs("requestRefund", raw, "orderId", "reason")
	if err != nil {
		return "", "", err
	}
	if orderID, err = a.text(textRule{name: "orderId", maxChars: maxOrderChars}); err != nil {
		return "", "", err
	}
	if reason, err = a.text(textRule{name: "reason", maxChars: maxRefundReasonChars}); err != nil {
		return "", "", err
	}
	return orderID, reason, nil
}

type callerKey struct{}

// WithCaller returns a context naming who calls the tools: the owner of
// the refund requests they file. Without it the conversation's session
// (agent.WithSession) is the caller.
func WithCaller(ctx context.Context, caller string) context.Context {
	return context.WithValue(ctx, callerKey{}, caller)
}

// CallerFrom returns the caller WithCaller set, else the session.
func CallerFrom(ctx context.Context) string {
	if c, ok := ctx.Value(callerKey{}).(string); ok && c != "" {
		return c
	}
	return agent.SessionFrom(ctx)
}

// RequestRefund files a refund request of caller for an order that exists.
// The same caller asking again for the same order with the same reason
// within IdempotencyWindow gets the first request back (unless it was
// withdrawn), so a retry after an error or a timeout never files a second
// request an operator could approve too.
func (s *Service) RequestRefund(ctx context.Context, caller, orderID, reason string) (*Refund, error) {
	var r *Refund
	err := s.write(ctx, func(tx *sql.Tx) error {
		var err error
		r, err = s.fileRefund(ctx, tx, caller, orderID, reason)
		return err
	})
	if err != nil {
		return nil, refundError(err)
	}
	return r, nil
}

func refundError(err error) error {
	var ae *ArgError
	if errors.As(err, &ae) {
		return err
	}
	return fmt.Errorf("file the refund request: %w", err)
}

// fileRefund is RequestRefund inside the write transaction tx, so that a
// caller can store more in the same transaction (StartRefundTask's task).
func (s *Service) fileRefund(ctx context.Context, tx *sql.Tx, caller, orderID, reason string) (*Refund, error) {
	orderID, reason = strings.TrimSpace(orderID), strings.TrimSpace(reason)
	if orderID == "" || reason == "" {
		return nil, &ArgError{Tool: "requestRefund", Msg: "orderId and reason must not be empty"}
	}
	now := s.now().UTC()
	key := idempotencyKey(caller, "requestRefund", orderID, reason)
	cutoff := now.Add(-IdempotencyWindow).UnixMilli()
	// As in createTicket: SQLite's write transaction is the lock; on
	// PostgreSQL an advisory lock on the key serialises the same request.
	if s.st.Dialect() == store.Postgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`, key); err != nil {
			return nil, err
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM support_refund_keys WHERE created_ms <= ?`, cutoff); err != nil {
		return nil, err
	}
	var q QueuedRefund
	err := tx.QueryRowContext(ctx, `SELECT r.id, r.order_id, r.reason, r.status, r.note, r.created_at, r.decided_at
		FROM support_refund_keys k JOIN support_refunds r ON r.id = k.refund_id
		WHERE k.key = ? AND k.created_ms > ? AND r.status <> ?`, key, cutoff, RefundWithdrawn).
		Scan(&q.RefundID, &q.OrderID, &q.Reason, &q.Status, &q.Note, &q.CreatedAt, &q.DecidedAt)
	if err == nil {
		q.Message = refundMessage(q.Status, q.Note)
		return &q.Refund, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM support_orders WHERE id = ?`, orderID).Scan(&n); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, &ArgError{Tool: "requestRefund", Field: "orderId", Msg: fmt.Sprintf("no order has the id %q; look the order up with getOrderStatus first", orderID)}
	}
	r := &Refund{
		RefundID:  "RF-" + rand.Text()[:12],
		OrderID:   orderID,
		Reason:    reason,
		Status:    RefundPending,
		Message:   RefundWaiting,
		CreatedAt: now.Format(time.RFC3339Nano),
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO support_refunds (id, order_id, reason, status, caller, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		r.RefundID, r.OrderID, r.Reason, r.Status, caller, r.CreatedAt); err != nil {
		return nil, err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO support_refund_keys (key, refund_id, created_ms) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET refund_id = excluded.refund_id, created_ms = excluded.created_ms`,
		key, r.RefundID, now.UnixMilli())
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Refund returns caller's refund request id; a request of another caller
// is ErrNotFound, as an unknown id is, so ids cannot be probed.
func (s *Service) Refund(ctx context.Context, caller, id string) (*Refund, error) {
	q, err := s.refund(ctx, id)
	if err != nil {
		return nil, err
	}
	if q.Caller != caller {
		return nil, fmt.Errorf("%w: no refund request of yours has the id %q", ErrNotFound, id)
	}
	return &q.Refund, nil
}

func (s *Service) refund(ctx context.Context, id string) (*QueuedRefund, error) {
	var q QueuedRefund
	err := s.st.DB.QueryRowContext(ctx, `SELECT id, order_id, reason, status, caller, note, created_at, decided_at FROM support_refunds WHERE id = ?`, id).
		Scan(&q.RefundID, &q.OrderID, &q.Reason, &q.Status, &q.Caller, &q.Note, &q.CreatedAt, &q.DecidedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w: no refund request has the id %q", ErrNotFound, id)
	}
	if err != nil {
		return nil, fmt.Errorf("read refund request %s: %w", id, err)
	}
	q.Message = refundMessage(q.Status, q.Note)
	return &q, nil
}

func refundMessage(status, note string) string {
	switch status {
	case RefundApproved:
		return "approved by an operator" + noteSuffix(note)
	case RefundDeclined:
		return "declined by an operator" + noteSuffix(note)
	case RefundWithdrawn:
		return "withdrawn by the customer before an operator decided"
	}
	return RefundWaiting
}

func noteSuffix(note string) string {
	if note == "" {
		return ""
	}
	return ": " + note
}

// Refunds lists the refund requests for the operator, newest first, at
// most limit (capped like the other queues).
func (s *Service) Refunds(ctx context.Context, limit int) ([]QueuedRefund, error) {
	rows, err := s.st.DB.QueryContext(ctx, `SELECT id, order_id, reason, status, caller, note, created_at, decided_at
		FROM support_refunds ORDER BY created_at DESC LIMIT ?`, clampLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("list refund requests: %w", err)
	}
	defer rows.Close()
	var out []QueuedRefund
	for rows.Next() {
		var q QueuedRefund
		if err := rows.Scan(&q.RefundID, &q.OrderID, &q.Reason, &q.Status, &q.Caller, &q.Note, &q.CreatedAt, &q.DecidedAt); err != nil {
			return nil, fmt.Errorf("list refund requests: %w", err)
		}
		q.Message = refundMessage(q.Status, q.Note)
		out = append(out, q)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list refund requests: %w", err)
	}
	return out, nil
}

// ErrDecided is the error of deciding a refund request decided already.
var ErrDecided = errors.New("the refund request was decided already")

// DecideRefund records an operator's decision on a pending request. A
// request decided already keeps its first decision (ErrDecided); an
// unknown id is ErrNotFound.
func (s *Service) DecideRefund(ctx context.Context, id string, approve bool, note string) (*QueuedRefund, error) {
	note = strings.TrimSpace(note)
	if len([]rune(note)) > maxNoteChars {
		return nil, fmt.Errorf("the note is longer than %d characters", maxNoteChars)
	}
	status := RefundDeclined
	if approve {
		status = RefundApproved
	}
	stamp := s.now().UTC().Format(time.RFC3339Nano)
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE support_refunds SET status = ?, note = ?, decided_at = ? WHERE id = ? AND status = ?`,
			status, note, stamp, id, RefundPending)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n > 0 {
			return err
		}
		var cur string
		err = tx.QueryRowContext(ctx, `SELECT status FROM support_refunds WHERE id = ?`, id).Scan(&cur)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: no refund request has the id %q", ErrNotFound, id)
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("%w (%s)", ErrDecided, cur)
	})
	if err != nil {
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrDecided) {
			return nil, err
		}
		return nil, fmt.Errorf("decide refund request %s: %w", id, err)
	}
	return s.refund(ctx, id)
}
