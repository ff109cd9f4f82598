package support

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentapp/agentapp/agent"
)

// Handoff is escalateToHuman's result: the pack a human agent receives.
type Handoff struct {
	TicketID   string `json:"ticketId"`
	Reason     string `json:"reason"`
	Transcript string `json:"transcript"`
	// CreatedAt is RFC 3339 in UTC.
	CreatedAt string `json:"createdAt"`
}

func (s *Service) newEscalateTool() *agent.Tool {
	return &agent.Tool{
		Name:  "escalateToHuman",
		Title: "Hand over to a human agent",
		Description: "Hand the conversation over to a human agent. Use it when the customer asks for a person (转人工, 人工客服, \"talk to a human\"), " +
			"or when they are upset or their request is beyond what your other tools can do. " +
			"reason: why a human is needed, at most 500 characters. " +
			"transcript: the conversation so far, one message per line prefixed with the speaker (用户: / 助手:), at most 20000 characters; keep the most recent messages if it is longer. " +
			"Returns {ticketId, reason, transcript, createdAt}; tell the customer a human will take over and give them the ticketId.",
		InputSchema:  escalateInputSchema,
		OutputSchema: escalateOutputSchema,
		// It reads or adds records of its own database: it deletes and
		// overwrites nothing and reaches nothing outside the domain.
		Destructive: new(false),
		OpenWorld:   new(false),
		Validate:    true,
		Execute:     s.escalate,
	}
}

// escalate is escalateToHuman's Execute. The hand-off draws its id from the
// ticket counter, so it never collides with a ticket's.
func (s *Service) escalate(ctx context.Context, raw json.RawMessage) (any, error) {
	const tool = "escalateToHuman"
	a, err := decodeArgs(tool, raw, "reason", "transcript")
	if err != nil {
		return nil, err
	}
	reason, err := a.text(textRule{name: "reason", maxChars: maxReasonChars})
	if err != nil {
		return nil, err
	}
	transcript, err := a.text(textRule{name: "transcript", maxChars: maxTranscriptChars})
	if err != nil {
		return nil, err
	}
	now := s.now().UTC()
	out := Handoff{Reason: reason, Transcript: transcript, CreatedAt: now.Format(time.RFC3339)}
	err = s.write(ctx, func(tx *sql.Tx) error {
		seq, err := nextSeq(ctx, tx)
		if err != nil {
			return err
		}
		out.TicketID = ticketID(now, seq)
		_, err = tx.ExecContext(ctx, `INSERT INTO support_handoffs
			(ticket_id, seq, reason, transcript, session, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			out.TicketID, seq, reason, transcript, agent.SessionFrom(ctx), out.CreatedAt)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("escalateToHuman: cannot save the hand-off: %w", err)
	}
	return out, nil
}
