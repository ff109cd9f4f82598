package guard

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/agent"
)

func rules(t *testing.T, src string, lines ...string) []Rule {
	t.Helper()
	var rs []Rule
	for _, l := range lines {
		perm, pat, _ := strings.Cut(l, " ")
		p, err := ParsePermission(perm)
		if err != nil {
			t.Fatal(err)
		}
		pt, err := ParsePattern(pat)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, Rule{Pattern: pt, Permission: p, Source: src})
	}
	return rs
}

func TestParsePattern(t *testing.T) {
	good := map[string]Pattern{
		"*":            {},
		"files:*":      {Server: "files"},
		"files:write":  {Server: "files", Tool: "write"},
		"write_file":   {Tool: "write_file"},
		" files:read ": {Server: "files", Tool: "read"},
	}
	for in, want := range good {
		p, err := ParsePattern(in)
		if err != nil || p.Server != want.Server || p.Tool != want.Tool {
			t.Errorf("ParsePattern(%q) = %+v, %v; want %+v", in, p, err, want)
		}
	}
	bad := map[string]string{
		"":            "empty",
		"files:":      "tool is missing",
		":write":      "server is missing",
		"*:write":     "server is missing",
		"fi*:write":   "* stands only",
		"files:wr*":   "* stands only",
		"wr*":         "* stands only",
		"a:b:c":       "more than one colon",
		"files:a b":   "white space",
		"files:a,b":   "comma",
		"files:\x1b[": "control",
	}
	for in, want := range bad {
		if _, err := ParsePattern(in); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "SERVER:TOOL") {
			t.Errorf("ParsePattern(%q) error = %v, want one saying %q and the forms", in, err, want)
		}
	}
	if _, err := ParseMode("yolo"); err == nil || !strings.Contains(err.Error(), "allow-all") {
		t.Errorf("ParseMode(yolo) = %v", err)
	}
	if _, err := ParsePermission("maybe"); err == nil {
		t.Error("ParsePermission(maybe) accepted")
	}
}

func TestDecide(t *testing.T) {
	p := Permissions{Rules: rules(t, "--flags",
		"allow files:*",
		"ask files:write_file",
		"deny files:move_file",
		"deny danger",
		"allow mem:read_graph",
	)}
	cases := []struct {
		server, tool      string
		readOnly, confirm bool
		want              Permission
		why               string
	}{
		{"files", "read_file", false, false, Allow, `"allow files:*" of --flags allows`},
		{"files", "write_file", false, false, Ask, `"ask files:write_file"`},
		// A read-only annotation never relaxes a rule the user wrote.
		{"files", "write_file", true, false, Ask, `"ask files:write_file"`},
		{"files", "move_file", true, false, Deny, `"deny files:move_file" of --flags denies`},
		{"other", "danger", true, false, Deny, `"deny danger"`},
		// AGENT_GUARD_CONFIRM asks even where an allow rule would allow.
		{"files", "read_file", true, true, Ask, EnvConfirm},
		{"mem", "read_graph", false, false, Allow, "allows"},
		{"mem", "write_graph", false, false, Ask, "does not declare it read-only"},
		{"mem", "search", true, false, Allow, "declares it read-only"},
	}
	for _, c := range cases {
		v := p.Decide(c.server, c.tool, c.readOnly, c.confirm)
		if v.Permission != c.want || !strings.Contains(v.Why, c.why) {
			t.Errorf("Decide(%s:%s, readOnly=%v, confirm=%v) = %s (%s), want %s (%s)", c.server, c.tool, c.readOnly, c.confirm, v.Permission, v.Why, c.want, c.why)
		}
	}
	all := Permissions{Mode: ModeAllowAll, Rules: rules(t, "--deny", "deny files:move_file", "ask files:write_file")}
	if v := all.Decide("files", "write_file", false, true); v.Permission != Allow {
		t.Errorf("allow-all: write_file = %s, want allow", v.Permission)
	}
	if v := all.Decide("files", "move_file", true, false); v.Permission != Deny {
		t.Errorf("allow-all: move_file = %s, want deny (deny rules hold in every mode)", v.Permission)
	}
	if d := all.Describe(); d != "permissions: allow-all (MCP tools run without asking; deny files:move_file)" {
		t.Errorf("Describe() = %q", d)
	}
	if d := p.Describe(); !strings.Contains(d, "deny files:move_file, danger; ask files:write_file; allow files:*, mem:read_graph") {
		t.Errorf("Describe() = %q", d)
	}
}

// TestDefaultPolicyAsksForUnannotatedTools: by default an MCP tool that
// does not declare itself read-only is asked about, a read-only one runs,
// and a deny rule refuses without asking, whatever the tool declares.
func TestDefaultPolicyAsksForUnannotatedTools(t *testing.T) {
	conf := &fakeConfirmer{decision: Decision{Reason: "the user said no"}}
	g, audit := setup(t, Config{Permissions: Permissions{Rules: rules(t, "--deny", "deny hostile:wipe")}}, conf)

	write := newServerTool("write_file", "written", nil)
	write.tool.ReadOnly = false
	if _, d, _ := call(t, Wrap(write.tool, g), `{"path":"x"}`); d == nil || write.calls.Load() != 0 || conf.asked.Load() != 1 {
		t.Fatalf("unannotated tool: denial %v, calls %d, asked %d; want it asked about and refused", d, write.calls.Load(), conf.asked.Load())
	}
	if conf.last.Server != "hostile" || conf.last.Tool != "write_file" || !strings.Contains(conf.last.Why, "not declare it read-only") {
		t.Errorf("question = %+v, want server, tool and why", conf.last)
	}

	read := newServerTool("read_file", "content", nil)
	if out, d, _ := call(t, Wrap(read.tool, g), `{}`); out != "content" || d != nil || conf.asked.Load() != 1 {
		t.Errorf("read-only tool: out %v, denial %v, asked %d; want it run without asking", out, d, conf.asked.Load())
	}

	wipe := newServerTool("wipe", "gone", nil) // declares itself read-only: a lie cannot pass a deny
	_, d, _ := call(t, Wrap(wipe.tool, g), `{}`)
	if d == nil || wipe.calls.Load() != 0 || conf.asked.Load() != 1 {
		t.Fatalf("denied tool: denial %v, calls %d, asked %d; want refused without asking", d, wipe.calls.Load(), conf.asked.Load())
	}
	if !strings.Contains(d.Reason, "permission policy denies tool wipe (server hostile)") || !strings.Contains(d.Reason, `"deny hostile:wipe" of --deny`) {
		t.Errorf("denial reason = %q, want the policy, the tool and the rule named", d.Reason)
	}
	lines := readAudit(t, audit)
	if len(lines) != 2 || lines[0]["event"] != EventConfirm || lines[1]["event"] != EventPermissionDenied || lines[1]["tool"] != "wipe" {
		t.Errorf("audit = %v, want a confirm line then a permission_denied line", lines)
	}

	// Allow-all runs the unannotated tool without asking.
	g2, _ := setup(t, Config{Permissions: Permissions{Mode: ModeAllowAll}}, conf)
	if out, d, _ := call(t, Wrap(write.tool, g2), `{}`); out != "written" || d != nil || conf.asked.Load() != 1 {
		t.Errorf("allow-all: out %v, denial %v, asked %d; want it run without asking", out, d, conf.asked.Load())
	}
}

// TestConfirmAsksForLocalTools: AGENT_GUARD_CONFIRM naming a local tool
// asks before it (it used to be silently ignored); other local tools are
// left alone.
func TestConfirmAsksForLocalTools(t *testing.T) {
	conf := &fakeConfirmer{decision: Decision{Reason: "no"}}
	g, _ := setup(t, Config{Confirm: []string{"createTicket"}}, conf)
	ran := 0
	local := &agent.Tool{Name: "createTicket", Execute: func(context.Context, json.RawMessage) (any, error) { ran++; return "T-1", nil }}
	w := Wrap(local, g)
	if _, d, _ := call(t, w, `{}`); d == nil || ran != 0 || conf.asked.Load() != 1 || conf.last.Server != "" {
		t.Errorf("local tool named in %s: denial %v, ran %d, asked %d (%+v)", EnvConfirm, d, ran, conf.asked.Load(), conf.last)
	}
	other := &agent.Tool{Name: "getOrderStatus"}
	if Wrap(other, g) != other {
		t.Error("Wrap changed a local tool the confirm list does not name")
	}
}

// TestCheckNamesFailsClosed: a confirm entry or a rule that names nothing
// configured is an error naming it with the nearest name; one that may
// belong to a server that is down is a warning.
func TestCheckNamesFailsClosed(t *testing.T) {
	k := Known{
		Local:   []string{"createTicket"},
		Running: map[string][]string{"files": {"read_file", "write_file"}},
		Down:    []string{"memory"},
	}
	ok := Config{Confirm: []string{"createTicket", "write_file"}, Permissions: Permissions{Rules: rules(t, "--allow", "allow *", "allow files:*", "allow files:read_file", "allow read_file")}}
	if w, err := ok.CheckNames(Known{Local: k.Local, Running: k.Running}); err != nil || len(w) != 0 {
		t.Errorf("known names: warnings %q, error %v", w, err)
	}
	bad := Config{Confirm: []string{"creatTicket"}, Permissions: Permissions{Rules: rules(t, "--deny", "deny files:wrte_file", "deny filez:*", "deny createTicket")}}
	_, err := bad.CheckNames(k)
	if err == nil {
		t.Fatal("unknown names passed")
	}
	for _, want := range []string{
		`AGENT_GUARD_CONFIRM names "creatTicket", which no running server offers`, // memory is down: a warning, see below
		`the rule "deny files:wrte_file" of --deny names tool "wrte_file" of MCP server "files", but the server offers no tool of that name; did you mean "write_file"?`,
		`the rule "deny filez:*" of --deny names MCP server "filez", but no server of that name is configured; did you mean "files"?`,
		`the rule "deny createTicket" of --deny names "createTicket", a local tool`,
	} {
		if strings.HasPrefix(want, EnvConfirm) {
			continue
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\nlacks %q", err, want)
		}
	}
	// With no server down, the confirm typo is an error too.
	_, err = Config{Confirm: []string{"creatTicket"}}.CheckNames(Known{Local: k.Local, Running: k.Running})
	if err == nil || !strings.Contains(err.Error(), `AGENT_GUARD_CONFIRM names "creatTicket", but no local tool or MCP server tool has that name; did you mean "createTicket"?`) {
		t.Errorf("confirm typo: %v", err)
	}
	w, err := Config{Confirm: []string{"create_memory"}, Permissions: Permissions{Rules: rules(t, "the user scope file", "deny memory:delete")}}.CheckNames(k)
	if err != nil || len(w) != 2 || !strings.Contains(w[0], "memory") || !strings.Contains(w[1], `names MCP server "memory", which is configured but not running`) {
		t.Errorf("names of a server that is down: warnings %q, error %v; want two warnings", w, err)
	}
}

// TestDownServerNotAskedAbout (issue 44, point 10): a tool whose server is
// down (Ready fails) fails with Ready's error before anyone is asked to
// approve it; a server that is up is asked about as before, and Ready
// travels with the wrapped tool.
func TestDownServerNotAskedAbout(t *testing.T) {
	conf := &fakeConfirmer{decision: Decision{Approved: true}}
	g, _ := setup(t, Config{}, conf)
	down := errors.New("tool write_file could not be called: MCP server hostile is down")
	var readyErr error
	write := newServerTool("write_file", "written", nil)
	write.tool.ReadOnly = false // the default policy asks
	write.tool.Ready = func(context.Context) error { return readyErr }
	w := Wrap(write.tool, g)
	if w.Ready == nil {
		t.Fatal("the wrapped tool lost Ready")
	}
	readyErr = down
	if _, _, err := call(t, w, `{}`); !errors.Is(err, down) || conf.asked.Load() != 0 || write.calls.Load() != 0 {
		t.Fatalf("down server: error %v, asked %d, calls %d; want the down error without asking or calling", err, conf.asked.Load(), write.calls.Load())
	}
	readyErr = nil
	if out, _, err := call(t, w, `{}`); out != "written" || err != nil || conf.asked.Load() != 1 {
		t.Errorf("server up: out %v, error %v, asked %d; want asked once and run", out, err, conf.asked.Load())
	}
}
