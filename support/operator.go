package support

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// TicketStatusResolved is the status of a ticket an operator marked resolved.
const TicketStatusResolved = "resolved"

// MaxQueueList bounds one listing of the operator's queue, whatever the
// caller asks for: the queue is read by a person, page by page.
const MaxQueueList = 500

// ErrNotFound is returned when no hand-off or ticket has the id given.
var ErrNotFound = errors.New("no such record")

// QueuedHandoff is a hand-off as the operator sees it: the pack
// escalateToHuman saved, with its session and whether it was dealt with.
type QueuedHandoff struct {
	TicketID   string `json:"ticketId"`
	Reason     string `json:"reason"`
	Transcript string `json:"transcript"`
	Session    string `json:"session"`
	CreatedAt  string `json:"createdAt"`
	// ResolvedAt is when an operator marked it resolved (RFC 3339, UTC);
	// empty while it is open.
	ResolvedAt string `json:"resolvedAt,omitempty"`
}

// QueuedTicket is an after-sales ticket as the operator sees it.
type QueuedTicket struct {
	TicketID    string `json:"ticketId"`
	Subject     string `json:"subject"`
	Description string `json:"description"`
	Status      string `json:"status"`
	Session     string `json:"session"`
	CreatedAt   string `json:"createdAt"`
	ResolvedAt  string `json:"resolvedAt,omitempty"`
}

func clampLimit(limit int) int {
	if limit <= 0 || limit > MaxQueueList {
		return MaxQueueList
	}
	return limit
}

// Handoffs returns the newest hand-offs first, at most limit (0 or more
// than MaxQueueList means MaxQueueList).
func (s *Service) Handoffs(ctx context.Context, limit int) ([]QueuedHandoff, error) {
	rows, err := s.st.DB.QueryContext(ctx, `SELECT ticket_id, reason, transcript, session, created_at, resolved_at
		FROM support_handoffs ORDER BY seq DESC LIMIT ?`, clampLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("list hand-offs: %w", err)
	}
	defer rows.Close()
	var out []QueuedHandoff
	for rows.Next() {
		var h QueuedHandoff
		if err := rows.Scan(&h.TicketID, &h.Reason, &h.Transcript, &h.Session, &h.CreatedAt, &h.ResolvedAt); err != nil {
			return nil, fmt.Errorf("list hand-offs: %w", err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list hand-offs: %w", err)
	}
	return out, nil
}

// Tickets returns the newest tickets first, at most limit (0 or more than
// MaxQueueList means MaxQueueList).
func (s *Service) Tickets(ctx context.Context, limit int) ([]QueuedTicket, error) {
	rows, err := s.st.DB.QueryContext(ctx, `SELECT id, subject, description, status, session, created_at, resolved_at
		FROM support_tickets ORDER BY seq DESC LIMIT ?`, clampLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("list tickets: %w", err)
	}
	defer rows.Close()
	var out []QueuedTicket
	for rows.Next() {
		var t QueuedTicket
		if err := rows.Scan(&t.TicketID, &t.Subject, &t.Description, &t.Status, &t.Session, &t.CreatedAt, &t.ResolvedAt); err != nil {
			return nil, fmt.Errorf("list tickets: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tickets: %w", err)
	}
	return out, nil
}

// ResolveHandoff marks a hand-off resolved. Resolving one that is resolved
// already keeps its first time; an unknown id is ErrNotFound.
func (s *Service) ResolveHandoff(ctx context.Context, ticketID string) error {
	return s.resolve(ctx, "hand-off", `UPDATE support_handoffs SET resolved_at = ? WHERE ticket_id = ? AND resolved_at = ''`,
		`SELECT COUNT(*) FROM support_handoffs WHERE ticket_id = ?`, ticketID)
}

// ResolveTicket marks a ticket resolved (status TicketStatusResolved).
// Resolving one that is resolved already keeps its first time; an unknown
// id is ErrNotFound.
func (s *Service) ResolveTicket(ctx context.Context, ticketID string) error {
	return s.resolve(ctx, "ticket", `UPDATE support_tickets SET resolved_at = ?, status = '`+TicketStatusResolved+`' WHERE id = ? AND resolved_at = ''`,
		`SELECT COUNT(*) FROM support_tickets WHERE id = ?`, ticketID)
}

func (s *Service) resolve(ctx context.Context, what, update, exists, id string) error {
	stamp := s.now().UTC().Format(time.RFC3339)
	err := s.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, update, stamp, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n > 0 {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, exists, id).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%w: no %s has the id %q", ErrNotFound, what, id)
		}
		return nil
	})
	if err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("mark %s %s resolved: %w", what, id, err)
	}
	return err
}
