package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/model"
)

// summarizingModel answers every question with a fixed text and writes a
// short summary when the host asks it to fold older turns, counting those
// calls: the model call the /v1 summary cache saves.
type summarizingModel struct {
	mu        sync.Mutex
	summaries int
	answers   []*model.Request
}

func (m *summarizingModel) Name() string { return "summarizing-test" }

func (m *summarizingModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	return m.Stream(ctx, req, nil)
}

func (m *summarizingModel) Stream(_ context.Context, req *model.Request, onText func(string)) (*model.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	text := "Your order is on its way. " + strings.Repeat("Thank you for waiting. ", 15)
	if strings.HasPrefix(req.System, "You fold the older part of a conversation") {
		m.summaries++
		text = fmt.Sprintf("- summary %d: the user asked about orders", m.summaries)
	} else {
		m.answers = append(m.answers, req)
	}
	if onText != nil {
		onText(text)
	}
	return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: text}}, nil
}

func (m *summarizingModel) counts() (summaries int, last *model.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.summaries, m.answers[len(m.answers)-1]
}

// TestV1ReusesSummaries: /v1 is stateless, so a client sends the whole
// conversation each time. Once its history outgrows the window the host
// folds it with a model call; the next request, the same history and one
// more turn, reuses that summary from the cache instead of asking the
// model again, while the prefix's rest still fits. When it no longer fits,
// the summary is extended once more, from the cached one.
func TestV1ReusesSummaries(t *testing.T) {
	m := &summarizingModel{}
	e := newEnv(t, m, func(o *envOptions) { o.Context = host.ContextOptions{Window: 4000} })
	var conv []map[string]string
	ask := func(i int) string {
		t.Helper()
		conv = append(conv, map[string]string{"role": "user", "content": fmt.Sprintf("Where is order A-%d? %s", 1000+i, strings.Repeat("It is late. ", 20))})
		body, _ := json.Marshal(map[string]any{"messages": conv})
		resp := e.post(t, "/v1/chat/completions", string(body))
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var out oaCompletion
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &out) != nil || len(out.Choices) != 1 {
			t.Fatalf("request %d: %s %s", i, resp.Status, b)
		}
		answer := out.Choices[0].Message.Content
		conv = append(conv, map[string]string{"role": "assistant", "content": answer})
		return answer
	}
	// Grow the conversation until its history is folded once.
	i := 0
	for ; i < 60; i++ {
		ask(i)
		if n, _ := m.counts(); n > 0 {
			break
		}
	}
	n, last := m.counts()
	if n != 1 {
		t.Fatalf("after %d requests %d summary calls; want the history folded once", i+1, n)
	}
	if !strings.Contains(last.System, "- summary 1:") {
		t.Fatalf("the answer's request does not carry the summary: system %q", last.System)
	}
	if e.srv.summaries.Len() == 0 {
		t.Fatal("the summary was not kept")
	}
	// One more turn: the folded prefix is the same, the rest still fits.
	ask(i + 1)
	n, last = m.counts()
	if n != 1 {
		t.Fatalf("the request with one more turn made %d summary calls in all, want still 1: the folded prefix was summarized again", n)
	}
	if !strings.Contains(last.System, "- summary 1:") || strings.Contains(last.System, "summary 2") {
		t.Errorf("the answer after a cache hit saw system %q; want the cached summary", last.System)
	}
	if first := last.Messages[0].Content; strings.Contains(first, "A-1000?") {
		t.Errorf("the model saw the folded first question again: %q", first)
	}
	// Growing on, the history outgrows the window again: one new
	// summary, which extends the cached one.
	for j := i + 2; j < i+60; j++ {
		ask(j)
		if n, _ = m.counts(); n > 1 {
			break
		}
	}
	if n != 2 {
		t.Errorf("the history grew by 60 turns with %d summary calls; want a second fold", n)
	}
}

// TestSummaryLRUBound: the cache keeps at most its size, dropping the
// least recently used.
func TestSummaryLRUBound(t *testing.T) {
	c := newSummaryLRU(3)
	for _, k := range []string{"a", "b", "c"} {
		c.Put(k, "summary of "+k)
	}
	if _, ok := c.Get("a"); !ok { // a is now the most recent
		t.Fatal("a is missing")
	}
	c.Put("d", "summary of d")
	if _, ok := c.Get("b"); ok {
		t.Error("b, the least recently used, was kept past the bound")
	}
	for _, k := range []string{"a", "c", "d"} {
		if s, ok := c.Get(k); !ok || s != "summary of "+k {
			t.Errorf("%s: %q %v", k, s, ok)
		}
	}
	if c.Len() != 3 {
		t.Errorf("%d entries, want 3", c.Len())
	}
}
