package web

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/agentapp/agentapp/model/openai"
)

// lockedBuffer is a bytes.Buffer the server's goroutines can share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// echoingProvider is an OpenAI-compatible provider that refuses every
// request with a 401 quoting the key it was sent, as OpenAI's own message
// does, and its internal address.
func echoingProvider(t *testing.T) *httptest.Server {
	p := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{
			"message": "Incorrect API key provided: " + key + " (sent to http://" + r.Host + "/v1, Authorization: Bearer " + key + ")",
			"type":    "invalid_request_error", "code": "invalid_api_key"}})
	}))
	t.Cleanup(p.Close)
	return p
}

// TestProviderErrorsAreRedacted: a provider that echoes the key in its 401
// leaks neither the key nor its address to the chat API's error event, the
// /v1 error bodies (plain and streamed) or the trace; the web user gets an
// error id, and the log has the details under that id, the key redacted.
func TestProviderErrorsAreRedacted(t *testing.T) {
	const key = "sk-live-Zx81verysecretkey0042"
	p := echoingProvider(t)
	providerHost := strings.TrimPrefix(p.URL, "http://")
	logs, traces := &lockedBuffer{}, &lockedBuffer{}
	m := openai.New(openai.Config{APIKey: key, BaseURL: p.URL + "/v1", Model: "gpt-x"})
	e := newEnv(t, m, func(o *envOptions) {
		o.Logger = slog.New(slog.NewTextHandler(logs, nil))
		o.Trace = traces
		o.Secrets = []string{key}
	})
	var seen []string

	id := e.newSession(t)
	evs := e.send(t, id, "你好").rest(t)
	var errEv ErrorEvent
	for _, ev := range evs {
		if ev.Name == "error" {
			ev.decode(t, &errEv)
		}
	}
	seen = append(seen, errEv.Message)

	resp := e.post(t, "/v1/chat/completions", `{"messages":[{"role":"user","content":"你好"}]}`)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("/v1: %d %s, want 502", resp.StatusCode, b)
	}
	seen = append(seen, string(b))
	resp = e.post(t, "/v1/chat/completions", `{"stream":true,"messages":[{"role":"user","content":"你好"}]}`)
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	seen = append(seen, string(b))

	idPattern := regexp.MustCompile(`error id (err-[0-9a-f]{12})`)
	for i, text := range seen {
		for _, leak := range []string{key, "verysecret", providerHost} {
			if strings.Contains(text, leak) {
				t.Errorf("answer %d shows %q to the web user: %s", i, leak, text)
			}
		}
		m := idPattern.FindStringSubmatch(text)
		if m == nil {
			t.Errorf("answer %d has no error id: %s", i, text)
			continue
		}
		if !strings.Contains(logs.String(), m[1]) {
			t.Errorf("the log has no record of error %s:\n%s", m[1], logs.String())
		}
	}
	for name, out := range map[string]string{"log": logs.String(), "trace": traces.String()} {
		if strings.Contains(out, key) || strings.Contains(out, "verysecret") {
			t.Errorf("the %s holds the key:\n%s", name, out)
		}
	}
	if !strings.Contains(logs.String(), "Incorrect API key provided: [redacted]") {
		t.Errorf("the log lacks the provider's (redacted) message:\n%s", logs.String())
	}
	if !strings.Contains(traces.String(), "done error") {
		t.Errorf("the trace has no failed turn:\n%s", traces.String())
	}
}
