package support

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/store"
)

// TicketStatusOpen is the status of a newly created ticket.
const TicketStatusOpen = "open"

// Ticket is createTicket's result.
type Ticket struct {
	TicketID    string `json:"ticketId"`
	Subject     string `json:"subject"`
	Description string `json:"description"`
	Status      string `json:"status"`
}

func (s *Service) newCreateTicketTool() *agent.Tool {
	return &agent.Tool{
		Name:  "createTicket",
		Title: "Create after-sales ticket",
		Description: "Open an after-sales ticket for a problem staff must follow up: a complaint, refund, return, exchange or repair request. " +
			"Do not use it for questions you can answer yourself, nor when the customer asks for a person (use escalateToHuman). " +
			"subject: a one-line summary, at most 200 characters. " +
			"description: what happened and what the customer wants, including any order number, at most 4000 characters. " +
			"Returns {ticketId, subject, description, status}; give the customer the ticketId (TK-YYYYMMDD-NNNN). " +
			"Repeating the same subject and description in the same conversation within 10 minutes returns the ticket already opened, so a retry never creates a duplicate.",
		InputSchema:  createTicketInputSchema,
		OutputSchema: createTicketOutputSchema,
		// It reads or adds records of its own database: it deletes and
		// overwrites nothing and reaches nothing outside the domain.
		Destructive: new(false),
		OpenWorld:   new(false),
		Validate:    true,
		Execute:     s.createTicket,
	}
}

// createTicket is createTicket's Execute.
func (s *Service) createTicket(ctx context.Context, raw json.RawMessage) (any, error) {
	const tool = "createTicket"
	a, err := decodeArgs(tool, raw, "subject", "description")
	if err != nil {
		return nil, err
	}
	subject, err := a.text(textRule{name: "subject", maxChars: maxSubjectChars})
	if err != nil {
		return nil, err
	}
	desc, err := a.text(textRule{name: "description", maxChars: maxDescriptionChars})
	if err != nil {
		return nil, err
	}
	session := agent.SessionFrom(ctx)
	// The key has the caller too (the bearer token over MCP): two callers
	// who name their conversations alike must not share a ticket.
	key := idempotencyKey(session, tool, CallerFrom(ctx), subject, desc)
	now := s.now().UTC()
	nowMS := now.UnixMilli()
	cutoff := now.Add(-IdempotencyWindow).UnixMilli()

	var out Ticket
	err = s.write(ctx, func(tx *sql.Tx) error {
		// The whole check-then-create runs under the database's write lock
		// (the store begins write transactions IMMEDIATE), so no other
		// goroutine or process can slip a duplicate or a number in between.
		// PostgreSQL has no such lock: there a transaction-scoped advisory
		// lock on the key serialises the calls with this key, on every
		// replica, and leaves other keys' calls to run side by side.
		if s.st.Dialect() == store.Postgres {
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended(?, 0))`, key); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM support_idempotency WHERE created_ms <= ?`, cutoff); err != nil {
			return err
		}
		err := tx.QueryRowContext(ctx, `SELECT t.id, t.subject, t.description, t.status
			FROM support_idempotency i JOIN support_tickets t ON t.id = i.ticket_id
			WHERE i.key = ? AND i.created_ms > ?`, key, cutoff).
			Scan(&out.TicketID, &out.Subject, &out.Description, &out.Status)
		if err == nil {
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		seq, err := nextSeq(ctx, tx)
		if err != nil {
			return err
		}
		out = Ticket{TicketID: ticketID(now, seq), Subject: subject, Description: desc, Status: TicketStatusOpen}
		if _, err := tx.ExecContext(ctx, `INSERT INTO support_tickets
			(id, seq, subject, description, status, session, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			out.TicketID, seq, subject, desc, out.Status, session, now.Format(time.RFC3339Nano)); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO support_idempotency (key, ticket_id, created_ms) VALUES (?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET ticket_id = excluded.ticket_id, created_ms = excluded.created_ms`,
			key, out.TicketID, nowMS)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("createTicket: cannot save the ticket: %w", err)
	}
	return out, nil
}

// nextSeq takes the next number of the ticket counter. It must run inside a
// write transaction: the increment and the read are one statement, the number
// is consumed only if the transaction commits, and a committed number is
// never handed out again, whether by this process, another one or after a
// restart.
func nextSeq(ctx context.Context, tx *sql.Tx) (int64, error) {
	var seq int64
	err := tx.QueryRowContext(ctx, `UPDATE support_counters SET value = value + 1 WHERE name = 'ticket' RETURNING value`).Scan(&seq)
	if err != nil {
		return 0, fmt.Errorf("allocate a ticket number: %w", err)
	}
	return seq, nil
}

// ticketID formats a ticket id: TK-, the UTC date, a dash and the sequence
// number with at least four digits.
func ticketID(now time.Time, seq int64) string {
	return fmt.Sprintf("TK-%s-%04d", now.UTC().Format("20060102"), seq)
}

// idempotencyKey hashes a session, a tool and the call's canonical
// arguments (trimmed values in schema order, JSON-encoded so no separator
// can be forged by the values themselves).
func idempotencyKey(session, tool string, values ...string) string {
	canon, _ := json.Marshal(append([]string{session, tool}, values...)) // a []string always encodes
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:])
}
