package otlp_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// hangingServer is a collector that holds every request until block is
// closed.
func hangingServer(t *testing.T, block chan struct{}) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
