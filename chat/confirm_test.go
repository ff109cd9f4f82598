package chat

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/internal/testkit"
)

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
		var out testkit.SyncBuffer
		conf := NewTerminalConfirmer(strings.NewReader(c.input), &out, true)
		d := conf.Confirm(context.Background(), guard.ConfirmRequest{Tool: "refund", Server: "shop", Args: json.RawMessage(`{ "orderId" : "A-1024" }`)})
		if d.Approved != c.approved || !strings.Contains(d.Reason, c.reason) {
			t.Errorf("answer %q: %+v, want approved=%v and a reason mentioning %s", c.input, d, c.approved, c.reason)
		}
		if want := `Allow tool refund (server shop) with {"orderId":"A-1024"}? [y once/a session/N/?] `; !strings.HasPrefix(out.String(), want) {
			t.Errorf("question = %q, want it to start with %q", out.String(), want)
		}
	}
}

// plainLines is a line reader over r as the chat makes one for piped
// input, with questions written to out.
func plainLines(r io.Reader, out io.Writer) *lineReader {
	l := newLineReader(out)
	l.use(&plainSource{r: bufio.NewReader(r)})
	return l
}

func TestTerminalConfirmerTimeout(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	var out testkit.SyncBuffer
	lines := plainLines(pr, &out)
	conf := newTerminalConfirmer(lines, &out, true)
	conf.Timeout = time.Millisecond
	d := conf.Confirm(context.Background(), guard.ConfirmRequest{Tool: "refund"})
	if d.Approved || !strings.Contains(d.Reason, "no answer within 1ms") {
		t.Fatalf("Confirm = %+v, want a refusal for the timeout", d)
	}
	if !strings.Contains(out.String(), "refused") {
		t.Errorf("the user was not told: %q", out.String())
	}
	// The late answer is not lost: it goes to the next reader.
	go pw.Write([]byte("late\n"))
	got, err := lines.read(context.Background(), "", nil)
	if err != nil || got != "late" {
		t.Errorf("next read = %q, %v; want the late line", got, err)
	}
}

func TestTerminalConfirmerCancelled(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	conf := NewTerminalConfirmer(pr, io.Discard, true)
	if d := conf.Confirm(ctx, guard.ConfirmRequest{Tool: "refund"}); d.Approved || !strings.Contains(d.Reason, "cancelled") {
		t.Errorf("Confirm with a cancelled context = %+v, want a refusal", d)
	}
}

func TestTerminalConfirmerNotInteractive(t *testing.T) {
	var out testkit.SyncBuffer
	conf := NewTerminalConfirmer(strings.NewReader("y\n"), &out, false)
	d := conf.Confirm(context.Background(), guard.ConfirmRequest{Tool: "refund", Server: "shop"})
	if d.Approved || !strings.Contains(d.Reason, "not a terminal") {
		t.Errorf("Confirm = %+v, want a refusal because stdin is not a terminal", d)
	}
	if !strings.Contains(out.String(), "refund") {
		t.Errorf("the note does not name the tool: %q", out.String())
	}
	var zero TerminalConfirmer
	if d := zero.Confirm(context.Background(), guard.ConfirmRequest{Tool: "refund"}); d.Approved {
		t.Errorf("the zero TerminalConfirmer approved: %+v", d)
	}
}

func TestTerminalConfirmerAsksOneAtATime(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	var out testkit.SyncBuffer
	conf := NewTerminalConfirmer(pr, &out, true)
	results := make(chan guard.Decision, 2)
	for _, tool := range []string{"a", "b"} {
		go func() { results <- conf.Confirm(context.Background(), guard.ConfirmRequest{Tool: tool}) }()
	}
	// Wait until one question is on screen, then check the other waits.
	for !strings.Contains(out.String(), "[y once/a session/N/?]") {
		time.Sleep(time.Millisecond)
	}
	if n := strings.Count(out.String(), "[y once/a session/N/?]"); n != 1 {
		t.Fatalf("%d questions on screen at once:\n%s", n, out.String())
	}
	pw.Write([]byte("y\n"))
	first := <-results
	for strings.Count(out.String(), "[y once/a session/N/?]") < 2 {
		time.Sleep(time.Millisecond)
	}
	pw.Write([]byte("n\n"))
	second := <-results
	if !first.Approved || second.Approved {
		t.Errorf("decisions = %+v, %+v; want the first approved and the second refused", first, second)
	}
}

// TestTerminalConfirmerThroughWrap answers the guards' questions as a
// person at a terminal would: what is typed decides whether the server is
// reached, and every decision is audited.
func TestTerminalConfirmerThroughWrap(t *testing.T) {
	cases := []struct {
		name    string
		input   io.Reader
		timeout bool
		ran     bool
	}{
		{"yes", strings.NewReader("yes\n"), false, true},
		{"y", strings.NewReader("Y\n"), false, true},
		{"no", strings.NewReader("no\n"), false, false},
		{"other", strings.NewReader("sure\n"), false, false},
		{"EOF", strings.NewReader(""), false, false},
		{"timeout", nil, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.input
			if c.timeout {
				pr, pw := io.Pipe()
				t.Cleanup(func() { pw.Close() })
				in = pr
			}
			var out testkit.SyncBuffer
			conf := NewTerminalConfirmer(in, &out, true)
			// Only the timeout case may time out: a short limit on the
			// answered ones made them fail on a busy machine.
			conf.Timeout = time.Minute
			if c.timeout {
				conf.Timeout = time.Millisecond
			}
			gcfg, audit := testGuards(t, guard.Config{Confirm: []string{"createRefund"}})
			a := guard.NewAudit(audit, nil)
			t.Cleanup(func() { a.Close() })
			g := guard.New(*gcfg, conf, a)
			srv, calls := countingServer("hostile", "createRefund", "refunded")
			res, err := guard.Wrap(srv.tools[0], g).Execute(context.Background(), json.RawMessage(`{"orderId":"A-1024"}`))
			if err != nil {
				t.Fatal(err)
			}
			if ran := calls.Load() == 1; ran != c.ran {
				t.Fatalf("server ran = %v, want %v (result %v)", ran, c.ran, res)
			}
			if raw, _ := res.(json.RawMessage); !c.ran && !strings.Contains(string(raw), `"denied":true`) {
				t.Errorf("result %v is not a denial", res)
			}
			if !strings.Contains(out.String(), `Allow tool createRefund (server hostile) with {"orderId":"A-1024"}? [y once/a session/N/?]`) {
				t.Errorf("question = %q", out.String())
			}
			lines := auditEvents(t, audit)
			want := map[bool]string{true: "approved", false: "refused"}[c.ran]
			if len(lines) != 1 || lines[0]["event"] != guard.EventConfirm || lines[0]["decision"] != want || lines[0]["reason"] == "" {
				t.Errorf("audit = %v, want one confirm line with decision %s and a reason", lines, want)
			}
		})
	}
}

// TestTerminalConfirmerEscapesTheQuestion: a tool name, server name or
// argument from a hostile server reaches the question escaped, so it
// cannot repaint the line the user answers.
func TestTerminalConfirmerEscapesTheQuestion(t *testing.T) {
	var out testkit.SyncBuffer
	conf := NewTerminalConfirmer(strings.NewReader("n\n"), &out, true)
	conf.Confirm(context.Background(), guard.ConfirmRequest{Tool: "refund\u202e", Server: "shop\x1b[2J", Args: json.RawMessage(`{"a":"` + "\u2066" + `"}`)})
	want := `Allow tool refund\u202e (server shop\x1b[2J) with {"a":"\u2066"}? [y once/a session/N/?] `
	if got := out.String(); got != want {
		t.Errorf("question = %q, want %q", got, want)
	}
}

// promptSource is a line source that draws its own prompts, as the line
// editor does, over fixed answers; it records the prompts it was given.
type promptSource struct {
	answers []string
	prompts []string
}

func (p *promptSource) readLine(prompt string) (string, error) {
	p.prompts = append(p.prompts, prompt)
	if len(p.answers) == 0 {
		return "", io.EOF
	}
	a := p.answers[0]
	p.answers = p.answers[1:]
	return a, nil
}

func (p *promptSource) drawsPrompt() bool { return true }
func (p *promptSource) close() error      { return nil }

func TestTerminalConfirmerGivesTheEditorTheQuestion(t *testing.T) {
	src := &promptSource{answers: []string{"yes", "no"}}
	var out testkit.SyncBuffer
	lines := newLineReader(&out)
	lines.use(src)
	conf := newTerminalConfirmer(lines, &out, true)
	req := guard.ConfirmRequest{Tool: "refund", Server: "shop", Args: json.RawMessage(`{"orderId":"A-1024"}`)}
	if d := conf.Confirm(context.Background(), req); !d.Approved {
		t.Errorf("yes: %+v", d)
	}
	if d := conf.Confirm(context.Background(), req); d.Approved {
		t.Errorf("no: %+v", d)
	}
	want := `Allow tool refund (server shop) with {"orderId":"A-1024"}? [y once/a session/N/?] `
	if len(src.prompts) != 2 || src.prompts[0] != want {
		t.Errorf("prompts = %q, want the question %q", src.prompts, want)
	}
	if out.String() != "" {
		t.Errorf("the question was also written out, where a line editor would paint over it: %q", out.String())
	}
}

func TestLineReaderPlainLines(t *testing.T) {
	l := plainLines(strings.NewReader("a\r\nb"), io.Discard)
	for _, want := range []string{"a", "b"} {
		if got, err := l.read(context.Background(), "", nil); err != nil || got != want {
			t.Fatalf("read = %q, %v; want %q", got, err, want)
		}
	}
	for range 2 {
		if _, err := l.read(context.Background(), "", nil); !errors.Is(err, io.EOF) {
			t.Fatalf("read at the end = %v, want io.EOF", err)
		}
	}
}

// TestTerminalConfirmerHelpAndAlways: ? explains the choices and asks again
// (it is not a no); a keeps the tool allowed for the session, across
// confirmers sharing the session's store (a chat resumed with --continue),
// but not for another session; p writes the project's allow rule and is
// offered only where an allow rule decides.
func TestTerminalConfirmerHelpAndAlways(t *testing.T) {
	ctx := agent.WithSession(context.Background(), "s1")
	st := openTestStore(t)
	approvals := func() *host.SessionApprovals {
		a, err := host.OpenSessionApprovals(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	req := guard.ConfirmRequest{Tool: "createTicket", Server: "shop", Args: json.RawMessage(`{}`), Why: "its server does not declare it read-only"}
	out := &testkit.SyncBuffer{}
	var wrote []string
	conf := newTerminalConfirmer(plainLines(strings.NewReader("?\na\n"), out), out, true)
	conf.sessions = approvals()
	conf.project = func(server, tool string) (string, error) {
		wrote = append(wrote, server+":"+tool)
		return "/cfg/mcp.json", nil
	}
	if d := conf.Confirm(ctx, req); !d.Approved {
		t.Fatalf("? then a: %+v, want approved", d)
	}
	screen := out.String()
	for _, s := range []string{"[y once/a session/p project/N/?] ", "a, always   run it, and every call of tool createTicket (server shop) in this session",
		"p, project  run it, and allow shop:createTicket in this project", "n, no       refuse", "asked because its server does not declare it read-only"} {
		if !strings.Contains(screen, s) {
			t.Errorf("the screen lacks %q:\n%s", s, screen)
		}
	}
	if n := strings.Count(screen, "Allow tool createTicket"); n != 2 {
		t.Errorf("asked %d times, want twice (again after ?):\n%s", n, screen)
	}

	// --continue: a new chat, the same session and store.
	out = &testkit.SyncBuffer{}
	again := newTerminalConfirmer(plainLines(strings.NewReader(""), out), out, true)
	again.sessions = approvals()
	if d := again.Confirm(ctx, req); !d.Approved || out.String() != "" {
		t.Errorf("the same session after a restart: %+v, screen %q; want allowed without asking", d, out.String())
	}
	if d := again.Confirm(agent.WithSession(context.Background(), "s2"), req); d.Approved {
		t.Errorf("another session: %+v, want asked (and refused at end of input)", d)
	}

	out = &testkit.SyncBuffer{}
	proj := newTerminalConfirmer(plainLines(strings.NewReader("p\n"), out), out, true)
	proj.sessions = approvals()
	proj.project = conf.project
	if d := proj.Confirm(agent.WithSession(context.Background(), "s3"), req); !d.Approved || !slices.Equal(wrote, []string{"shop:createTicket"}) ||
		!strings.Contains(out.String(), "Allowed tool createTicket (server shop) in this project from now on (shop:createTicket in the allow list of /cfg/mcp.json)") {
		t.Errorf("p: %+v, wrote %v, screen:\n%s", d, wrote, out.String())
	}
	out = &testkit.SyncBuffer{}
	ruled := req
	ruled.Cause = guard.AskRule
	noP := newTerminalConfirmer(plainLines(strings.NewReader("p\n"), out), out, true)
	noP.project = conf.project
	if d := noP.Confirm(ctx, ruled); d.Approved || strings.Contains(out.String(), "p project") {
		t.Errorf("an ask rule's question: %+v, screen %q; want p neither offered nor taken", d, out.String())
	}
}
