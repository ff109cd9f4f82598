package web

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/model/offline"
	"github.com/agentapp/agentapp/store"
)

// TestStoreFailedAnswers503 (issue 43, item 10): a database outage is
// answered 503 with Retry-After and the one outage message, in JSON and
// on the operator's page; any other failure stays a 500 with its message.
func TestStoreFailedAnswers503(t *testing.T) {
	down := store.MarkUnavailable(errors.New("FATAL: terminating connection due to administrator command (SQLSTATE 57P01)"))
	for _, plain := range []bool{false, true} {
		w := httptest.NewRecorder()
		storeFailed(w, down, "the queue could not be read; try again", plain)
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "5" ||
			!strings.Contains(w.Body.String(), store.UnavailableMessage) || strings.Contains(w.Body.String(), "57P01") {
			t.Errorf("an outage (plain %v): %d Retry-After %q %q", plain, w.Code, w.Header().Get("Retry-After"), w.Body.String())
		}
	}
	w := httptest.NewRecorder()
	storeFailed(w, errors.New("no such table"), "the queue could not be read; try again", false)
	if w.Code != http.StatusInternalServerError || w.Header().Get("Retry-After") != "" || !strings.Contains(w.Body.String(), "the queue could not be read") {
		t.Errorf("another failure: %d %q", w.Code, w.Body.String())
	}
}

// TestReadyzChecksWrites (issue 43, item 10): /readyz writes, at most every
// few seconds: with every write failing (a full disk, simulated by a
// trigger that fails writes of meta) it says not ready, naming the cause,
// where a ping alone said ready.
func TestReadyzChecksWrites(t *testing.T) {
	e := newEnv(t, offline.New(offlineDemo), nil)
	ready := func() (int, Readiness) {
		resp, err := e.ts.Client().Get(e.url("/readyz"))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var rd Readiness
		json.NewDecoder(resp.Body).Decode(&rd)
		return resp.StatusCode, rd
	}
	if code, rd := ready(); code != http.StatusOK || !rd.Ready {
		t.Fatalf("before: %d %+v", code, rd)
	}
	if _, err := e.srv.h.Store().DB.Exec(`CREATE TRIGGER full_disk BEFORE UPDATE ON meta BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END`); err != nil {
		t.Fatal(err)
	}
	e.srv.writes.mu.Lock()
	e.srv.writes.at = time.Time{} // the next /readyz checks again
	e.srv.writes.mu.Unlock()
	code, rd := ready()
	if code != http.StatusServiceUnavailable || rd.Ready || !strings.Contains(rd.Database, "cannot be written") || !strings.Contains(rd.Database, "database or disk is full") {
		t.Errorf("with every write failing: %d %+v; want 503, not ready, naming the cause", code, rd)
	}
}
