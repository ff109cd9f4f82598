package web

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/internal/trust"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/store"
)

// The standing streams of a conversation: the customer's
// (GET /api/sessions/{id}/events) and the operators'
// (GET /operator/events), and the operator's side of a conversation
// (takeover, messages, hand-back). Events are rows of the host's
// chat_events table, so a stream on any replica reads what another wrote;
// the streams of a process wake on PostgreSQL's notifications, or on a
// short poll of the newest event on SQLite (one process).

const (
	// maxSessionStreams bounds the customer's standing streams per
	// session (tabs of the page).
	maxSessionStreams = 4
	// maxStandingStreams bounds the standing streams of the server.
	maxStandingStreams = 2048
	// keepAliveEvery spaces the comments that keep an idle stream open
	// through proxies.
	keepAliveEvery = 15 * time.Second
	// eventPoll is how often the newest event is read on SQLite, where no
	// notification crosses processes.
	eventPoll = 200 * time.Millisecond
	// maxOperatorMessage bounds an operator's message and note, in
	// characters.
	maxOperatorMessage = 4000
	// maxOperatorName bounds an operator's display name.
	maxOperatorName = 64
	// operatorBody bounds the operator API's bodies.
	operatorBody = 64 << 10
)

// Operator is a named operator: Token is their credential and Name what
// the customer sees.
type Operator struct {
	Name, Token string
}

// ParseOperator reads NAME:TOKEN (--operator).
func ParseOperator(s string) (Operator, error) {
	name, token, ok := strings.Cut(s, ":")
	name, token = strings.TrimSpace(name), strings.TrimSpace(token)
	if !ok || name == "" || token == "" {
		// The value is not echoed: it may hold a token.
		return Operator{}, errors.New("want NAME:TOKEN, for example ana:s3cret, with neither part empty")
	}
	if err := checkOperatorName(name); err != nil {
		return Operator{}, err
	}
	return Operator{Name: name, Token: token}, nil
}

func checkOperatorName(name string) error {
	if utf8.RuneCountInString(name) > maxOperatorName || strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return fmt.Errorf("operator name %q: at most %d characters, no control characters", name, maxOperatorName)
	}
	return nil
}

// eventFeed wakes this process's standing streams when a conversation
// event may have been written.
type eventFeed struct {
	mu sync.Mutex
	ch chan struct{}
	// last is the newest event seen by the SQLite poll.
	last int64

	// streams counts the standing streams, per session and in all.
	streams   map[string]int
	streamAll int
}

func newEventFeed() *eventFeed {
	return &eventFeed{ch: make(chan struct{}), streams: map[string]int{}}
}

// wait returns a channel closed at the next kick.
func (f *eventFeed) wait() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ch
}

// kick wakes every stream waiting.
func (f *eventFeed) kick() {
	f.mu.Lock()
	close(f.ch)
	f.ch = make(chan struct{})
	f.mu.Unlock()
}

// claim takes a standing stream of key ("" for an operator's, which count
// only toward the server's bound); release gives it back.
func (f *eventFeed) claim(key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.streamAll >= maxStandingStreams || (key != "" && f.streams[key] >= maxSessionStreams) {
		return false
	}
	f.streamAll++
	if key != "" {
		f.streams[key]++
	}
	return true
}

func (f *eventFeed) release(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.streamAll--
	if key != "" {
		if f.streams[key]--; f.streams[key] <= 0 {
			delete(f.streams, key)
		}
	}
}

// watchEvents kicks the feed when another process (or replica) writes a
// conversation event, until ctx ends.
func (s *Server) watchEvents(ctx context.Context) {
	st := s.h.Store()
	if st.Dialect() == store.Postgres {
		_ = st.Listen(ctx, host.EventsChannel, s.log, func(string) { s.feed.kick() })
		return
	}
	t := time.NewTicker(eventPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		n, err := s.sessions.LastEventSeq(qctx)
		cancel()
		if err != nil {
			continue
		}
		s.feed.mu.Lock()
		changed := n != s.feed.last
		s.feed.last = n
		s.feed.mu.Unlock()
		if changed {
			s.feed.kick()
		}
	}
}

// ConversationEvent is the data of a standing stream's event; the event's
// name is Kind and its id Seq (send it back as Last-Event-ID to resume).
type ConversationEvent struct {
	Seq     int64          `json:"seq"`
	Session string         `json:"session"`
	Kind    string         `json:"kind"`
	At      time.Time      `json:"at"`
	State   host.ConvState `json:"state,omitempty"`
	// Operator is the operator's display name.
	Operator string `json:"operator,omitempty"`
	Content  string `json:"content,omitempty"`
	// Note is the hand-back note, on the operators' stream only.
	Note string `json:"note,omitempty"`
}

// customerKinds are the events the customer's stream carries.
var customerKinds = map[string]bool{
	host.EventKindState: true, host.EventKindOperatorJoined: true,
	host.EventKindOperatorMessage: true, host.EventKindOperatorLeft: true,
}

// resumeFrom is where a stream starts: after Last-Event-ID (or ?after=)
// when given, else after the newest event (only what comes next).
func (s *Server) resumeFrom(r *http.Request) (int64, error) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("after")
	}
	if v == "" {
		return s.sessions.LastEventSeq(r.Context())
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, errBadCursor
	}
	return n, nil
}

var errBadCursor = errors.New("Last-Event-ID (or after) must be the id of an event, a non-negative integer")

// sessionEvents is GET /api/sessions/{id}/events: the customer's standing
// stream of operator_joined, operator_message, operator_left and state.
func (s *Server) sessionEvents(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !validSessionID(id) {
		writeError(w, http.StatusNotFound, "no such session; POST /api/sessions starts one")
		return
	}
	if limited(w, s.addrLim, clientAddr(r), "from this address", writeError) {
		return
	}
	if ok, err := s.sessionExists(r.Context(), id); err != nil || !ok {
		if err != nil {
			s.log.Error(err.Error())
		}
		writeError(w, http.StatusNotFound, "no such session; POST /api/sessions starts one")
		return
	}
	s.standingStream(w, r, id, func(ev *host.SessionEvent) bool {
		ev.Note = "" // the note is for the assistant, not the customer
		return customerKinds[ev.Kind]
	})
}

// operatorEvents is GET /operator/events: every conversation's events
// (queue changes, customer messages while held, operators' messages).
func (s *Server) operatorEvents(w http.ResponseWriter, r *http.Request) {
	// The heartbeat runs while the stream does; its last write (when the
	// stream closed) is done before the handler returns.
	ctx, cancel := context.WithCancel(r.Context())
	wait := s.operatorStream(ctx)
	defer wait()
	defer cancel()
	s.standingStream(w, r, "", func(*host.SessionEvent) bool { return true })
}

// standingStream streams the events of session id ("" for all) that keep
// passes, from the request's resume point, until the client goes.
func (s *Server) standingStream(w http.ResponseWriter, r *http.Request, id string, keep func(*host.SessionEvent) bool) {
	after, err := s.resumeFrom(r)
	if err != nil {
		if errors.Is(err, errBadCursor) {
			writeError(w, http.StatusBadRequest, err.Error())
		} else {
			s.log.Error(err.Error())
			writeError(w, http.StatusServiceUnavailable, "the conversation events cannot be read now; try again in a moment")
		}
		return
	}
	if !s.feed.claim(id) {
		w.Header().Set("Retry-After", "5")
		what := "the server has as many standing streams as it keeps"
		if id != "" {
			what = fmt.Sprintf("this session has %d event streams open already; close one", maxSessionStreams)
		}
		writeError(w, http.StatusTooManyRequests, what)
		return
	}
	defer s.feed.release(id)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(s.hardStop, cancel)
	defer stop()
	es := s.openStream(w, cancel)
	defer es.close()
	if !es.comment("stream open") {
		return
	}
	keepAlive := time.NewTicker(cmp.Or(s.keepAlive, keepAliveEvery))
	defer keepAlive.Stop()
	for {
		wake := s.feed.wait() // before the read: a kick during it is not lost
		evs, err := s.sessions.Events(ctx, id, after, 0)
		if err != nil && ctx.Err() == nil {
			s.log.Error(err.Error())
		}
		for i := range evs {
			ev := &evs[i]
			after = ev.Seq
			if !keep(ev) {
				continue
			}
			data, _ := json.Marshal(ConversationEvent{Seq: ev.Seq, Session: ev.Session, Kind: ev.Kind, At: ev.At,
				State: ev.State, Operator: ev.Operator, Content: ev.Content, Note: ev.Note})
			if !es.writeWithID(strconv.FormatInt(ev.Seq, 10), ev.Kind, data) {
				return
			}
		}
		if len(evs) > 0 && err == nil && len(evs) >= 500 {
			continue // a full page: read on at once
		}
		select {
		case <-ctx.Done():
			return
		case <-s.drained:
			return // a shutdown does not wait for standing streams
		case <-wake:
		case <-keepAlive.C:
			if !es.comment("keep-alive") {
				return
			}
		case <-time.After(time.Minute):
			// A notification lost with its connection is caught here.
		}
	}
}

// writeWithID writes one event with its id, as write does.
func (e *eventStream) writeWithID(id, event string, data []byte) bool {
	return e.writeRaw(appendEvent([]byte("id: "+id+"\n"), event, data))
}

// comment writes an SSE comment line (a keep-alive).
func (e *eventStream) comment(text string) bool {
	return e.writeRaw([]byte(": " + text + "\n\n"))
}

func (e *eventStream) writeRaw(b []byte) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.broken {
		return false
	}
	e.startLocked()
	if e.timeout > 0 {
		_ = e.rc.SetWriteDeadline(time.Now().Add(e.timeout))
	}
	_, err := e.w.Write(b)
	if err == nil {
		err = e.rc.Flush()
	}
	if err != nil {
		e.broken = true
		e.cancel()
		return false
	}
	return true
}

// operatorName is who is asking: the named operator whose token the
// request carries, else the body's name (loopback without credentials, or
// the shared operator token), else "operator".
func (s *Server) operatorName(r *http.Request, bodyName string) (string, error) {
	if cred := trust.Credential(r); cred != "" {
		for _, op := range s.opts.Operators {
			if trust.NewSecrets(op.Token).Match(cred) {
				return op.Name, nil
			}
		}
	}
	name := strings.TrimSpace(bodyName)
	if name == "" {
		return "operator", nil
	}
	return name, checkOperatorName(name)
}

// TakeoverRequest is the (optional) body of POST
// /operator/sessions/{id}/takeover.
type TakeoverRequest struct {
	// Name names the operator where no named credential does.
	Name string `json:"name"`
}

// OperatorMessageRequest is the body of POST
// /operator/sessions/{id}/messages.
type OperatorMessageRequest struct {
	Content string `json:"content"`
	Name    string `json:"name"`
}

// HandbackRequest is the body of POST /operator/sessions/{id}/handback.
type HandbackRequest struct {
	// Note reaches the assistant with the customer's next message.
	Note string `json:"note"`
	Name string `json:"name"`
}

// operatorSession reads the path's session id and the body, answering
// itself when either is wrong.
func (s *Server) operatorSession(w http.ResponseWriter, r *http.Request, body any) (string, bool) {
	id := r.PathValue("id")
	if !validSessionID(id) {
		writeError(w, http.StatusNotFound, "no such session")
		return "", false
	}
	if r.ContentLength != 0 && !readStrictJSON(w, r, operatorBody, body, writeError) {
		return "", false
	}
	return id, true
}

// stateError answers a refused state change.
func (s *Server) stateError(w http.ResponseWriter, err error) {
	var conflict *host.StateConflictError
	switch {
	case errors.As(err, &conflict):
		writeError(w, http.StatusConflict, err.Error())
	case errors.Is(err, host.ErrNoSession):
		writeError(w, http.StatusNotFound, "no such session")
	default:
		s.log.Error(err.Error())
		writeError(w, http.StatusServiceUnavailable, "the conversation could not be changed now; try again in a moment")
	}
}

// takeover is POST /operator/sessions/{id}/takeover: the operator holds
// the conversation from now on (from waiting, or from the assistant).
func (s *Server) takeover(w http.ResponseWriter, r *http.Request) {
	var in TakeoverRequest
	id, ok := s.operatorSession(w, r, &in)
	if !ok {
		return
	}
	name, err := s.operatorName(r, in.Name)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	st, err := s.sessions.Transition(r.Context(), id, []host.ConvState{host.StateWaiting, host.StateAssistant}, host.StateHuman, name,
		host.SessionEvent{Kind: host.EventKindOperatorJoined, Operator: name})
	if err != nil {
		s.stateError(w, err)
		return
	}
	s.acted(r.Context(), id, false)
	s.feed.kick()
	writeJSON(w, http.StatusOK, st)
}

// operatorMessage is POST /operator/sessions/{id}/messages: a message to
// the customer from the operator holding the conversation, kept in the
// transcript (the assistant reads it later).
func (s *Server) operatorMessage(w http.ResponseWriter, r *http.Request) {
	var in OperatorMessageRequest
	id, ok := s.operatorSession(w, r, &in)
	if !ok {
		return
	}
	content := strings.TrimSpace(in.Content)
	if content == "" || utf8.RuneCountInString(content) > maxOperatorMessage {
		writeError(w, http.StatusBadRequest, fmt.Sprintf(`send {"content": "…"}: a message of 1 to %d characters`, maxOperatorMessage))
		return
	}
	name, err := s.operatorName(r, in.Name)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	msg := model.Message{Role: model.RoleAssistant, Content: content, Name: host.OperatorMessageName(name)}
	err = s.sessions.AddEvent(r.Context(), id, []host.ConvState{host.StateHuman},
		host.SessionEvent{Kind: host.EventKindOperatorMessage, Operator: name, Content: content}, []model.Message{msg})
	if err != nil {
		s.stateError(w, err)
		return
	}
	s.acted(r.Context(), id, false)
	s.feed.kick()
	writeJSON(w, http.StatusOK, map[string]string{"session": id, "operator": name})
}

// handback is POST /operator/sessions/{id}/handback: the assistant
// answers again, and reads the note with the customer's next message.
func (s *Server) handback(w http.ResponseWriter, r *http.Request) {
	var in HandbackRequest
	id, ok := s.operatorSession(w, r, &in)
	if !ok {
		return
	}
	note := strings.TrimSpace(in.Note)
	if utf8.RuneCountInString(note) > maxOperatorMessage {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("the note is over %d characters", maxOperatorMessage))
		return
	}
	name, err := s.operatorName(r, in.Name)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	st, err := s.sessions.HandBack(r.Context(), id, name, note)
	if err != nil {
		s.stateError(w, err)
		return
	}
	s.acted(r.Context(), id, true)
	s.feed.kick()
	writeJSON(w, http.StatusOK, st)
}

// conversations is GET /operator/conversations?state=waiting: a page of
// the conversations in a state, oldest change first; ?after=MS:ID (the
// previous page's next) continues.
func (s *Server) conversations(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state, err := host.ParseConvState(cmp.Or(q.Get("state"), string(host.StateWaiting)))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	var afterMs int64
	var afterID string
	if a := q.Get("after"); a != "" {
		ms, id, ok := strings.Cut(a, ":")
		n, err := strconv.ParseInt(ms, 10, 64)
		if !ok || err != nil {
			writeError(w, http.StatusBadRequest, "after must be the next of the previous page (MS:ID)")
			return
		}
		afterMs, afterID = n, id
	}
	limit := 50
	if l := q.Get("limit"); l != "" {
		if n, err := strconv.Atoi(l); err == nil && n > 0 && n <= 200 {
			limit = n
		} else {
			writeError(w, http.StatusBadRequest, "limit must be 1 to 200")
			return
		}
	}
	list, err := s.sessions.ByState(r.Context(), state, afterMs, afterID, limit)
	if err != nil {
		s.log.Error(err.Error())
		writeError(w, http.StatusServiceUnavailable, "the conversations cannot be read now; try again in a moment")
		return
	}
	out := struct {
		Conversations []host.SessionState `json:"conversations"`
		Next          string              `json:"next,omitempty"`
	}{Conversations: orEmpty(list)}
	if len(list) == limit {
		last := list[len(list)-1]
		var ms int64
		if !last.Since.IsZero() {
			ms = last.Since.UnixMilli()
		}
		out.Next = strconv.FormatInt(ms, 10) + ":" + last.ID
	}
	writeJSON(w, http.StatusOK, out)
}
