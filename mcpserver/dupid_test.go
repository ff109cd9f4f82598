package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpserver"
)

// receiveWithin is rawSession.receive bounded by d, so that an answer
// that never comes fails the test with a message instead of hanging it.
func receiveWithin(t *testing.T, r *rawSession, d time.Duration, what string) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		line, _ := r.out.ReadBytes('\n')
		got <- string(line)
	}()
	select {
	case line := <-got:
		return line
	case <-time.After(d):
		t.Fatalf("%s: no answer within %v", what, d)
		return ""
	}
}

// TestDuplicateInFlightIDs: a request reusing the id of one still being
// answered gets an error answer at once, on the SDK path and the direct
// path, and never holds a place in flight: more than MaxInFlight such ids
// used to leave every later request "server busy" for good.
func TestDuplicateInFlightIDs(t *testing.T) {
	for _, direct := range []bool{false, true} {
		t.Run(fmt.Sprintf("direct=%v", direct), func(t *testing.T) {
			release := make(chan struct{})
			var started atomic.Int32
			hold := &agent.Tool{Name: "hold", Description: "Waits.", InputSchema: json.RawMessage(`{"type":"object"}`),
				Execute: func(ctx context.Context, _ json.RawMessage) (any, error) {
					started.Add(1)
					select {
					case <-ctx.Done():
						return nil, ctx.Err()
					case <-release:
						return "done", nil
					}
				}}
			var calls atomic.Int32
			r, _ := directSession(t, &mcpserver.Options{Version: "test", Tools: append(testTools(&calls), hold)}, direct)
			r.handshake()
			const perRound, rounds = 100, 3 // 300 duplicates in all, over MaxInFlight
			for round := range rounds {
				for i := range perRound {
					r.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"r%d-%d","method":"tools/call","params":{"name":"hold","arguments":{}}}`, round, i))
				}
				deadline := time.Now().Add(30 * time.Second)
				for started.Load() < int32((round+1)*perRound) {
					if time.Now().After(deadline) {
						t.Fatalf("round %d: %d held calls started within 30 s", round, started.Load())
					}
					time.Sleep(time.Millisecond)
				}
				for i := range perRound {
					id := fmt.Sprintf("r%d-%d", round, i)
					r.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"ping"}`)
					line := receiveWithin(t, r, 10*time.Second, "a ping reusing the id "+id+" of a held call")
					if !strings.Contains(line, `"id":"`+id+`"`) || !strings.Contains(line, `"code":-32600`) || !strings.Contains(line, "still being answered") {
						t.Fatalf("a ping reusing the id %s of a held call: %s", id, line)
					}
				}
				for range perRound {
					release <- struct{}{}
				}
				for range perRound {
					if line := receiveWithin(t, r, 10*time.Second, "a held call"); !strings.Contains(line, `"text":"done"`) {
						t.Fatalf("a held call: %s", line)
					}
				}
			}
			r.send(`{"jsonrpc":"2.0","id":"after","method":"tools/list"}`)
			if line := receiveWithin(t, r, 10*time.Second, "tools/list after the duplicates"); !strings.Contains(line, `"id":"after"`) || !strings.Contains(line, `"tools"`) {
				t.Fatalf("tools/list after %d duplicate ids: %s", perRound*rounds, line)
			}
			// A batch reusing a held id: that element gets the error, the
			// other is answered.
			r.send(`{"jsonrpc":"2.0","id":"h","method":"tools/call","params":{"name":"hold","arguments":{}}}`)
			for started.Load() < int32(rounds*perRound+1) {
				time.Sleep(time.Millisecond)
			}
			r.send(`[{"jsonrpc":"2.0","id":"h","method":"ping"},{"jsonrpc":"2.0","id":"p","method":"ping"}]`)
			line := receiveWithin(t, r, 10*time.Second, "a batch reusing a held id")
			if !strings.Contains(line, `{"jsonrpc":"2.0","id":"h","error":{"code":-32600`) || !strings.Contains(line, `"id":"p","result":{}`) {
				t.Fatalf("a batch reusing a held id: %s", line)
			}
			release <- struct{}{}
			receiveWithin(t, r, 10*time.Second, "the last held call")
		})
	}
}

// TestLoneSurrogateIDs: string ids with lone surrogates were answered as
// "\ufffd", and two distinct ones in a batch collided. They are refused
// (id null, since they cannot be echoed), on stdio and over HTTP, and a
// well-formed pair is echoed byte for byte.
func TestLoneSurrogateIDs(t *testing.T) {
	r, _ := directSession(t, &mcpserver.Options{Version: "test"}, false)
	r.handshake()
	r.send(`[{"jsonrpc":"2.0","id":"\ud800","method":"ping"},{"jsonrpc":"2.0","id":"\udc00","method":"ping"},{"jsonrpc":"2.0","id":"\ud83d\ude00","method":"ping"}]`)
	line := receiveWithin(t, r, 10*time.Second, "a batch with lone surrogate ids")
	if strings.Count(line, `"id":null,"error":{"code":-32600`) != 2 || !strings.Contains(line, "lone UTF-16 surrogate") ||
		strings.Contains(line, `\ufffd`) || strings.Contains(line, "\ufffd") || !strings.Contains(line, `"result":{}`) {
		t.Fatalf("batch with ids \\ud800, \\udc00 and a pair: %s", line)
	}
	r.send(`{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`)
	if line := receiveWithin(t, r, 10*time.Second, "a ping with id \\ud800"); !strings.Contains(line, `"id":null`) || !strings.Contains(line, "lone UTF-16 surrogate") {
		t.Fatalf("ping with id \\ud800: %s", line)
	}

	f := startHTTP(t, "")
	for body, want := range map[string]string{
		strings.Replace(initializeBody, `"id":1`, `"id":"\ud800"`, 1):                                    "lone UTF-16 surrogate",
		"[" + initializeBody + "," + strings.Replace(initializeBody, `"id":1`, `"id":"\udc00"`, 1) + "]": "lone UTF-16 surrogate",
		`[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","id":7,"method":"ping"}]`:            "the batch uses the id 7 twice",
		`[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","id":"\u0061","method":"ping"}]`:   `the batch uses the id \"\\u0061\" twice`,
	} {
		req, _ := http.NewRequest(http.MethodPost, f.url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(string(got), `"code":-32600`) || !strings.Contains(string(got), want) {
			t.Errorf("POST %.60s…: status %d, body %s; want 400 with a -32600 error saying %q", body, res.StatusCode, got, want)
		}
	}
}
