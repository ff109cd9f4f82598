package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/store"
)

// SessionCookie holds the page's session id: HttpOnly, so a script
// injected into the page cannot read it, and SameSite=Lax, so another
// site's page cannot use it.
const SessionCookie = "agentapp_session"

// sessionCookieAge is how long a browser keeps the conversation.
const sessionCookieAge = 30 * 24 * time.Hour

// routes builds the handler: every request is counted, Host-checked and,
// when it changes state, checked for cross-origin.
func (s *Server) routes() (http.Handler, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/sessions", s.createSession)
	mux.HandleFunc("GET /api/sessions/current", s.currentSession)
	mux.HandleFunc("GET /api/sessions/{id}", s.getSession)
	// A turn continues the trace of the request's traceparent header.
	mux.Handle("POST /api/sessions/{id}/messages", s.opts.Tracing.Handler("/api/sessions/{id}/messages", http.HandlerFunc(s.postMessage)))
	mux.HandleFunc("POST /api/sessions/{id}/approvals/{approvalId}", s.postApproval)
	mux.HandleFunc("POST /api/sessions/{id}/compact", s.postCompact) // compact.go
	// The conversation's standing streams and the operator's side of it
	// (conversations.go).
	mux.HandleFunc("GET /api/sessions/{id}/events", s.sessionEvents)
	mux.HandleFunc("GET /operator/events", s.operatorOnly(s.operatorEvents))
	mux.HandleFunc("GET /operator/conversations", s.operatorOnly(s.conversations))
	mux.HandleFunc("POST /operator/sessions/{id}/takeover", s.operatorOnly(s.takeover))
	mux.HandleFunc("POST /operator/sessions/{id}/messages", s.operatorOnly(s.operatorMessage))
	mux.HandleFunc("POST /operator/sessions/{id}/handback", s.operatorOnly(s.handback))
	mux.Handle("POST /v1/chat/completions", s.opts.Tracing.Handler("/v1/chat/completions", s.apiKeyOnly(s.completions)))
	mux.HandleFunc("GET /v1/models", s.apiKeyOnly(s.models))
	if err := s.mountOperator(mux); err != nil {
		return nil, err
	}
	s.registerApps(mux) // apps.go
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.HandleFunc("GET /metrics", s.metricsOnly(s.metrics.handler().ServeHTTP))
	mux.Handle("GET /static/", staticFiles())
	mux.HandleFunc("GET /{$}", s.servePage)
	return s.metrics.instrument(checkHost(crossOrigin(methodsOrNotFound(mux)))), nil
}

// mountOperator mounts the operator view's routes (Options.Operator) behind
// the operator token. A pattern outside /operator, or one the mux refuses
// (malformed, or clashing with another), is an error of the caller.
func (s *Server) mountOperator(mux *http.ServeMux) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("web: an operator route cannot be mounted: %v", r)
		}
	}()
	for pattern, h := range s.opts.Operator {
		_, path, _ := strings.Cut(pattern, " ")
		if !strings.Contains(pattern, " ") {
			path = pattern
		}
		if h == nil || (path != "/operator" && !strings.HasPrefix(path, "/operator/")) {
			return fmt.Errorf("web: operator route %q: want a handler on /operator or a path under it", pattern)
		}
		mux.HandleFunc(pattern, s.operatorOnly(h.ServeHTTP))
	}
	return nil
}

// probedMethods are the methods tried on a path no route takes, to tell a
// wrong method (405) from a wrong path (404).
var probedMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// methodsOrNotFound answers what mux has no route for in JSON, like the
// rest of the API: 405 with the Allow header when the path exists under
// other methods (GET on a POST-only path, and the reverse), else 404. The
// mux has no catch-all route, which would take every method of every path
// and hide the 405s.
func methodsOrNotFound(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		var allow []string
		for _, m := range probedMethods {
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, pattern := mux.Handler(probe); pattern != "" {
				allow = append(allow, m)
			}
		}
		if len(allow) == 0 {
			writeError(w, http.StatusNotFound, "no such endpoint: the chat page is /, the API /api/sessions, the OpenAI-compatible endpoint /v1/chat/completions")
			return
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed on this path; use %s", r.Method, strings.Join(allow, " or ")))
	})
}

// writeJSON writes v as the JSON answer.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// ErrorBody is the answer of a refused /api request.
type ErrorBody struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, ErrorBody{Error: msg})
}

// readJSON decodes a JSON body of at most limit bytes into v, answering
// 413 or 400 itself when it cannot.
func readJSON(w http.ResponseWriter, r *http.Request, limit int64, v any, fail func(http.ResponseWriter, int, string)) bool {
	return decodeBody(w, r, limit, v, false, fail)
}

// readStrictJSON is readJSON for the page's own API, whose bodies are
// small and fixed: a field it does not know (a typo, or {"text": …} for
// {"content": …}) is refused with its name and the accepted ones, rather
// than read as a missing field. The OpenAI endpoint stays lenient, as
// its clients send fields this server does not use.
func readStrictJSON(w http.ResponseWriter, r *http.Request, limit int64, v any, fail func(http.ResponseWriter, int, string)) bool {
	return decodeBody(w, r, limit, v, true, fail)
}

func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, v any, strict bool, fail func(http.ResponseWriter, int, string)) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	if strict {
		dec.DisallowUnknownFields()
	}
	err := dec.Decode(v)
	if field, ok := unknownField(err); ok {
		fail(w, http.StatusBadRequest, fmt.Sprintf("unknown field %s in the body; the accepted fields are %s", field, strings.Join(jsonFields(v), ", ")))
		return false
	}
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	var mbe *http.MaxBytesError
	switch {
	case err == nil:
		return true
	case errors.As(err, &mbe):
		fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is over the %d-byte limit", mbe.Limit))
	case errors.Is(err, io.EOF):
		fail(w, http.StatusBadRequest, "the request has no body; send a JSON object")
	default:
		fail(w, http.StatusBadRequest, "the body is not the JSON expected: "+err.Error())
	}
	return false
}

// unknownField reads the field name out of the decoder's error for an
// unknown field (encoding/json has no typed error for it).
func unknownField(err error) (string, bool) {
	if err == nil {
		return "", false
	}
	name, ok := strings.CutPrefix(err.Error(), "json: unknown field ")
	if !ok || len(name) > 80 {
		return "", false
	}
	return name, true
}

// jsonFields lists the JSON names of the fields of the struct v points to.
func jsonFields(v any) []string {
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var names []string
	if t.Kind() != reflect.Struct {
		return names
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		names = append(names, strconv.Quote(name))
	}
	return names
}

// limited takes a token of lim for key, or answers 429 with Retry-After.
func limited(w http.ResponseWriter, lim *limiter, key, what string, fail func(http.ResponseWriter, int, string)) bool {
	ok, wait := lim.allow(key)
	if ok {
		return false
	}
	w.Header().Set("Retry-After", retryAfter(wait))
	fail(w, http.StatusTooManyRequests, fmt.Sprintf("too many requests %s; try again in %s s", what, retryAfter(wait)))
	return true
}

// SessionInfo is the answer of POST /api/sessions and GET /api/sessions/{id}.
type SessionInfo struct {
	ID       string         `json:"id"`
	Messages []HistoryEntry `json:"messages"`
	// Fold, when older turns were folded into a summary for the model,
	// says where (compact.go); the messages stay whole.
	Fold *FoldInfo `json:"fold,omitempty"`
	// Usage is what the session's model calls cost so far.
	Usage *host.SessionUsage `json:"usage,omitempty"`
	// State is who answers the conversation now (assistant, waiting,
	// human) and, while human, the operator's name.
	State *host.SessionState `json:"state,omitempty"`
	// Events is the id of the newest conversation event when the
	// transcript was read: GET /api/sessions/{id}/events?after=Events
	// carries on from this transcript.
	Events int64 `json:"events"`
	// Budget is what the session may still use, when the service has caps.
	Budget *BudgetInfo `json:"budget,omitempty"`
}

func (s *Server) createSession(w http.ResponseWriter, r *http.Request) {
	if limited(w, s.addrLim, clientAddr(r), "from this address", writeError) {
		return
	}
	id := randomID("w-")
	if err := s.sessions.Create(r.Context(), id); err != nil {
		s.log.Error(err.Error())
		storeFailed(w, err, "the session could not be stored; try again", false)
		return
	}
	s.known.add(id, s.clock.Now())
	http.SetCookie(w, &http.Cookie{
		Name: SessionCookie, Value: id, Path: "/", MaxAge: int(sessionCookieAge.Seconds()),
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil,
	})
	writeJSON(w, http.StatusCreated, SessionInfo{ID: id, Messages: []HistoryEntry{}})
}

// currentSession is the session of the page's cookie, so that a reload
// shows the conversation. Without one (a first visit, or a session that
// is gone) the answer is 204 No Content: having no conversation yet is
// not an error, and a 404 would be logged in the browser's console at
// every first visit.
func (s *Server) currentSession(w http.ResponseWriter, r *http.Request) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || !validSessionID(c.Value) {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	ok, err := s.sessions.Exists(r.Context(), c.Value)
	if err == nil && !ok {
		// Forget the stale cookie; the page starts a session when the
		// user writes.
		http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
		w.WriteHeader(http.StatusNoContent)
		return
	}
	s.writeHistory(w, r, c.Value)
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request) {
	s.writeHistory(w, r, r.PathValue("id"))
}

func (s *Server) writeHistory(w http.ResponseWriter, r *http.Request, id string) {
	if !validSessionID(id) {
		writeError(w, http.StatusNotFound, "no such session; POST /api/sessions starts one")
		return
	}
	// Read before the transcript: the standing stream started after it
	// misses nothing written since.
	events, evErr := s.sessions.LastEventSeq(r.Context())
	if evErr != nil {
		s.log.Error(evErr.Error())
	}
	fold, err := s.h.FoldState(r.Context(), id)
	after := -1
	if err == nil && fold.Folds > 0 {
		after = fold.After
	}
	var msgs []HistoryEntry
	var at int
	var ok bool
	if err == nil {
		msgs, at, ok, err = s.history(r.Context(), id, after)
	}
	if err != nil {
		s.log.Error(err.Error())
		storeFailed(w, err, "the session could not be read; try again", false)
		return
	}
	if !ok {
		writeError(w, http.StatusNotFound, "no such session; POST /api/sessions starts one")
		return
	}
	info := SessionInfo{ID: id, Messages: msgs, Fold: foldInfo(fold, at)}
	if u, err := s.h.SessionUsage(r.Context(), id); err == nil {
		info.Usage = &u
	} else {
		s.log.Error(err.Error()) // the transcript is still worth showing
	}
	info.Events = events
	info.Budget = s.budgetLeft(r.Context(), id)
	if st, err := s.sessions.State(r.Context(), id); err == nil {
		info.State = &st
	} else {
		s.log.Error(err.Error())
	}
	writeJSON(w, http.StatusOK, info)
}

// validSessionID keeps ids the server could have issued, so that nothing
// else reaches the database.
func validSessionID(id string) bool {
	return len(id) > 0 && len(id) <= 64 && !strings.ContainsFunc(id, func(r rune) bool {
		return !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z')
	})
}

// MessageRequest is the body of POST /api/sessions/{id}/messages.
type MessageRequest struct {
	Content string `json:"content"`
}

// DoneEvent is the data of the "done" event: the answer and the
// knowledge-base passages it cites.
type DoneEvent struct {
	Answer string `json:"answer"`
	// Sources are the passages in citation order, each {"no", "docId",
	// "title"}: the shape of the chat's JSON output too.
	Sources []host.Source `json:"sources"`
	// Usage is what the turn's model calls cost: input and output tokens,
	// per call too, marked estimated where the provider reported none.
	Usage host.Usage `json:"usage"`
	// Queued is true when an operator holds the conversation: the
	// message went to them (a "queued" event came first) and Answer is
	// empty.
	Queued bool `json:"queued,omitempty"`
	// Budget is what the session may still use after the turn, when the
	// service has caps.
	Budget *BudgetInfo `json:"budget,omitempty"`
}

// ErrorEvent is the data of the "error" event; nothing of the turn was
// stored.
type ErrorEvent struct {
	Message string `json:"message"`
}

func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	// The id is checked first: only an id the server could have issued
	// may become a key of the session limiter's table.
	if !validSessionID(id) {
		writeError(w, http.StatusNotFound, "no such session; POST /api/sessions starts one")
		return
	}
	if limited(w, s.addrLim, clientAddr(r), "from this address", writeError) ||
		limited(w, s.sessLim, id, "in this session", writeError) {
		return
	}
	var in MessageRequest
	if !readStrictJSON(w, r, maxMessageBody, &in, writeError) {
		return
	}
	if ok, err := s.sessionExists(r.Context(), id); err != nil || !ok {
		if err != nil {
			s.log.Error(err.Error())
		}
		writeError(w, http.StatusNotFound, "no such session; POST /api/sessions starts one")
		return
	}
	if !s.startTurn(w, writeError) {
		return
	}
	defer s.releaseStream()
	if !s.claimSession(id) {
		writeError(w, http.StatusConflict, "this session is answering another message; wait for its done event")
		return
	}
	defer s.releaseSession(id)

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	// The stream starts once the host has accepted the message: a message
	// the host's checks refuse is answered with a status instead.
	ev := s.newStream(w, cancel)
	defer ev.close()
	received := time.Now()
	t := &turn{s: s, session: id, client: clientAddr(r), api: "chat", emit: ev.send}
	t.accepted = func() {
		ev.send("session", map[string]string{"id": id})
		// The messages that arrive with this one get their first events
		// before the turns take the processor (burst.go).
		s.burst.wait(ctx)
	}
	var once sync.Once
	res, err := s.runTurn(ctx, t, host.Turn{Text: in.Content, Attachments: s.takeAppContext(id)}, func(delta string) {
		once.Do(func() { s.metrics.firstEvent.WithLabelValues("chat").Observe(time.Since(received).Seconds()) })
		ev.send("token", map[string]string{"text": delta})
	})
	if err != nil {
		if code, msg, ok := refusal(err); ok && !ev.started() {
			writeError(w, code, msg)
			return
		}
		ev.send("error", ErrorEvent{Message: err.Error()})
		return
	}
	if res.Queued != nil {
		s.feed.kick() // the operator's stream on this process reads it now
	}
	ev.send("done", DoneEvent{Answer: res.Answer, Sources: orEmpty(res.Sources), Usage: res.Usage, Queued: res.Queued != nil, Budget: s.budgetLeft(ctx, id)})
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// startTurn takes a turn slot, answering 503 when the server is draining
// or every slot is in use.
func (s *Server) startTurn(w http.ResponseWriter, fail func(http.ResponseWriter, int, string)) bool {
	if s.draining.Load() {
		w.Header().Set("Retry-After", "5")
		fail(w, http.StatusServiceUnavailable, "the server is shutting down; try again in a moment")
		return false
	}
	if !s.acquireStream() {
		w.Header().Set("Retry-After", "5")
		fail(w, http.StatusServiceUnavailable, fmt.Sprintf("the server is answering %d messages already; try again in a few seconds", s.opts.MaxStreams))
		return false
	}
	return true
}

// eventStream writes server-sent events. Each event gets a fresh write
// deadline, so the server's WriteTimeout bounds one stuck write, not the
// whole stream; the read deadline is lifted, since the body has been read
// and the connection's only read now is the one that notices the client
// leaving. A failed write cancels the turn.
type eventStream struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	broken  bool
	begun   bool // the status and headers are written
	cancel  context.CancelFunc
}

// newStream prepares an event stream on w; its status and headers are
// written with its first event, so that until then the handler may still
// answer with another status.
func (s *Server) newStream(w http.ResponseWriter, cancel context.CancelFunc) *eventStream {
	return &eventStream{w: w, rc: http.NewResponseController(w), timeout: s.opts.WriteTimeout, cancel: cancel}
}

// openStream is newStream with its status and headers written at once.
func (s *Server) openStream(w http.ResponseWriter, cancel context.CancelFunc) *eventStream {
	e := s.newStream(w, cancel)
	e.mu.Lock()
	e.startLocked()
	e.mu.Unlock()
	return e
}

// startLocked writes the stream's status and headers once (e.mu held).
func (e *eventStream) startLocked() {
	if e.begun {
		return
	}
	e.begun = true
	_ = e.rc.SetReadDeadline(time.Time{})
	h := e.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // a proxy must not hold the stream back
	e.w.WriteHeader(http.StatusOK)
}

// started reports whether the stream's status has been written.
func (e *eventStream) started() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.begun
}

// refusal is the status and message of a message the host's checks
// refused before the turn ran: too long, refused by the input guard, or
// empty.
func refusal(err error) (code int, msg string, ok bool) {
	var tooLong *host.TooLongError
	var refused *host.InputRefusedError
	switch {
	case errors.As(err, &tooLong):
		return http.StatusRequestEntityTooLarge, err.Error(), true
	case errors.As(err, &refused), errors.As(err, new(*host.HookBlockedError)):
		return http.StatusUnprocessableEntity, err.Error(), true
	case errors.Is(err, host.ErrEmptyMessage):
		return http.StatusBadRequest, `the message is empty; send {"content": "your question"}`, true
	}
	return 0, "", false
}

// close ends the stream for writers still holding it: a tool that ignored
// the turn's cancellation may ask for an approval after the handler
// returned, when the ResponseWriter must no longer be used.
func (e *eventStream) close() {
	e.mu.Lock()
	e.broken = true
	e.mu.Unlock()
}

// send writes one named event with data as JSON; it reports false once
// the client is gone.
func (e *eventStream) send(event string, data any) bool {
	b, err := json.Marshal(data)
	if err != nil {
		b, _ = json.Marshal(ErrorEvent{Message: "an event could not be encoded: " + err.Error()})
		event = "error"
	}
	return e.write(event, b)
}

// write is the one writer of the stream's events (the chat API's named
// ones and /v1's unnamed ones): each under the write deadline, flushed at
// once; a failed write marks the stream broken and cancels the turn.
func (e *eventStream) write(event string, data []byte) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.broken {
		return false
	}
	e.startLocked()
	_ = e.rc.SetWriteDeadline(time.Now().Add(e.timeout))
	_, err := e.w.Write(appendEvent(nil, event, data))
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

// appendEvent appends one server-sent event to b: its name when it has
// one, and data as one "data:" line per line of it, since a line break
// inside a data line would end the field there and the rest would be read
// as a field of its own.
func appendEvent(b []byte, event string, data []byte) []byte {
	if event != "" {
		b = append(append(append(b, "event: "...), event...), '\n')
	}
	data = bytes.ReplaceAll(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
	for {
		line, rest, more := bytes.Cut(data, []byte("\n"))
		b = append(append(append(b, "data: "...), line...), '\n')
		if !more {
			break
		}
		data = rest
	}
	return append(b, '\n')
}

// ApprovalRequest is the body of POST .../approvals/{approvalId}.
type ApprovalRequest struct {
	Approved *bool `json:"approved"`
	// Remember keeps an allow: "session" for the rest of the session,
	// "project" in this project from now on; empty for this call only.
	// It must be one the approval event offered.
	Remember string `json:"remember,omitempty"`
}

func (s *Server) postApproval(w http.ResponseWriter, r *http.Request) {
	if limited(w, s.addrLim, clientAddr(r), "from this address", writeError) {
		return
	}
	var in ApprovalRequest
	if !readStrictJSON(w, r, maxSmallBody, &in, writeError) {
		return
	}
	if in.Approved == nil {
		writeError(w, http.StatusBadRequest, `say {"approved": true} to allow the call or {"approved": false} to deny it`)
		return
	}
	s.mu.Lock()
	a := s.approvals[r.PathValue("approvalId")]
	s.mu.Unlock()
	if a == nil || a.session != r.PathValue("id") {
		writeError(w, http.StatusNotFound, "no such approval is waiting in this session (it may have timed out or been answered)")
		return
	}
	if in.Remember != "" && (!*in.Approved || !slices.Contains(a.remember, in.Remember)) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf(`"remember" may be %s with "approved": true, or left out`, strings.Join(quoted(a.remember), " or ")))
		return
	}
	select {
	case a.decide <- answer{approved: *in.Approved, remember: in.Remember}:
	default:
		writeError(w, http.StatusConflict, "this approval was answered already")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": a.id, "approved": *in.Approved, "remember": in.Remember})
}

// quoted quotes each of names for an error message.
func quoted(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strconv.Quote(n)
	}
	return out
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// Readiness is the answer of GET /readyz.
type Readiness struct {
	Ready    bool           `json:"ready"`
	Database string         `json:"database"`
	Servers  []ServerStatus `json:"servers"`
}

// ServerStatus is one MCP server's state in Readiness.
type ServerStatus struct {
	Name  string `json:"name"`
	State string `json:"state"`
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	rd := Readiness{Ready: true, Database: "ok", Servers: []ServerStatus{}}
	if err := s.h.Store().DB.PingContext(ctx); err != nil {
		rd.Ready, rd.Database = false, "unreachable: "+store.Cause(err)
	} else if err := s.writeCheck(ctx); err != nil {
		rd.Ready, rd.Database = false, err.Error()
	}
	if s.draining.Load() {
		rd.Ready = false
	}
	for _, srv := range s.h.Tools().Servers() {
		st := ServerStatus{Name: srv.Name(), State: "connected"}
		if sv, ok := srv.(host.Supervised); ok {
			status := sv.Status()
			if st.State = status.State.String(); status.Detail != "" {
				st.State += ": " + status.Detail
			}
			if status.State != mcpclient.StateConnected {
				rd.Ready = false
			}
		}
		rd.Servers = append(rd.Servers, st)
	}
	code := http.StatusOK
	if !rd.Ready {
		code = http.StatusServiceUnavailable
	}
	if !s.metricsAllowed(r) {
		// Names, states and database errors are for the operator; a load
		// balancer needs only the status.
		writeJSON(w, code, map[string]bool{"ready": rd.Ready})
		return
	}
	writeJSON(w, code, rd)
}
