package assistant

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/agentapp/agentapp/support"
)

// The operator's refund requests (support/refunds.go): a request filed
// with requestRefund waits, as an MCP task when its caller asked for one,
// until an operator approves or declines it here.
//
//	GET  /operator/refunds                 the requests, newest first
//	POST /operator/refunds/{id}/approve    {"note": "…"} (optional)
//	POST /operator/refunds/{id}/decline    {"note": "…"} (optional)
//
// Like the rest of the operator view they are mounted behind the
// operator token.

// maxDecisionBody bounds the body of a decision: a note of at most 2000
// characters, JSON-encoded or form-encoded.
const maxDecisionBody = 16 << 10

func (s *operator) operatorRefunds(w http.ResponseWriter, r *http.Request) {
	list, err := s.support.Refunds(r.Context(), operatorList)
	if err != nil {
		s.log.Error(err.Error())
		storeFailed(w, err, "the refund requests could not be read; try again", false)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"refunds": orEmpty(list)})
}

func (s *operator) decideRefund(approve bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if len(id) > 64 {
			writeError(w, http.StatusNotFound, "no such refund request")
			return
		}
		note, form, err := decisionNote(w, r)
		if err != nil {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		q, err := s.support.DecideRefund(r.Context(), id, approve, note)
		switch {
		case errors.Is(err, support.ErrNotFound):
			writeError(w, http.StatusNotFound, err.Error())
			return
		case errors.Is(err, support.ErrDecided):
			writeError(w, http.StatusConflict, err.Error()+"; a decision is final")
			return
		case err != nil && strings.Contains(err.Error(), "longer than"):
			writeError(w, http.StatusBadRequest, err.Error())
			return
		case err != nil:
			s.log.Error(err.Error())
			storeFailed(w, err, "the decision could not be recorded; try again", false)
			return
		}
		if form {
			http.Redirect(w, r, "/operator", http.StatusSeeOther)
			return
		}
		writeJSON(w, http.StatusOK, q)
	}
}

// decisionNote reads the optional note of a decision: a JSON body
// {"note": "…"}, a form field note, or no body at all.
func decisionNote(w http.ResponseWriter, r *http.Request) (note string, form bool, err error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxDecisionBody)
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch mt {
	case "application/x-www-form-urlencoded":
		if err := r.ParseForm(); err != nil {
			return "", true, errors.New("the form could not be read: " + err.Error())
		}
		return r.PostForm.Get("note"), true, nil
	case "", "application/json":
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return "", false, errors.New("the body could not be read (at most 16 KiB): " + err.Error())
		}
		if len(strings.TrimSpace(string(body))) == 0 {
			return "", false, nil
		}
		var d struct {
			Note string `json:"note"`
		}
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&d); err != nil {
			return "", false, errors.New(`send the decision as JSON {"note": "…"} (the note is optional): ` + err.Error())
		}
		return d.Note, false, nil
	}
	return "", false, errors.New("send the note as application/json or a form, not " + mt)
}
