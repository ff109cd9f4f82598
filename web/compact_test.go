package web

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/budget"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/model/scripted"
)

// sessionInfo reads GET /api/sessions/{id} whole.
func (e *testEnv) sessionInfo(t *testing.T, id string) SessionInfo {
	t.Helper()
	resp, err := e.ts.Client().Get(e.url("/api/sessions/" + id))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var info SessionInfo
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&info) != nil {
		t.Fatalf("GET session: %s", resp.Status)
	}
	return info
}

// compact posts /compact and decodes a 200's answer.
func (e *testEnv) compact(t *testing.T, id string, hdr ...string) (int, CompactResponse, string) {
	t.Helper()
	resp := e.post(t, "/api/sessions/"+id+"/compact", "", hdr...)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out CompactResponse
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("compact answer %s: %v", b, err)
		}
	}
	return resp.StatusCode, out, string(b)
}

// TestCompactEndpoint: the page's /compact folds all but the latest turn
// with the model, answers what it folded, and the session API then marks
// the place with the summary and counts the summary call in the totals;
// the next turn's request carries the summary and not the folded turns.
func TestCompactEndpoint(t *testing.T) {
	m := &summarizingModel{}
	e := newEnv(t, m, nil)
	id := e.newSession(t)
	if code, out, body := e.compact(t, id); code != http.StatusOK || out.Folded != 0 {
		t.Errorf("compact of an empty session: %d %s; want 200 with nothing folded", code, body)
	}
	for i := range 3 {
		if evs := e.send(t, id, fmt.Sprintf("Where is order A-%d?", 1000+i)).rest(t); names(evs)[len(evs)-1] != "done" {
			t.Fatalf("turn %d: %v", i, names(evs))
		}
	}
	before := e.sessionInfo(t, id)
	if before.Fold != nil || before.Usage == nil || before.Usage.Calls != 3 || before.Usage.InputTokens <= 0 {
		t.Errorf("before compacting: fold %+v usage %+v; want no fold and three calls", before.Fold, before.Usage)
	}

	code, out, body := e.compact(t, id)
	if code != http.StatusOK || out.Folded != 4 || out.Kept != 2 || out.Tokens <= 0 || !strings.Contains(out.Summary, "- summary 1:") || out.SummaryTokens <= 0 {
		t.Fatalf("compact: %d %s; want 4 messages folded into the model's summary, 2 kept", code, body)
	}
	if out.Usage.Calls != 4 || out.Usage.Folds != 1 {
		t.Errorf("compact's session totals %+v; want the summary call counted and one fold", out.Usage)
	}
	info := e.sessionInfo(t, id)
	if len(info.Messages) != 6 {
		t.Errorf("the transcript has %d entries after compacting, want all 6", len(info.Messages))
	}
	f := info.Fold
	if f == nil || f.Before != 4 || f.Messages != 4 || f.Folds != 1 || f.Tokens != out.Tokens || f.Summary != out.Summary || f.SummaryTokens != out.SummaryTokens {
		t.Errorf("GET session fold %+v; want the mark before entry 4 with the compact's figures %+v", f, out)
	}
	if info.Usage == nil || info.Usage.Calls != 4 {
		t.Errorf("GET session usage %+v; want 4 calls", info.Usage)
	}

	e.send(t, id, "And order A-2000?").until(t, "done")
	_, last := m.counts()
	if !strings.Contains(last.System, "- summary 1:") || len(last.Messages) != 3 || strings.Contains(last.Messages[0].Content, "A-1000") {
		t.Errorf("the turn after compacting sent %d messages and system %q; want the summary and the latest turn", len(last.Messages), last.System)
	}
}

// TestCompactChecks: /compact is refused like a message would be: an id
// the server could not have issued, a session that does not exist, a
// cross-site page, a session busy answering, and too many requests.
func TestCompactChecks(t *testing.T) {
	e := newEnv(t, &summarizingModel{}, func(o *envOptions) { o.SessionRate = Rate{PerMinute: 1, Burst: 1} })
	id := e.newSession(t)
	for _, c := range []struct {
		what string
		id   string
		hdr  []string
		code int
		want string
	}{
		{"a bad id", "NOT_AN_ID", nil, http.StatusNotFound, "no such session"},
		{"an unknown session", "w-0123456789abcdef", nil, http.StatusNotFound, "no such session"},
		{"a cross-site page", id, []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden, "cross-origin"},
	} {
		code, _, body := e.compact(t, c.id, c.hdr...)
		if code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s; want %d naming %q", c.what, code, body, c.code, c.want)
		}
	}
	if !e.srv.claimSession(id) {
		t.Fatal("could not claim the session")
	}
	code, _, body := e.compact(t, id)
	e.srv.releaseSession(id)
	if code != http.StatusConflict || !strings.Contains(body, "after the done event") {
		t.Errorf("a busy session: %d %s; want 409", code, body)
	}
	// The cross-site refusal took no token; the busy one took the last.
	if code, _, body := e.compact(t, id); code != http.StatusTooManyRequests || !strings.Contains(body, "too many requests in this session") {
		t.Errorf("past the session's rate: %d %s; want 429", code, body)
	}
}

// TestWebFoldMarked: a fold during a turn is sent to the page with its
// figures and the summary, and the session API then says where the
// model's view begins, so a reload shows the same mark.
func TestWebFoldMarked(t *testing.T) {
	var turns []scripted.Turn
	for i := range 30 {
		turns = append(turns, scripted.Turn{Text: fmt.Sprintf("订单 A-%d 已发货。%s", 1000+i, strings.Repeat("Thank you for waiting. ", 10))})
	}
	e := newEnv(t, scripted.New(turns...), func(o *envOptions) {
		o.Context = host.ContextOptions{Window: 4000, Summarizer: budget.Extractive{}}
	})
	id := e.newSession(t)
	var last FoldEvent
	folds, folded, foldTurn := 0, 0, 0
	for i := range 30 {
		for _, ev := range e.send(t, id, fmt.Sprintf("Where is order A-%d? %s", 1000+i, strings.Repeat("It is late. ", 10))).rest(t) {
			if ev.Name == "fold" {
				ev.decode(t, &last)
				folds++
				folded += last.Messages
				foldTurn = i
				if last.Messages <= 0 || last.Tokens <= last.SummaryTokens || last.Summary == "" || last.KeptTurns <= 0 || last.KeptTurns >= i {
					t.Errorf("turn %d: fold event %+v", i, last)
				}
			}
		}
	}
	if folds == 0 {
		t.Fatal("no fold in 30 turns of a 4000-token window")
	}
	info := e.sessionInfo(t, id)
	f := info.Fold
	if f == nil {
		t.Fatal("GET session has no fold after the turns were folded")
	}
	if f.Folds != int64(folds) || f.Messages != folded || f.Summary != last.Summary || f.SummaryTokens != last.SummaryTokens || f.Tokens <= 0 {
		t.Errorf("GET session fold %+v; want %d folds of %d messages in all, ending with the last event's summary", f, folds, folded)
	}
	// The mark is before the questions still sent verbatim: the last
	// fold, in turn foldTurn, kept KeptTurns of those before it.
	if want := 2 * (foldTurn - last.KeptTurns); f.Before != want {
		t.Errorf("the mark is before entry %d of %d, want %d (%d turns kept)", f.Before, len(info.Messages), want, last.KeptTurns)
	}
	if info.Messages[f.Before].Role != "user" {
		t.Errorf("the entry after the mark is a %s message, want the user's", info.Messages[f.Before].Role)
	}
}
