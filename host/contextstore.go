package host

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/agentapp/agentapp/budget"
	"github.com/agentapp/agentapp/model"
)

// maxViewMessages caps the unfolded messages read for one request. Folding
// keeps the unfolded part far smaller than this; the cap only bounds a
// session written by an older version, which never folded.
const maxViewMessages = 4000

// view is the model's view of a stored session: the summary of what was
// folded and the messages after it, with their sequence numbers and token
// estimates (Estimator.Message of each; nil until counted).
type view struct {
	summary   string
	foldedSeq int64
	msgs      []model.Message
	seqs      []int64
	tokens    []int
}

// view reads the model's view of a session: its summary and the newest
// unfolded messages (at most s.viewLimit, maxViewMessages), oldest first,
// starting at a user message, each with its estimate by est. A session
// seen before reads only what was stored since (viewCache); the result is
// the same.
func (s *sessions) view(ctx context.Context, id string, est *budget.Estimator) (view, error) {
	var created, summary string
	var foldedSeq, folds int64
	err := s.prepared(nil).QueryRowContext(ctx, `SELECT s.created_at, COALESCE(c.summary, ''), COALESCE(c.folded_seq, 0), COALESCE(c.folds, 0)
		FROM chat_sessions s LEFT JOIN chat_context c ON c.session_id = s.id WHERE s.id = ?`, id).Scan(&created, &summary, &foldedSeq, &folds)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return view{}, fmt.Errorf("read the summary of chat session %s: %w", id, err)
	}
	if s.views != nil {
		if e := s.views.get(id); e != nil && e.est == est && e.created == created && e.folds == folds && e.v.foldedSeq == foldedSeq &&
			e.v.summary == summary && e.lastSeq > foldedSeq {
			rows, err := s.readRows(ctx, id, e.lastSeq, s.viewLimit+1)
			if err != nil {
				return view{}, err
			}
			// The row last read must still be there as it was; otherwise
			// the session was rewritten and only a full read is right.
			if len(rows) > 0 && rows[0] == e.last && len(rows) <= s.viewLimit {
				s.views.since.Add(1)
				if len(rows) == 1 {
					return e.fresh(), nil
				}
				n, err := s.views.extend(id, e, rows[1:], est, s.viewLimit)
				if err != nil {
					return view{}, err
				}
				s.views.put(id, n)
				return n.fresh(), nil
			}
		}
	}
	e, err := s.readView(ctx, id, summary, foldedSeq, est)
	if err != nil {
		return view{}, err
	}
	e.folds, e.created = folds, created
	if s.views != nil {
		s.views.whole.Add(1)
		if e.lastSeq > foldedSeq {
			s.views.put(id, e)
		} else {
			s.views.forget(id)
		}
	}
	return e.fresh(), nil
}

// readView reads a session's whole view from the database.
func (s *sessions) readView(ctx context.Context, id, summary string, foldedSeq int64, est *budget.Estimator) (*cachedView, error) {
	e := &cachedView{v: view{summary: summary, foldedSeq: foldedSeq}, lastSeq: foldedSeq, est: est}
	rows, err := s.prepared(nil).QueryContext(ctx, `SELECT seq, role, content, tool_calls, tool_call_id, name
		FROM chat_messages WHERE session_id = ? AND seq > ? ORDER BY seq DESC LIMIT ?`, id, foldedSeq, s.viewLimit)
	if err != nil {
		return nil, fmt.Errorf("read chat session %s: %w", id, err)
	}
	defer rows.Close()
	v := &e.v
	for rows.Next() {
		var r storedRow
		if err := rows.Scan(&r.seq, &r.role, &r.content, &r.calls, &r.callID, &r.name); err != nil {
			return nil, fmt.Errorf("read chat session %s: %w", id, err)
		}
		m, err := r.message(id)
		if err != nil {
			return nil, err
		}
		if len(v.msgs) == 0 {
			e.lastSeq, e.last = r.seq, r
		}
		v.msgs = append(v.msgs, m)
		v.seqs = append(v.seqs, r.seq)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read chat session %s: %w", id, err)
	}
	slices.Reverse(v.msgs)
	slices.Reverse(v.seqs)
	for len(v.msgs) > 0 && v.msgs[0].Role != model.RoleUser {
		v.msgs, v.seqs = v.msgs[1:], v.seqs[1:]
	}
	v.tokens = est.MessageTokens(v.msgs)
	return e, nil
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
	if err := addUsage(ctx, s.prepared(nil), id, u); err != nil {
		return fmt.Errorf("save the token usage of chat session %s: %w", id, err)
	}
	return nil
}

// addUsageQuery adds a turn's usage to a session's totals.
const addUsageQuery = `INSERT INTO chat_context (session_id, input_tokens, output_tokens, calls, estimated_calls)
		SELECT ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM chat_sessions WHERE id = ?)
		ON CONFLICT(session_id) DO UPDATE SET input_tokens = chat_context.input_tokens + excluded.input_tokens,
			output_tokens = chat_context.output_tokens + excluded.output_tokens,
			calls = chat_context.calls + excluded.calls,
			estimated_calls = chat_context.estimated_calls + excluded.estimated_calls`

// execer is a database or a transaction.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// addUsage is sessions.addUsage on db, which may be a transaction.
func addUsage(ctx context.Context, db execer, id string, u Usage) error {
	est := 0
	for _, c := range u.Calls {
		if c.Estimated {
			est++
		}
	}
	_, err := db.ExecContext(ctx, addUsageQuery,
		id, u.InputTokens, u.OutputTokens, len(u.Calls), est, id)
	return err
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

// summary returns the summary of a session's folded turns ("" when none
// were folded): what the model sees in place of the older messages, which
// the transcript keeps.
func (s *SessionStore) summary(ctx context.Context, id string) (string, error) {
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
