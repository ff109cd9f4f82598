package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpserver"
)

// batchBody is a JSON-RPC batch of n tools/call of tool.
func batchBody(n int, tool string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, i+1, tool)
	}
	b.WriteByte(']')
	return b.String()
}

// A batch is bounded on stateless HTTP with a token and no version header
// (2025-03-26, where batches are allowed): 30,000 calls in one request
// are refused whole, before any runs; MaxBatchItems are served; and
// batches beyond MaxBatchItemsInFlight at once are answered 503.
func TestHTTPBatchBounds(t *testing.T) {
	var calls atomic.Int64
	release := make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(free)
	tools := []*agent.Tool{
		{Name: "count", Description: "Counts.", Execute: func(context.Context, json.RawMessage) (any, error) {
			calls.Add(1)
			return "ok", nil
		}},
		{Name: "wait", Description: "Waits.", Execute: func(ctx context.Context, _ json.RawMessage) (any, error) {
			calls.Add(1)
			select {
			case <-release:
			case <-ctx.Done():
			}
			return "ok", nil
		}},
	}
	srv := mcpserver.New(&mcpserver.Options{Version: "test", Tools: tools})
	ts := httptest.NewServer(newHTTPHandler(t, srv, &mcpserver.HTTPOptions{Stateless: true, Token: "s3cret-token-for-tests"}))
	t.Cleanup(ts.Close)
	post := func(body string) (int, http.Header, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+mcpserver.HTTPPath, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer s3cret-token-for-tests")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Errorf("POST: %v", err)
			return 0, nil, ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(b)
	}

	big := batchBody(30000, "count")
	if len(big) >= 4<<20 {
		t.Fatalf("the batch is %d bytes, over the body limit", len(big))
	}
	code, _, body := post(big)
	if code != http.StatusBadRequest || !strings.Contains(body, fmt.Sprintf("at most %d", mcpserver.MaxBatchItems)) || !strings.Contains(body, "30000") {
		t.Errorf("a 30,000-call batch: %d %.300s; want 400 naming the bound", code, body)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("a refused batch ran %d calls", n)
	}

	code, _, body = post(batchBody(mcpserver.MaxBatchItems, "count"))
	var answers []json.RawMessage
	if code != http.StatusOK || json.Unmarshal([]byte(body), &answers) != nil || len(answers) != mcpserver.MaxBatchItems {
		t.Fatalf("a batch of %d: %d, %d answers, %.300s", mcpserver.MaxBatchItems, code, len(answers), body)
	}
	calls.Store(0)

	// Fill the in-flight budget with waiting batches; one more is refused.
	full := mcpserver.MaxBatchItemsInFlight / mcpserver.MaxBatchItems
	var wg sync.WaitGroup
	for range full {
		wg.Go(func() {
			if code, _, body := post(batchBody(mcpserver.MaxBatchItems, "wait")); code != http.StatusOK {
				t.Errorf("a waiting batch: %d %.200s", code, body)
			}
		})
	}
	deadline := time.Now().Add(20 * time.Second)
	for calls.Load() < int64(mcpserver.MaxBatchItemsInFlight) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := calls.Load(); n < int64(mcpserver.MaxBatchItemsInFlight) {
		t.Fatalf("%d of %d waiting calls started", n, mcpserver.MaxBatchItemsInFlight)
	}
	code, hdr, body := post(batchBody(2, "count"))
	if code != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" {
		t.Errorf("a batch over the in-flight budget: %d Retry-After=%q %.200s; want 503 with Retry-After", code, hdr.Get("Retry-After"), body)
	}
	// A single request is not a batch and is served meanwhile.
	if code, _, body := post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"count","arguments":{}}}`); code != http.StatusOK {
		t.Errorf("a single call while batches wait: %d %.200s", code, body)
	}
	free()
	wg.Wait()
	if code, _, body := post(batchBody(2, "count")); code != http.StatusOK {
		t.Errorf("a batch after the others ended: %d %.200s", code, body)
	}
}

// On stdio a batch over MaxBatchItems is answered with one error, and
// none of its calls runs.
func TestStdioBatchBound(t *testing.T) {
	var calls atomic.Int32
	r, _ := directSession(t, &mcpserver.Options{Version: "test", Tools: testTools(&calls)}, true)
	r.handshake()
	r.send(strings.ReplaceAll(batchBody(mcpserver.MaxBatchItems+1, "echo"), `"arguments":{}`, `"arguments":{"n":1}`))
	line := receiveWithin(t, r, 10*time.Second, "an over-long batch")
	if !strings.Contains(line, fmt.Sprintf("at most %d", mcpserver.MaxBatchItems)) || strings.Count(line, `"jsonrpc"`) != 1 {
		t.Errorf("an over-long batch: %.300s; want one error naming the bound", line)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("a refused batch ran %d calls", n)
	}
	r.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	if line := receiveWithin(t, r, 10*time.Second, "a ping after"); !strings.Contains(line, `"after"`) {
		t.Errorf("the ping after the batch: %.300s", line)
	}
}
