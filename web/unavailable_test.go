package web

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
