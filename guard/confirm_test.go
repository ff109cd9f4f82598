package guard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the confirmer and the test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestTerminalConfirmerAnswers(t *testing.T) {
	cases := []struct {
		input    string
		approved bool
		reason   string
	}{
		{"y\n", true, "approved"},
		{"Y\n", true, "approved"},
		{"yes\n", true, "approved"},
		{"  YeS  \r\n", true, "approved"},
		{"y", true, "approved"}, // last line without a newline
		{"n\n", false, `"n"`},
		{"\n", false, `""`},
		{"yy\n", false, `"yy"`},
		{"ok\n", false, `"ok"`},
		{"是\n", false, `"是"`},
		{"", false, "end of input"},
	}
	for _, c := range cases {
		var out syncBuffer
		conf := NewTerminalConfirmer(NewLines(strings.NewReader(c.input)), &out, true)
		d := conf.Confirm(context.Background(), ConfirmRequest{Tool: "refund", Server: "shop", Args: json.RawMessage(`{ "orderId" : "A-1024" }`)})
		if d.Approved != c.approved || !strings.Contains(d.Reason, c.reason) {
			t.Errorf("answer %q: %+v, want approved=%v and a reason mentioning %s", c.input, d, c.approved, c.reason)
		}
		if want := `Allow tool refund (server shop) with {"orderId":"A-1024"}? [y/N] `; !strings.HasPrefix(out.String(), want) {
			t.Errorf("question = %q, want it to start with %q", out.String(), want)
		}
	}
}

func TestTerminalConfirmerTimeout(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	lines := NewLines(pr)
	var out syncBuffer
	conf := NewTerminalConfirmer(lines, &out, true)
	conf.Timeout = time.Millisecond
	d := conf.Confirm(context.Background(), ConfirmRequest{Tool: "refund"})
	if d.Approved || !strings.Contains(d.Reason, "no answer within 1ms") {
		t.Fatalf("Confirm = %+v, want a refusal for the timeout", d)
	}
	if !strings.Contains(out.String(), "refused") {
		t.Errorf("the user was not told: %q", out.String())
	}
	// The late answer is not lost: it goes to the next reader.
	go pw.Write([]byte("late\n"))
	got, err := lines.ReadLine(context.Background())
	if err != nil || got != "late" {
		t.Errorf("next ReadLine = %q, %v; want the late line", got, err)
	}
}

func TestTerminalConfirmerCancelled(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	conf := NewTerminalConfirmer(NewLines(pr), io.Discard, true)
	if d := conf.Confirm(ctx, ConfirmRequest{Tool: "refund"}); d.Approved || !strings.Contains(d.Reason, "cancelled") {
		t.Errorf("Confirm with a cancelled context = %+v, want a refusal", d)
	}
}

func TestTerminalConfirmerNotInteractive(t *testing.T) {
	var out syncBuffer
	conf := NewTerminalConfirmer(NewLines(strings.NewReader("y\n")), &out, false)
	d := conf.Confirm(context.Background(), ConfirmRequest{Tool: "refund", Server: "shop"})
	if d.Approved || !strings.Contains(d.Reason, "not a terminal") {
		t.Errorf("Confirm = %+v, want a refusal because stdin is not a terminal", d)
	}
	if !strings.Contains(out.String(), "refund") {
		t.Errorf("the note does not name the tool: %q", out.String())
	}
}

func TestTerminalConfirmerAsksOneAtATime(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	var out syncBuffer
	conf := NewTerminalConfirmer(NewLines(pr), &out, true)
	results := make(chan Decision, 2)
	for _, tool := range []string{"a", "b"} {
		go func() { results <- conf.Confirm(context.Background(), ConfirmRequest{Tool: tool}) }()
	}
	// Wait until one question is on screen, then check the other waits.
	for !strings.Contains(out.String(), "[y/N]") {
		time.Sleep(time.Millisecond)
	}
	if n := strings.Count(out.String(), "[y/N]"); n != 1 {
		t.Fatalf("%d questions on screen at once:\n%s", n, out.String())
	}
	pw.Write([]byte("y\n"))
	first := <-results
	for strings.Count(out.String(), "[y/N]") < 2 {
		time.Sleep(time.Millisecond)
	}
	pw.Write([]byte("n\n"))
	second := <-results
	if !first.Approved || second.Approved {
		t.Errorf("decisions = %+v, %+v; want the first approved and the second refused", first, second)
	}
}

func TestPreviewIsPrintableAndShort(t *testing.T) {
	cases := []struct{ in, want string }{
		{``, `{}`},
		{`null`, `{}`},
		{"{\n \"a\" : 1 }", `{"a":1}`},
		{`{"a":"x` + "\u202e" + `y"}`, `{"a":"x\u202ey"}`},
		{"not json \x1b[2J", `not json \u001b[2J`},
		{"\xff", `\xff`},
	}
	for _, c := range cases {
		if got := Preview(json.RawMessage(c.in)); got != c.want {
			t.Errorf("Preview(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	long := Preview(json.RawMessage(`{"a":"` + strings.Repeat("字", 500) + `"}`))
	if n := len([]rune(long)); n != maxPreviewRunes+1 || !strings.HasSuffix(long, "…") {
		t.Errorf("long preview has %d runes, want %d with an ellipsis", n, maxPreviewRunes+1)
	}
	if got := describeCall("evil\x1b]0;x\x07", "s\u202e"); strings.ContainsAny(got, "\x1b\x07\u202e") {
		t.Errorf("describeCall kept control characters: %q", got)
	}
}

func TestLinesEOF(t *testing.T) {
	l := NewLines(strings.NewReader("a\r\nb"))
	for _, want := range []string{"a", "b"} {
		if got, err := l.ReadLine(context.Background()); err != nil || got != want {
			t.Fatalf("ReadLine = %q, %v; want %q", got, err, want)
		}
	}
	for range 2 {
		if _, err := l.ReadLine(context.Background()); !errors.Is(err, io.EOF) {
			t.Fatalf("ReadLine at the end = %v, want io.EOF", err)
		}
	}
}

// promptLines is a PromptReader over fixed answers that records the
// prompts it was given.
type promptLines struct {
	answers []string
	prompts []string
}

func (p *promptLines) ReadLine(ctx context.Context) (string, error) { return p.ReadLinePrompt(ctx, "") }

func (p *promptLines) ReadLinePrompt(ctx context.Context, prompt string) (string, error) {
	p.prompts = append(p.prompts, prompt)
	if len(p.answers) == 0 {
		return "", io.EOF
	}
	a := p.answers[0]
	p.answers = p.answers[1:]
	return a, nil
}

func TestTerminalConfirmerGivesPromptReaderTheQuestion(t *testing.T) {
	in := &promptLines{answers: []string{"yes", "no"}}
	var out syncBuffer
	conf := NewTerminalConfirmer(in, &out, true)
	req := ConfirmRequest{Tool: "refund", Server: "shop", Args: json.RawMessage(`{"orderId":"A-1024"}`)}
	if d := conf.Confirm(context.Background(), req); !d.Approved {
		t.Errorf("yes: %+v", d)
	}
	if d := conf.Confirm(context.Background(), req); d.Approved {
		t.Errorf("no: %+v", d)
	}
	want := `Allow tool refund (server shop) with {"orderId":"A-1024"}? [y/N] `
	if len(in.prompts) != 2 || in.prompts[0] != want {
		t.Errorf("prompts = %q, want the question %q", in.prompts, want)
	}
	if out.String() != "" {
		t.Errorf("the question was also written to Out, where a line editor would paint over it: %q", out.String())
	}
}

func TestWithConfirmerKeepsConfigAndAudit(t *testing.T) {
	g, audit := setup(t, Config{Confirm: []string{"refund"}}, nil)
	if g.Confirmer() != nil {
		t.Fatal("guards from New(cfg, nil, a) have a confirmer")
	}
	fc := &fakeConfirmer{decision: Decision{Approved: true, Reason: "approved by the user"}}
	g2 := g.WithConfirmer(fc)
	if g2.Confirmer() != fc || g.Confirmer() != nil || g2.Audit() != g.Audit() || g2.Config().AuditLog != audit {
		t.Errorf("WithConfirmer: confirmer %v (original %v), audit shared %v", g2.Confirmer(), g.Confirmer(), g2.Audit() == g.Audit())
	}
	s := newServerTool("refund", "ok", nil)
	if _, d, _ := call(t, Wrap(s.tool, g2), `{}`); d != nil || s.calls.Load() != 1 || fc.asked.Load() != 1 {
		t.Errorf("approved call: denial %v, calls %d, asked %d", d, s.calls.Load(), fc.asked.Load())
	}
	if _, d, _ := call(t, Wrap(s.tool, g), `{}`); d == nil || s.calls.Load() != 1 {
		t.Errorf("the original guards (no confirmer) did not refuse: %v", d)
	}
	var none *Guards
	if none.WithConfirmer(fc) != nil || none.Confirmer() != nil || none.Audit() != nil {
		t.Error("nil Guards grew a value")
	}
}
