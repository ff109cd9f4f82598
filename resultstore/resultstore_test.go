package resultstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/budget"
)

var est = budget.NewEstimator(budget.FamilyO200k)

// bigResult is about 3 MB of lines mixing Chinese, English, JSON and
// numbers, the shape of a large log or query result.
func bigResult() string {
	var b strings.Builder
	for i := 0; b.Len() < 3<<20; i++ {
		fmt.Fprintf(&b, `{"row":%d,"订单":"A-%d","状态":"已发货 shipped","备注":"预计三天内送达，请留意短信通知。"}`+"\n", i, 100000+i)
	}
	return b.String()
}

func TestLimits(t *testing.T) {
	l := Limits{Default: 1000, PerServer: map[string]int{"github": 5000, "tiny": 10}}
	if l.For("github") != 5000 || l.For("other") != 1000 || l.For("tiny") != minMaxTokens {
		t.Errorf("For: %d %d %d", l.For("github"), l.For("other"), l.For("tiny"))
	}
	if (Limits{}).For("x") != DefaultMaxTokens {
		t.Error("the zero Limits must give DefaultMaxTokens")
	}
}

var nextRE = regexp.MustCompile(`readToolResult \{"id":"(tr_[0-9a-f]+)","offset":(\d+)\}`)

// TestCutAndReadBack cuts a 3 MB result and reads all of it back through
// the tool: the head is within the cap, ends at a line break, and the
// pages put together are the whole result byte for byte.
func TestCutAndReadBack(t *testing.T) {
	ctx := agent.WithSession(context.Background(), "s1")
	st := NewMemory(nil)
	c := &Cutter{Store: st, Estimator: est}
	text := bigResult()
	got := c.Apply(ctx, "s1", "db", "query", text)
	if !got.Cut || got.ID == "" || got.StoreErr != nil || got.Bytes != len(text) {
		t.Fatalf("Apply = cut %v id %q err %v bytes %d", got.Cut, got.ID, got.StoreErr, got.Bytes)
	}
	if n := est.Text(got.Text); n > DefaultMaxTokens {
		t.Errorf("the model sees %d tokens, over the cap %d", n, DefaultMaxTokens)
	}
	if got.Shown < len(text)/100 || text[got.Shown-1] != '\n' || !strings.HasPrefix(got.Text, text[:got.Shown]) {
		t.Errorf("head of %d bytes does not end at a line break or is not the text's head", got.Shown)
	}
	if !strings.Contains(got.Text, fmt.Sprintf("the whole is %d bytes", len(text))) || !strings.Contains(got.Notice("query"), got.ID) {
		t.Errorf("the note or the notice does not say the size and the id:\n%s\n%s", got.Text[got.Shown:], got.Notice("query"))
	}
	m := nextRE.FindStringSubmatch(got.Text)
	if m == nil || m[1] != got.ID || m[2] != strconv.Itoa(got.Shown) {
		t.Fatalf("the note has no readable handle: %q", got.Text[got.Shown:])
	}
	tool := NewReadTool(st, &ReadOptions{PageTokens: 50_000, Estimator: est})
	var whole strings.Builder
	whole.WriteString(text[:got.Shown])
	pageRE := regexp.MustCompile(`\n\[Result (tr_[0-9a-f]+), bytes (\d+)–(\d+) of (\d+)`)
	for pages := 0; ; pages++ {
		if pages > 200 {
			t.Fatal("more than 200 pages")
		}
		args := fmt.Sprintf(`{"id":%q,"offset":%s}`, m[1], m[2])
		if err := tool.CheckArgs(json.RawMessage(args)); err != nil {
			t.Fatalf("the handle from the note fails the tool's own schema: %v", err)
		}
		out, err := tool.Execute(ctx, json.RawMessage(args))
		if err != nil {
			t.Fatal(err)
		}
		p := out.(string)
		loc := pageRE.FindStringSubmatchIndex(p)
		if loc == nil {
			t.Fatalf("page without its position line: %q", p[max(0, len(p)-200):])
		}
		start, _ := strconv.Atoi(p[loc[4]:loc[5]])
		end, _ := strconv.Atoi(p[loc[6]:loc[7]])
		if body := p[:loc[0]+1]; body != text[start:end] {
			t.Fatalf("page %d–%d is not that part of the result", start, end)
		}
		if n := est.Text(p); n > 50_000+100 {
			t.Fatalf("a page of %d tokens, over the page size", n)
		}
		whole.WriteString(p[:loc[0]+1])
		if m = nextRE.FindStringSubmatch(p); m == nil {
			if !strings.Contains(p, "the end.") {
				t.Fatalf("last page does not say it is the end: %q", p[loc[0]:])
			}
			break
		}
	}
	if whole.String() != text {
		t.Error("the pages together are not the whole result")
	}
}

func TestCutSmallAndNoStore(t *testing.T) {
	ctx := context.Background()
	c := &Cutter{Estimator: est, Limits: Limits{Default: 1000}}
	if got := c.Apply(ctx, "s", "", "t", "short"); got.Cut || got.Text != "short" {
		t.Errorf("a short result changed: %+v", got)
	}
	// Digits cost the most per byte; a result of 450 digits and commas
	// is over a 1000-token cap although it is only 900 bytes.
	digits := strings.Repeat("7,", 450)
	if got := c.Apply(ctx, "s", "", "t", digits); !got.Cut {
		t.Errorf("900 bytes of digits (%d tokens) not cut at 1000", est.Text(digits))
	}
	got := c.Apply(ctx, "s", "", "t", strings.Repeat("line of text\n", 2000))
	if !got.Cut || got.ID != "" || !strings.Contains(got.Text, "cannot be read") || !strings.Contains(got.Notice("t"), "cannot read the rest") {
		t.Errorf("without a store the note must say the rest is lost: %+v", got.Notice("t"))
	}
}

func TestCutHostileText(t *testing.T) {
	ctx := context.Background()
	c := &Cutter{Store: NewMemory(nil), Estimator: est, Limits: Limits{Default: 300}}
	for name, text := range map[string]string{
		"invalid UTF-8": strings.Repeat("中\xff\xfe文\x80", 3000),
		"controls":      strings.Repeat("\x1b[31mred\x1b[0m\x00\x07", 3000),
		"one long line": strings.Repeat("字", 100000),
		"4-byte runes":  strings.Repeat("😀𠀀", 20000),
	} {
		got := c.Apply(ctx, "s", "x", "t", text)
		if !got.Cut || got.ID == "" {
			t.Errorf("%s: not cut or not stored", name)
			continue
		}
		if !utf8.ValidString(got.Text) {
			t.Errorf("%s: the model's text is not valid UTF-8", name)
		}
		if got.Shown < len(text) && got.Shown > 0 && !utf8.RuneStart(text[got.Shown]) && utf8.ValidString(text) {
			t.Errorf("%s: cut inside a character at %d", name, got.Shown)
		}
		if n := est.Text(got.Text); n > 300 {
			t.Errorf("%s: %d tokens over the cap of 300", name, n)
		}
		r, err := c.Store.Get(ctx, "s", got.ID)
		if err != nil || r.Text != text {
			t.Errorf("%s: the stored whole differs (err %v)", name, err)
		}
	}
}

func TestRuneStart(t *testing.T) {
	s := "a中😀\xffb"
	for n := 0; n <= len(s)+2; n++ {
		k := runeStart(s, n)
		if k > n || (k < len(s) && !utf8.RuneStart(s[k])) {
			t.Errorf("runeStart(%d) = %d", n, k)
		}
	}
}

func TestReadToolErrors(t *testing.T) {
	st := NewMemory(nil)
	ctx := agent.WithSession(context.Background(), "mine")
	id, err := st.Put(ctx, Result{Session: "mine", Tool: "t", Text: "0123456789"})
	if err != nil {
		t.Fatal(err)
	}
	tool := NewReadTool(st, nil)
	run := func(ctx context.Context, args string) (string, error) {
		if err := tool.CheckArgs(json.RawMessage(args)); err != nil {
			return "", err
		}
		out, err := tool.Execute(ctx, json.RawMessage(args))
		s, _ := out.(string)
		return s, err
	}
	for _, tc := range []struct {
		ctx       context.Context
		args      string
		want      string
		wantError bool
	}{
		{ctx, `{"id":"tr_000000000000","offset":0}`, "no stored result \"tr_000000000000\"", true},
		{agent.WithSession(context.Background(), "other"), fmt.Sprintf(`{"id":%q,"offset":0}`, id), "no stored result", true},
		{ctx, fmt.Sprintf(`{"id":%q,"offset":99}`, id), "past the end of result " + id + ", which is 10 bytes", false},
		{ctx, fmt.Sprintf(`{"id":%q,"offset":10}`, id), "nothing more to read", false},
		{ctx, fmt.Sprintf(`{"id":%q,"offset":-1}`, id), "minimum", true},
		{ctx, fmt.Sprintf(`{"id":%q,"offset":1.5}`, id), "integer", true},
		{ctx, fmt.Sprintf(`{"id":%q}`, id), "offset", true},
		{ctx, fmt.Sprintf(`{"id":%q,"offset":2,"limit":3}`, id), "234\n[Result " + id + ", bytes 2–5 of 10. Next: readToolResult {\"id\":\"" + id + "\",\"offset\":5}]", false},
		{ctx, fmt.Sprintf(`{"id":%q,"offset":8}`, id), "89\n[Result " + id + ", bytes 8–10 of 10: the end.]", false},
	} {
		out, err := run(tc.ctx, tc.args)
		got := out
		if err != nil {
			got = err.Error()
		}
		if (err != nil) != tc.wantError || !strings.Contains(got, tc.want) {
			t.Errorf("%s: got %q (error %v), want %q", tc.args, got, err != nil, tc.want)
		}
	}
	// A limit inside a character moves back to its start, and a page
	// always moves forward.
	id2, _ := st.Put(ctx, Result{Session: "mine", Text: "中文"})
	out, err := run(ctx, fmt.Sprintf(`{"id":%q,"offset":1,"limit":1}`, id2))
	if err != nil || !strings.HasPrefix(out, "中\n") {
		t.Errorf("page inside a character: %q, %v", out, err)
	}
}

func TestMemoryBounds(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	st := NewMemory(&MemoryOptions{MaxSessionBytes: 100, MaxSessionResults: 3, MaxSessions: 2, MaxAge: time.Hour, Now: func() time.Time { return now }})
	if _, err := st.Put(ctx, Result{Session: "a", Text: strings.Repeat("x", 101)}); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "101 bytes") {
		t.Errorf("an oversize result: %v", err)
	}
	var ids []string
	for i := range 4 {
		id, err := st.Put(ctx, Result{Session: "a", Text: strings.Repeat("x", 10+i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if _, err := st.Get(ctx, "a", ids[0]); !errors.Is(err, ErrNotFound) {
		t.Errorf("the oldest of 4 results with a cap of 3 is still there: %v", err)
	}
	if _, err := st.Get(ctx, "a", ids[3]); err != nil {
		t.Errorf("the newest is gone: %v", err)
	}
	// Bytes: 60 more pushes the older ones out.
	big, _ := st.Put(ctx, Result{Session: "a", Text: strings.Repeat("y", 60)})
	if _, n, b := st.Stats(); b > 100 || n > 3 {
		t.Errorf("session over its caps: %d results, %d bytes", n, b)
	}
	// Age.
	now = now.Add(2 * time.Hour)
	if _, err := st.Get(ctx, "a", big); !errors.Is(err, ErrNotFound) {
		t.Errorf("a result older than MaxAge is still served: %v", err)
	}
	_ = st.Prune(ctx)
	if s, n, _ := st.Stats(); s != 0 || n != 0 {
		t.Errorf("after Prune: %d sessions, %d results", s, n)
	}
	// Sessions: the least recently used goes.
	idA, _ := st.Put(ctx, Result{Session: "a", Text: "a"})
	now = now.Add(time.Minute)
	_, _ = st.Put(ctx, Result{Session: "b", Text: "b"})
	now = now.Add(time.Minute)
	_, _ = st.Get(ctx, "a", idA) // a is now more recent than b
	now = now.Add(time.Minute)
	_, _ = st.Put(ctx, Result{Session: "c", Text: "c"})
	if _, err := st.Get(ctx, "a", idA); err != nil {
		t.Errorf("the recently used session was dropped: %v", err)
	}
	if s, _, _ := st.Stats(); s != 2 {
		t.Errorf("%d sessions, want 2", s)
	}
	st.DropSession("a")
	if _, err := st.Get(ctx, "a", idA); !errors.Is(err, ErrNotFound) {
		t.Error("DropSession")
	}
}

func TestMemoryConcurrent(t *testing.T) {
	st := NewMemory(&MemoryOptions{MaxSessions: 4, MaxSessionResults: 5})
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				s := fmt.Sprintf("s%d", (g+i)%6)
				id, err := st.Put(ctx, Result{Session: s, Text: "x"})
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = st.Get(ctx, s, id)
			}
		}()
	}
	wg.Wait()
	if s, n, _ := st.Stats(); s > 4 || n > 20 {
		t.Errorf("%d sessions, %d results over the caps", s, n)
	}
}

func BenchmarkCut3MB(b *testing.B) {
	text := bigResult()
	c := &Cutter{Store: NewMemory(nil), Estimator: est}
	ctx := context.Background()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		c.Apply(ctx, "s", "", "t", text)
	}
}

// TestPageTokensFor: a page of a server's result stays within what
// PageTokensFor gives that server; Memory.HasResults sees the result.
func TestPageTokensFor(t *testing.T) {
	ctx := agent.WithSession(context.Background(), "s")
	st := NewMemory(nil)
	text := bigResult()
	id, err := st.Put(ctx, Result{Session: "s", Server: "small", Text: text})
	if err != nil {
		t.Fatal(err)
	}
	if has, _ := st.HasResults(ctx, "s"); !has {
		t.Error("HasResults is false for a session with a result")
	}
	if has, _ := st.HasResults(ctx, "other"); has {
		t.Error("HasResults is true for a session without results")
	}
	tool := NewReadTool(st, &ReadOptions{Estimator: est, PageTokensFor: func(server string) int {
		if server == "small" {
			return 500
		}
		return 10_000
	}})
	out, err := tool.Execute(ctx, json.RawMessage(fmt.Sprintf(`{"id":%q,"offset":0}`, id)))
	if err != nil {
		t.Fatal(err)
	}
	if n := est.Text(out.(string)); n > 500+60 || n < 300 {
		t.Errorf("a page of the small server's result is %d tokens, want about 500", n)
	}
}
