package mcpserver

import (
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/agentapp/agentapp/internal/jsonscan"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// JSON-RPC batches (protocols before 2025-06-18 only) are bounded twice:
// one batch holds at most MaxBatchItems messages, and the batches of all
// HTTP requests being served hold at most MaxBatchItemsInFlight messages
// together. A batch under the 4 MiB body limit can otherwise carry tens of
// thousands of calls, each a goroutine and a decoded request, and a few
// such requests at once took the server to gigabytes.
const (
	// MaxBatchItems bounds the messages of one batch, as MaxInFlight
	// bounds the requests of one stdio connection.
	MaxBatchItems = MaxInFlight
	// MaxBatchItemsInFlight bounds the messages of the HTTP batches being
	// served at once; a batch that would go over it is answered 503.
	MaxBatchItemsInFlight = 4 * MaxBatchItems
)

// batchItems returns the number of messages in body if it is a batch (a
// JSON array; body is valid JSON), else 0.
func batchItems(body []byte) int {
	if !isBatch(body) {
		return 0
	}
	n := 0
	jsonscan.ForEachElement(body[jsonscan.SkipSpace(body, 0):], func([]byte) { n++ })
	return n
}

// batchTooLong is the JSON-RPC error answer to a batch of n messages, over
// MaxBatchItems.
func batchTooLong(n int) []byte {
	return appendErrorResponse(nil, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, fmt.Sprintf(
		"invalid request: the batch holds %d messages; at most %d are allowed in one batch (send the rest in further requests)", n, MaxBatchItems))
}

// batchBudget counts the messages of the HTTP batches in progress.
type batchBudget struct{ n atomic.Int64 }

// admit checks the batch in body (nil: not valid JSON) against both bounds
// and, when it may be served, returns the function that gives its place
// back; otherwise it answers the request itself and returns false.
func (b *batchBudget) admit(w http.ResponseWriter, body []byte) (release func(), ok bool) {
	n := batchItems(body)
	if n == 0 {
		return func() {}, true
	}
	if n > MaxBatchItems {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(batchTooLong(n))
		return nil, false
	}
	if b.n.Add(int64(n)) > MaxBatchItemsInFlight {
		b.n.Add(-int64(n))
		w.Header().Set("Retry-After", strconv.Itoa(1))
		refuse(w, fmt.Sprintf("Service Unavailable: batches of %d messages are being served already; try again shortly or send single requests", MaxBatchItemsInFlight), http.StatusServiceUnavailable)
		return nil, false
	}
	return func() { b.n.Add(-int64(n)) }, true
}
