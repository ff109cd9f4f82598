package openai

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeProvider is an httptest server speaking the chat-completions API: each
// request is answered by the next reply in line (the last one repeats), and
// every request body is kept.
type fakeProvider struct {
	t       testing.TB
	srv     *httptest.Server
	mu      sync.Mutex
	replies []http.HandlerFunc
	bodies  [][]byte
	headers []http.Header
	paths   []string
}

func newFakeProvider(t testing.TB, replies ...http.HandlerFunc) *fakeProvider {
	f := &fakeProvider{t: t, replies: replies}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		n := len(f.bodies)
		f.bodies = append(f.bodies, body)
		f.headers = append(f.headers, r.Header.Clone())
		f.paths = append(f.paths, r.URL.Path)
		reply := f.replies[min(n, len(f.replies)-1)]
		f.mu.Unlock()
		reply(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// model returns a GLM-like model pointed at the fake, with retries that do
// not wait.
func (f *fakeProvider) model(opts ...Option) *Model {
	cfg := Config{APIKey: "test-key", BaseURL: f.srv.URL + "/api/paas/v4", Model: "glm-4-flash"}
	return New(cfg, append([]Option{WithBackoff(noWait)}, opts...)...)
}

func noWait(int, *APIError) time.Duration { return 0 }

func (f *fakeProvider) requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.bodies)
}

// body returns request i decoded.
func (f *fakeProvider) body(i int) map[string]any {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if i >= len(f.bodies) {
		f.t.Fatalf("request %d not made (%d made)", i, len(f.bodies))
	}
	var m map[string]any
	if err := json.Unmarshal(f.bodies[i], &m); err != nil {
		f.t.Fatalf("request %d body is not JSON: %v\n%s", i, err, f.bodies[i])
	}
	return m
}

// replyJSON answers with status and body.
func replyJSON(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// replySSE answers with each chunk as a server-sent event, then [DONE].
func replySSE(chunks ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fl, _ := w.(http.Flusher)
		for _, c := range chunks {
			fmt.Fprintf(w, "data: %s\n\n", c)
			if fl != nil {
				fl.Flush()
			}
		}
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}
}

// chunk builds a chat.completion.chunk whose choice 0 has the given delta
// (JSON) and finish reason ("" for null).
func chunk(delta, finish string) string {
	fr := "null"
	if finish != "" {
		fr = fmt.Sprintf("%q", finish)
	}
	return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"glm-4-flash","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`, delta, fr)
}

// completion builds a non-streamed answer with the given message (JSON).
func completion(message, finish string) string {
	return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"glm-4-flash","choices":[{"index":0,"message":%s,"finish_reason":%q}],"usage":{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18}}`, message, finish)
}

func mustContain(t *testing.T, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%q\ndoes not contain %q", s, sub)
		}
	}
}

// replyRaw answers 200 with the given event-stream text as it is, so that a
// test can send what replySSE would not: malformed events, odd line endings.
func replyRaw(contentType, raw string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, raw)
	}
}

// endless is a reply that writes head once and then piece again and again
// until the client stops reading or limit bytes are written (so that it
// ends by itself), and counts what it wrote.
type endless struct {
	head, piece string
	limit       int64
	mu          sync.Mutex
	written     int64
}

func (e *endless) reply(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	n, err := io.WriteString(w, e.head)
	e.add(n)
	for err == nil && e.total() < e.limit {
		n, err = io.WriteString(w, e.piece)
		e.add(n)
	}
}

func (e *endless) add(n int) { e.mu.Lock(); e.written += int64(n); e.mu.Unlock() }

func (e *endless) total() int64 { e.mu.Lock(); defer e.mu.Unlock(); return e.written }
