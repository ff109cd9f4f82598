package host

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/internal/fence"
	"github.com/agentapp/agentapp/model"
)

// ConvState says who answers a conversation. It is kept with the session
// in the database, so every front end and every replica sees the same.
type ConvState string

// The states of a conversation: assistant → waiting → human → assistant.
const (
	// StateAssistant: the model answers (every session starts here).
	StateAssistant ConvState = "assistant"
	// StateWaiting: a hand-off to a person was asked (Options.Handoff);
	// the model still answers until an operator takes over.
	StateWaiting ConvState = "waiting"
	// StateHuman: an operator holds the conversation. A customer message
	// is stored and delivered to the operator; the model is not called.
	StateHuman ConvState = "human"
)

// ParseConvState returns the state s names, or an error naming the three.
func ParseConvState(s string) (ConvState, error) {
	switch c := ConvState(s); c {
	case StateAssistant, StateWaiting, StateHuman:
		return c, nil
	}
	return "", fmt.Errorf("unknown conversation state %q: want assistant, waiting or human", s)
}

// SessionState is where a conversation stands.
type SessionState struct {
	ID    string    `json:"id"`
	State ConvState `json:"state"`
	// Operator is the display name of the operator holding it (human).
	Operator string `json:"operator,omitempty"`
	// Since is when the state last changed (the zero time for a session
	// that never changed state).
	Since time.Time `json:"since"`

	// note and noteBy are the hand-back note the next turn reads.
	note, noteBy string
}

// StateConflictError is a state change refused because the session is
// not in a state it may change from: another operator holds it, or it is
// not waiting.
type StateConflictError struct {
	// Want are the states the change needed; Now is the session's.
	Want []ConvState
	Now  SessionState
}

func (e *StateConflictError) Error() string {
	want := make([]string, len(e.Want))
	for i, w := range e.Want {
		want[i] = string(w)
	}
	now := string(e.Now.State)
	if e.Now.Operator != "" {
		now += " (held by " + e.Now.Operator + ")"
	}
	return fmt.Sprintf("conversation %s is %s, and this needs it %s", e.Now.ID, now, strings.Join(want, " or "))
}

// The kinds of conversation events (SessionEvent.Kind).
const (
	// EventKindState: the state changed (State, Operator).
	EventKindState = "state"
	// EventKindCustomerMessage: a customer message while human (Content).
	EventKindCustomerMessage = "customer_message"
	// EventKindOperatorJoined, EventKindOperatorMessage and
	// EventKindOperatorLeft are the operator's side (Operator, Content;
	// Note on leaving).
	EventKindOperatorJoined  = "operator_joined"
	EventKindOperatorMessage = "operator_message"
	EventKindOperatorLeft    = "operator_left"
)

// SessionEvent is one thing that happened to a conversation outside the
// model's turns, kept in the database so that a stream on any replica, or
// one that comes back later, reads it (Events).
type SessionEvent struct {
	// Seq orders every session's events; a stream resumes after it.
	Seq     int64     `json:"seq"`
	Session string    `json:"session"`
	Kind    string    `json:"kind"`
	At      time.Time `json:"at"`
	State   ConvState `json:"state,omitempty"`
	// Operator is the operator's display name.
	Operator string `json:"operator,omitempty"`
	Content  string `json:"content,omitempty"`
	Note     string `json:"note,omitempty"`
}

// eventBody is what chat_events.data holds of an event.
type eventBody struct {
	State    ConvState `json:"state,omitempty"`
	Operator string    `json:"operator,omitempty"`
	Content  string    `json:"content,omitempty"`
	Note     string    `json:"note,omitempty"`
}

// EventsChannel is the PostgreSQL notification channel a conversation
// event is announced on (store.Listen), so streams on other replicas read
// it at once.
const EventsChannel = "agentapp_chat_events"

// eventTTL is how long conversation events are kept: a stream that comes
// back later than that reads the transcript instead.
const eventTTL = 24 * time.Hour

// addEvent stores ev in tx (and announces it on PostgreSQL when tx
// commits).
func (s *sessions) addEvent(ctx context.Context, tx *sql.Tx, id string, kind string, b eventBody, now time.Time) error {
	data, err := json.Marshal(b)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO chat_events (session_id, kind, data, created_ms) VALUES (?, ?, ?, ?)`,
		id, kind, string(data), now.UnixMilli()); err != nil {
		return err
	}
	return s.st.Notify(ctx, tx, EventsChannel)
}

// pruneEvents removes events older than eventTTL, at most once a minute.
func (s *sessions) pruneEvents(ctx context.Context, now time.Time) {
	s.eventsPruneMu.Lock()
	if now.Sub(s.eventsPruned) < pruneEvery {
		s.eventsPruneMu.Unlock()
		return
	}
	s.eventsPruned = now
	s.eventsPruneMu.Unlock()
	_, _ = s.st.DB.ExecContext(ctx, `DELETE FROM chat_events WHERE created_ms < ?`, now.Add(-eventTTL).UnixMilli())
}

// State returns where session id stands; ErrNoSession (wrapped) when it
// is not stored.
func (s *SessionStore) State(ctx context.Context, id string) (SessionState, error) {
	return s.s.state(ctx, s.s.st.DB, id)
}

type queryer interface {
	QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row
}

func (s *sessions) state(ctx context.Context, q queryer, id string) (SessionState, error) {
	var st SessionState
	var ms int64
	err := q.QueryRowContext(ctx, `SELECT state, operator, state_ms, handback_note, handback_by FROM chat_sessions WHERE id = ?`, id).Scan(&st.State, &st.Operator, &ms, &st.note, &st.noteBy)
	if errors.Is(err, sql.ErrNoRows) {
		return SessionState{}, fmt.Errorf("%w: %s", ErrNoSession, id)
	}
	if err != nil {
		return SessionState{}, fmt.Errorf("read the state of chat session %s: %w", id, err)
	}
	st.ID = id
	if ms > 0 {
		st.Since = time.UnixMilli(ms).UTC()
	}
	return st, nil
}

// Transition moves session id to state to, held by operator (for
// StateHuman; "" otherwise), if it is in one of the states from; it is
// one conditional update, so two operators never both take one
// conversation. The change is recorded as an EventKindState event, with
// the events of extra after it (an operator joining or leaving), in the
// same transaction. A session in another state gets a
// *StateConflictError.
func (s *SessionStore) Transition(ctx context.Context, id string, from []ConvState, to ConvState, operator string, extra ...SessionEvent) (SessionState, error) {
	return s.transition(ctx, id, from, "", to, operator, nil, extra)
}

// HandBack returns a conversation operator holds to the assistant, which
// reads note (when not empty) with the customer's next message: Run
// fences it after that message, as context the operator left. It records
// the change and an operator_left event carrying the note.
func (s *SessionStore) HandBack(ctx context.Context, id, operator, note string) (SessionState, error) {
	return s.transition(ctx, id, []ConvState{StateHuman}, operator, StateAssistant, "", &handback{note: note, by: operator},
		[]SessionEvent{{Kind: EventKindOperatorLeft, Operator: operator, Note: note}})
}

type handback struct{ note, by string }

// OperatorMessageName is the Name of an operator's message in the
// transcript (an assistant message a person wrote), so that a front end
// tells it from the assistant's.
func OperatorMessageName(operator string) string { return operatorPrefix + operator }

// OperatorOf returns the operator who wrote m, if a person did.
func OperatorOf(m model.Message) (string, bool) {
	if m.Role != model.RoleAssistant {
		return "", false
	}
	return strings.CutPrefix(m.Name, operatorPrefix)
}

const operatorPrefix = "operator:"

// transition is Transition; holder, when set, must be the operator who
// holds the conversation, and hb, when set, is kept for the next turn.
func (s *SessionStore) transition(ctx context.Context, id string, from []ConvState, holder string, to ConvState, operator string, hb *handback, extra []SessionEvent) (SessionState, error) {
	if len(from) == 0 {
		return SessionState{}, errors.New("host: a state change needs the states it may change from")
	}
	if to != StateHuman {
		operator = ""
	}
	now := s.s.now()
	var out SessionState
	err := s.s.st.Tx(ctx, func(tx *sql.Tx) error {
		q := `UPDATE chat_sessions SET state = ?, operator = ?, state_ms = ?`
		args := []any{string(to), operator, now.UnixMilli()}
		if hb != nil {
			q += `, handback_note = ?, handback_by = ?`
			args = append(args, hb.note, hb.by)
		}
		q += ` WHERE id = ? AND state IN (?` + strings.Repeat(", ?", len(from)-1) + `)`
		args = append(args, id)
		for _, f := range from {
			args = append(args, string(f))
		}
		if holder != "" {
			q += ` AND operator = ?`
			args = append(args, holder)
		}
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 0 {
			cur, err := s.s.state(ctx, tx, id)
			if err != nil {
				return err
			}
			return &StateConflictError{Want: slices.Clone(from), Now: cur}
		}
		out = SessionState{ID: id, State: to, Operator: operator, Since: time.UnixMilli(now.UnixMilli()).UTC()}
		if err := s.s.addEvent(ctx, tx, id, EventKindState, eventBody{State: to, Operator: operator}, now); err != nil {
			return err
		}
		for _, ev := range extra {
			if err := s.s.addEvent(ctx, tx, id, ev.Kind, eventBody{Operator: ev.Operator, Content: ev.Content, Note: ev.Note}, now); err != nil {
				return err
			}
		}
		return nil
	})
	var conflict *StateConflictError
	if err != nil && !errors.As(err, &conflict) && !errors.Is(err, ErrNoSession) {
		err = fmt.Errorf("change the state of chat session %s: %w", id, err)
	}
	if err == nil {
		s.s.pruneEvents(ctx, now)
	}
	return out, err
}

// AddEvent records a conversation event of session id (an operator's
// message) together with the messages it adds to the transcript, in one
// transaction, when the session is in one of the states in (none: any).
func (s *SessionStore) AddEvent(ctx context.Context, id string, in []ConvState, ev SessionEvent, msgs []model.Message) error {
	now := s.s.now()
	err := s.s.st.Tx(ctx, func(tx *sql.Tx) error {
		cur, err := s.s.state(ctx, tx, id)
		if err != nil {
			return err
		}
		if len(in) > 0 && !slices.Contains(in, cur.State) ||
			ev.Kind == EventKindOperatorMessage && cur.Operator != ev.Operator {
			return &StateConflictError{Want: slices.Clone(in), Now: cur}
		}
		if len(msgs) > 0 {
			if err := s.s.insertMessages(ctx, s.s.prepared(tx), id, msgs, now, -1, ""); err != nil {
				return err
			}
		}
		return s.s.addEvent(ctx, tx, id, ev.Kind, eventBody{State: ev.State, Operator: ev.Operator, Content: ev.Content, Note: ev.Note}, now)
	})
	if err != nil {
		var conflict *StateConflictError
		if !errors.As(err, &conflict) && !errors.Is(err, ErrNoSession) {
			err = fmt.Errorf("add an event to chat session %s: %w", id, err)
		}
		return err
	}
	s.s.pruneEvents(ctx, now)
	return nil
}

// maxEventsRead caps one read of Events.
const maxEventsRead = 500

// Events returns the conversation events after seq, oldest first, at most
// limit (capped at 500): of session id, or of every session when id is "".
func (s *SessionStore) Events(ctx context.Context, id string, after int64, limit int) ([]SessionEvent, error) {
	if limit <= 0 || limit > maxEventsRead {
		limit = maxEventsRead
	}
	q := `SELECT seq, session_id, kind, data, created_ms FROM chat_events WHERE seq > ?`
	args := []any{after}
	if id != "" {
		q += ` AND session_id = ?`
		args = append(args, id)
	}
	q += ` ORDER BY seq LIMIT ?`
	args = append(args, limit)
	rows, err := s.s.st.DB.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read conversation events: %w", err)
	}
	defer rows.Close()
	var out []SessionEvent
	for rows.Next() {
		var ev SessionEvent
		var data string
		var ms int64
		if err := rows.Scan(&ev.Seq, &ev.Session, &ev.Kind, &data, &ms); err != nil {
			return nil, fmt.Errorf("read conversation events: %w", err)
		}
		var b eventBody
		if err := json.Unmarshal([]byte(data), &b); err != nil {
			return nil, fmt.Errorf("read conversation event %d: %w", ev.Seq, err)
		}
		ev.At = time.UnixMilli(ms).UTC()
		ev.State, ev.Operator, ev.Content, ev.Note = b.State, b.Operator, b.Content, b.Note
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read conversation events: %w", err)
	}
	return out, nil
}

// LastEventSeq returns the newest event's Seq (0 when there is none): a
// stream that wants only what comes next starts after it.
func (s *SessionStore) LastEventSeq(ctx context.Context) (int64, error) {
	var n int64
	if err := s.s.st.DB.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM chat_events`).Scan(&n); err != nil {
		return 0, fmt.Errorf("read conversation events: %w", err)
	}
	return n, nil
}

// maxStatesRead caps one page of ByState.
const maxStatesRead = 200

// ByState lists the sessions in state, oldest change first (the queue
// order), a page of at most limit (capped at 200) after the cursor
// (afterMs, afterID: the last row of the previous page; 0, "" to start).
func (s *SessionStore) ByState(ctx context.Context, state ConvState, afterMs int64, afterID string, limit int) ([]SessionState, error) {
	if limit <= 0 || limit > maxStatesRead {
		limit = maxStatesRead
	}
	rows, err := s.s.st.DB.QueryContext(ctx, `SELECT id, operator, state_ms FROM chat_sessions
		WHERE state = ? AND (state_ms > ? OR (state_ms = ? AND id > ?)) ORDER BY state_ms, id LIMIT ?`,
		string(state), afterMs, afterMs, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("list %s conversations: %w", state, err)
	}
	defer rows.Close()
	var out []SessionState
	for rows.Next() {
		st := SessionState{State: state}
		var ms int64
		if err := rows.Scan(&st.ID, &st.Operator, &ms); err != nil {
			return nil, fmt.Errorf("list %s conversations: %w", state, err)
		}
		if ms > 0 {
			st.Since = time.UnixMilli(ms).UTC()
		}
		out = append(out, st)
	}
	return out, rows.Err()
}

// eventsPrune is embedded in sessions: when chat_events was last pruned.
type eventsPrune struct {
	eventsPruneMu sync.Mutex
	eventsPruned  time.Time
}

// queueForOperator stores the user's messages of a turn of session id for
// the operator holding it, when one does: the messages go to the
// transcript and a customer_message event to the operator's stream, in one
// transaction, and the turn ends there with EventQueued and EventDone. ok
// is false when the session is not held (the model answers).
func (h *Host) queueForOperator(ctx context.Context, id string, st SessionState, added []model.Message, rt *running) (*TurnResult, bool, error) {
	if st.State != StateHuman {
		return nil, false, nil
	}
	var typed []string
	for _, m := range added {
		if m.Role == model.RoleUser {
			typed = append(typed, TypedText(m.Content))
		}
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	err := h.sessions.AddEvent(sctx, id, []ConvState{StateHuman},
		SessionEvent{Kind: EventKindCustomerMessage, Operator: st.Operator, Content: strings.Join(typed, "\n\n")}, added)
	var conflict *StateConflictError
	if errors.As(err, &conflict) {
		return nil, false, nil // handed back just now: the model answers (without the note, read before)
	}
	if err != nil {
		return nil, false, &StoreError{Err: err}
	}
	res := &TurnResult{Added: added, Queued: &st}
	rt.emit(Event{Kind: EventQueued, Queued: &st})
	rt.emit(Event{Kind: EventDone, Done: res})
	return res, true, nil
}

// handsOff reports whether one of a turn's tool calls that succeeded hands
// the conversation to a person (Options.Handoff).
func (h *Host) handsOff(steps []agent.StepEvent, set *agent.ToolSet) bool {
	if h.cfg.Handoff == nil {
		return false
	}
	for _, s := range steps {
		if s.Err == nil && h.cfg.Handoff(OriginOf(set, s.ToolName), s.ToolName) {
			return true
		}
	}
	return false
}

// toWaiting moves session id from assistant to waiting in tx, recording
// the change; a session already waiting or held is left as it is.
func (s *sessions) toWaiting(ctx context.Context, tx *sql.Tx, id string) error {
	now := s.now()
	res, err := tx.ExecContext(ctx, `UPDATE chat_sessions SET state = ?, operator = '', state_ms = ? WHERE id = ? AND state = ?`,
		string(StateWaiting), now.UnixMilli(), id, string(StateAssistant))
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err
	}
	return s.addEvent(ctx, tx, id, EventKindState, eventBody{State: StateWaiting}, now)
}

// withNote fences the operator's hand-back note after the last user
// message of added: context the operator left for the assistant, kept
// with that message (so later turns read it too), and hidden from the
// transcript a front end shows (TypedText).
func withNote(added []model.Message, st SessionState) []model.Message {
	if st.note == "" {
		return added
	}
	out := slices.Clone(added)
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Role == model.RoleUser {
			// The label names no one: the note's author is in the
			// operator_left event and handback_by.
			label := "Context from the support staff who talked with the customer before this message and handed the conversation back to you"
			out[i].Content += "\n\n" + label + ". " + attachmentNotice + "\n" + fence.Text(st.note)
			break
		}
	}
	return out
}

// clearNote forgets the hand-back note the turn read, in its transaction;
// a newer note stays for the next turn.
func (s *sessions) clearNote(ctx context.Context, tx *sql.Tx, id, note string) error {
	_, err := tx.ExecContext(ctx, `UPDATE chat_sessions SET handback_note = '', handback_by = '' WHERE id = ? AND handback_note = ?`, id, note)
	return err
}
