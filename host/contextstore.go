package host

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/agentapp/agentapp/model"
)

// maxViewMessages caps the unfolded messages read for one request. Folding
// keeps the unfolded part far smaller than this; the cap only bounds a
// session written by an older version, which never folded.
const maxViewMessages = 4000

// view is the model's view of a stored session: the summary of what was
// folded and the messages after it, with their sequence numbers.
type view struct {
	summary   string
	foldedSeq int64
	msgs      []model.Message
	seqs      []int64
}

// view reads the model's view of a session: its summary and the newest
// unfolded messages (at most maxViewMessages), oldest first, starting at a
// user message.
func (s *sessions) view(ctx context.Context, id string) (view, error) {
	var v view
	err := s.st.DB.QueryRowContext(ctx, `SELECT summary, folded_seq FROM chat_context WHERE session_id = ?`, id).Scan(&v.summary, &v.foldedSeq)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return v, fmt.Errorf("read the summary of chat session %s: %w", id, err)
	}
	rows, err := s.st.DB.QueryContext(ctx, `SELECT seq, role, content, tool_calls, tool_call_id, name
		FROM chat_messages WHERE session_id = ? AND seq > ? ORDER BY seq DESC LIMIT ?`, id, v.foldedSeq, maxViewMessages)
	if err != nil {
		return v, fmt.Errorf("read chat session %s: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var m model.Message
		var seq int64
		var role, calls string
		if err := rows.Scan(&seq, &role, &m.Content, &calls, &m.ToolCallID, &m.Name); err != nil {
			return v, fmt.Errorf("read chat session %s: %w", id, err)
		}
		m.Role = model.Role(role)
		if calls != "" {
			if err := json.Unmarshal([]byte(calls), &m.ToolCalls); err != nil {
				return v, fmt.Errorf("read chat session %s: a stored tool call is corrupt: %w", id, err)
			}
		}
		v.msgs = append(v.msgs, m)
		v.seqs = append(v.seqs, seq)
	}
	if err := rows.Err(); err != nil {
		return v, fmt.Errorf("read chat session %s: %w", id, err)
	}
	slices.Reverse(v.msgs)
	slices.Reverse(v.seqs)
	for len(v.msgs) > 0 && v.msgs[0].Role != model.RoleUser {
		v.msgs, v.seqs = v.msgs[1:], v.seqs[1:]
	}
	return v, nil
}

// saveFold records that the messages up to foldedSeq are now in summary.
// A session that is not stored (yet) keeps nothing.
func (s *sessions) saveFold(ctx context.Context, id, summary string, foldedSeq int64) error {
	_, err := s.st.DB.ExecContext(ctx, `INSERT INTO chat_context (session_id, summary, folded_seq, folds)
		SELECT ?, ?, ?, 1 WHERE EXISTS (SELECT 1 FROM chat_sessions WHERE id = ?)
		ON CONFLICT(session_id) DO UPDATE SET summary = excluded.summary, folded_seq = excluded.folded_seq,
			folds = chat_context.folds + 1`, id, summary, foldedSeq, id)
	if err != nil {
		return fmt.Errorf("save the summary of chat session %s: %w", id, err)
	}
	return nil
}

// SessionUsage is what a session's model calls cost, all turns together.
type SessionUsage struct {
	InputTokens  int64 `json:"inputTokens"`
	OutputTokens int64 `json:"outputTokens"`
	// Calls counts the model calls; EstimatedCalls those whose counts the
	// provider did not report, so the host estimated them.
	Calls          int64 `json:"calls"`
	EstimatedCalls int64 `json:"estimatedCalls"`
	// Folds counts the times older turns were folded into the summary,
	// and SummaryTokens is the summary's estimated size now.
	Folds         int64 `json:"folds"`
	SummaryTokens int   `json:"summaryTokens"`
}

// addUsage adds one turn's usage to a session's totals; a session that is
// not stored keeps nothing.
func (s *sessions) addUsage(ctx context.Context, id string, u Usage) error {
	est := 0
	for _, c := range u.Calls {
		if c.Estimated {
			est++
		}
	}
	// Committed with the other turns ending at once (store.GroupTx).
	err := s.st.GroupTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO chat_context (session_id, input_tokens, output_tokens, calls, estimated_calls)
		SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM chat_sessions WHERE id = ?)
		ON CONFLICT(session_id) DO UPDATE SET input_tokens = chat_context.input_tokens + excluded.input_tokens,
			output_tokens = chat_context.output_tokens + excluded.output_tokens,
			calls = chat_context.calls + excluded.calls,
			estimated_calls = chat_context.estimated_calls + excluded.estimated_calls`,
			id, u.InputTokens, u.OutputTokens, len(u.Calls), est, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("save the token usage of chat session %s: %w", id, err)
	}
	return nil
}

// usage reads a session's totals and its summary.
func (s *sessions) usage(ctx context.Context, id string) (SessionUsage, string, error) {
	var u SessionUsage
	var summary string
	err := s.st.DB.QueryRowContext(ctx, `SELECT input_tokens, output_tokens, calls, estimated_calls, folds, summary
		FROM chat_context WHERE session_id = ?`, id).Scan(&u.InputTokens, &u.OutputTokens, &u.Calls, &u.EstimatedCalls, &u.Folds, &summary)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return u, "", fmt.Errorf("read the token usage of chat session %s: %w", id, err)
	}
	return u, summary, nil
}

// Summary returns the summary of a session's folded turns ("" when none
// were folded): what the model sees in place of the older messages, which
// the transcript keeps.
func (s *SessionStore) Summary(ctx context.Context, id string) (string, error) {
	_, summary, err := s.s.usage(ctx, id)
	return summary, err
}

// FoldState is where a stored session's model view begins: the messages
// up to a point are in the summary, the transcript keeps them all.
type FoldState struct {
	// Folds counts the folds so far; 0 means nothing was folded.
	Folds int64
	// Messages counts the folded messages and After those stored since.
	Messages, After int
	// Tokens is the folded messages' estimated size; 0 when there are
	// more than can be read for it (maxViewMessages).
	Tokens int
	// Summary is what the model sees in place of the folded messages,
	// and SummaryTokens its estimated size.
	Summary       string
	SummaryTokens int
}

// FoldState reads where a session's model view begins, for a front end
// that marks the place in the transcript.
func (h *Host) FoldState(ctx context.Context, id string) (FoldState, error) {
	var f FoldState
	var seq int64
	err := h.sessions.s.st.DB.QueryRowContext(ctx, `SELECT folds, folded_seq, summary FROM chat_context WHERE session_id = ?`, id).Scan(&f.Folds, &seq, &f.Summary)
	if errors.Is(err, sql.ErrNoRows) || err == nil && f.Folds == 0 {
		return FoldState{}, nil
	}
	if err != nil {
		return f, fmt.Errorf("read the summary of chat session %s: %w", id, err)
	}
	err = h.sessions.s.st.DB.QueryRowContext(ctx, `SELECT COUNT(CASE WHEN seq <= ? THEN 1 END), COUNT(CASE WHEN seq > ? THEN 1 END)
		FROM chat_messages WHERE session_id = ?`, seq, seq, id).Scan(&f.Messages, &f.After)
	if err != nil {
		return f, fmt.Errorf("count the folded messages of chat session %s: %w", id, err)
	}
	f.SummaryTokens = h.est.Text(f.Summary)
	if f.Messages > maxViewMessages {
		return f, nil
	}
	rows, err := h.sessions.s.st.DB.QueryContext(ctx, `SELECT role, content, tool_calls, tool_call_id, name
		FROM chat_messages WHERE session_id = ? AND seq <= ? ORDER BY seq`, id, seq)
	if err != nil {
		return f, fmt.Errorf("read the folded messages of chat session %s: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var m model.Message
		var role, calls string
		if err := rows.Scan(&role, &m.Content, &calls, &m.ToolCallID, &m.Name); err != nil {
			return f, fmt.Errorf("read the folded messages of chat session %s: %w", id, err)
		}
		m.Role = model.Role(role)
		if calls != "" && json.Unmarshal([]byte(calls), &m.ToolCalls) != nil {
			m.Content += calls // counted as text: the size is what matters here
		}
		f.Tokens += h.est.Message(m)
	}
	return f, rows.Err()
}
