package web

import (
	"net/http"
	"strconv"

	"github.com/agentapp/agentapp/store"
)

// storeFailed answers a request whose database call failed with err: a
// database outage is 503 with Retry-After and the one outage message (the
// same request may work shortly), anything else 500 with msg. plain
// answers text (the operator's page) instead of the JSON error body.
func storeFailed(w http.ResponseWriter, err error, msg string, plain bool) {
	code := http.StatusInternalServerError
	if store.IsUnavailable(err) {
		code, msg = http.StatusServiceUnavailable, store.UnavailableMessage
		w.Header().Set("Retry-After", strconv.Itoa(int(store.RetryAfter.Seconds())))
	}
	if plain {
		http.Error(w, msg, code)
		return
	}
	writeError(w, code, msg)
}
