package web

import (
	"context"
	"errors"
	"net/http"

	"github.com/agentapp/agentapp/host"
)

// FoldEvent is the data of a "fold" event: before a model call, older
// turns were folded into a summary to fit the model's context window. The
// page marks the place; the transcript keeps every message.
type FoldEvent struct {
	// Messages were folded now, Tokens their estimated size.
	Messages int `json:"messages"`
	Tokens   int `json:"tokens"`
	// SummaryTokens is the summary's estimated size afterwards.
	SummaryTokens int `json:"summaryTokens"`
	Window        int `json:"window"`
	// KeptTurns counts the earlier questions still sent verbatim: the
	// place of the fold is before them (and the turn's own question).
	KeptTurns int `json:"keptTurns"`
	// Summary is what the model sees now in place of all folded turns.
	Summary string `json:"summary"`
}

// FoldInfo is the "fold" field of GET /api/sessions/{id}: where the
// model's view of the session begins.
type FoldInfo struct {
	// Before is the index in messages of the first entry after the place
	// of the fold (len(messages) when all shown ones are folded).
	Before int `json:"before"`
	// Folds counts the folds; Messages all messages folded so far, and
	// Tokens their estimated size (0 when unknown).
	Folds         int64  `json:"folds"`
	Messages      int    `json:"messages"`
	Tokens        int    `json:"tokens"`
	SummaryTokens int    `json:"summaryTokens"`
	Summary       string `json:"summary"`
}

// foldInfo is f as the session API shows it; nil when nothing was folded.
func foldInfo(f host.FoldState, at int) *FoldInfo {
	if f.Folds == 0 || at < 0 {
		return nil
	}
	return &FoldInfo{Before: at, Folds: f.Folds, Messages: f.Messages, Tokens: f.Tokens, SummaryTokens: f.SummaryTokens, Summary: f.Summary}
}

// CompactResponse is the answer of POST /api/sessions/{id}/compact.
type CompactResponse struct {
	// Folded messages went into the summary now (0: nothing to fold, the
	// latest turn always stays), Tokens their estimated size; Kept are
	// sent verbatim still.
	Folded        int    `json:"folded"`
	Kept          int    `json:"kept"`
	Tokens        int    `json:"tokens"`
	SummaryTokens int    `json:"summaryTokens"`
	Summary       string `json:"summary"`
	// Usage is the session's totals afterwards: a summary by the model
	// is a model call.
	Usage host.SessionUsage `json:"usage"`
}

// postCompact is POST /api/sessions/{id}/compact, the page's /compact:
// the session's history but its latest turn is folded into the summary
// now. It is checked like a message (the id, both rate limits, a turn
// slot, one thing at a time per session), since it may call the model.
func (s *Server) postCompact(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !validSessionID(id) {
		writeError(w, http.StatusNotFound, "no such session; POST /api/sessions starts one")
		return
	}
	if limited(w, s.addrLim, clientAddr(r), "from this address", writeError) ||
		limited(w, s.sessLim, id, "in this session", writeError) {
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
		writeError(w, http.StatusConflict, "this session is answering a message; compact it after the done event")
		return
	}
	defer s.releaseSession(id)

	ctx, cancel := context.WithTimeout(r.Context(), s.h.TurnTimeout())
	defer cancel()
	stop := context.AfterFunc(s.hardStop, cancel)
	defer stop()
	res, err := s.h.Compact(ctx, id)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			writeError(w, http.StatusGatewayTimeout, "compacting took too long and was stopped; nothing changed, try again")
			return
		}
		s.log.Error("compact a session", "session", id, "err", err)
		storeFailed(w, err, "the session could not be compacted; nothing changed, try again", false)
		return
	}
	out := CompactResponse{Folded: res.Folded, Kept: res.Kept, Tokens: res.Tokens, SummaryTokens: res.SummaryTokens, Summary: res.Summary}
	if out.Usage, err = s.h.SessionUsage(r.Context(), id); err != nil {
		s.log.Error(err.Error()) // the fold is done; the totals show at the next reload
	}
	writeJSON(w, http.StatusOK, out)
}
