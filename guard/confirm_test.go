package guard

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestAnswer(t *testing.T) {
	cases := []struct {
		line     string
		approved bool
		reason   string
	}{
		{"y", true, "approved by the user"},
		{"Y", true, "approved by the user"},
		{"yes", true, "approved by the user"},
		{"  YeS  ", true, "approved by the user"},
		{"n", false, `the user answered "n", not yes`},
		{"", false, `the user answered "", not yes`},
		{"yy", false, `the user answered "yy", not yes`},
		{"ok", false, `the user answered "ok", not yes`},
		{"是", false, `the user answered "是", not yes`},
		{"y\x1b[2J", false, `the user answered "y\x1b[2J", not yes`},
	}
	for _, c := range cases {
		if d := Answer(c.line); d.Approved != c.approved || d.Reason != c.reason {
			t.Errorf("Answer(%q) = %+v, want approved=%v, reason %q", c.line, d, c.approved, c.reason)
		}
	}
	long := Answer(strings.Repeat("n", 500))
	if long.Approved || len(long.Reason) > 200 || !strings.Contains(long.Reason, "…") {
		t.Errorf("a long answer is quoted whole: %q", long.Reason)
	}
}

// TestRequestIsPrintableAndShort: the question and the audit log show a
// call by ConfirmRequest.Describe and ArgsPreview, which escape by
// textsafe's rule and cut the arguments, saying how long they were.
func TestRequestIsPrintableAndShort(t *testing.T) {
	cases := []struct{ in, want string }{
		{``, `{}`},
		{`null`, `{}`},
		{"{\n \"a\" : 1 }", `{"a":1}`},
		{`{"a":"x` + "\u202e" + `y"}`, `{"a":"x\u202ey"}`},
		{"not json \x1b[2J", `not json \x1b[2J`},
		{"\xff", `\xff`},
	}
	for _, c := range cases {
		if got := (ConfirmRequest{Args: json.RawMessage(c.in)}).ArgsPreview(); got != c.want {
			t.Errorf("ArgsPreview(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	long := ConfirmRequest{Args: json.RawMessage(`{"a":"` + strings.Repeat("字", 500) + `"}`)}.ArgsPreview()
	if want := `{"a":"` + strings.Repeat("字", maxPreviewRunes-6) + "…(+308 chars, 508 total)"; long != want {
		t.Errorf("long preview = %q, want %q", long, want)
	}
	req := ConfirmRequest{Tool: "evil\x1b]0;x\x07", Server: "s\u202e"}
	if got, want := req.Describe(), `tool evil\x1b]0;x\x07 (server s\u202e)`; got != want {
		t.Errorf("Describe() = %q, want %q", got, want)
	}
	if got, want := (ConfirmRequest{Tool: "refund"}).Describe(), "tool refund"; got != want {
		t.Errorf("Describe() without a server = %q, want %q", got, want)
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
