package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/internal/term"
	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/mcpclient"
)

// maxCallShown bounds how much of a /call result is printed, in characters;
// the rest is counted, not shown, so a huge result cannot flood the screen.
const maxCallShown = 4000

// callCommand is /call TOOL [JSON]: it runs one tool of the table, local or
// MCP, with the given arguments, through the same guards and argument
// check as a call the model makes, and prints the result. It lets the user
// try any connected server's tool without a model (the offline demo).
func (c *Chat) callCommand(ctx context.Context, line string) {
	out := c.cfg.Out
	rest := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), strings.Fields(line)[0]))
	name, args, _ := strings.Cut(rest, " ")
	args = strings.TrimSpace(args)
	if name == "" {
		fmt.Fprintln(out, `Usage: /call TOOL [JSON arguments], e.g. /call getOrderStatus {"orderId":"A-1024"} (see /tools for the names)`)
		return
	}
	if args == "" {
		args = "{}"
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(args), &obj); err != nil {
		fmt.Fprintf(out, "The arguments must be one JSON object, like {\"orderId\":\"A-1024\"}: %s\n", textsafe.Escape(err.Error()))
		return
	}
	set := c.refreshTools(ctx)
	t, ok := set.Get(name)
	if !ok {
		fmt.Fprintln(out, textsafe.Escape(fmt.Sprintf("No tool is named %s; the tools are: %s.", name, strings.Join(set.Names(), ", "))))
		return
	}
	raw := json.RawMessage(args)
	act := &activity{w: c.cfg.Err, st: c.style(c.cfg.Err), whole: true, tty: term.IsTerminal(c.cfg.Err)}
	act.started(t.Name, t.Origin, raw)
	if t.Validate {
		if err := t.CheckArgs(raw); err != nil {
			act.ended(t.Name, 0, err, "", false)
			return
		}
	}
	// The session's: an approval's "always" is kept with it.
	ctx = agent.WithSession(ctx, c.session)
	// A hook that fails without blocking is shown as in a turn.
	ctx = host.WithHookNotice(ctx, func(msg string) {
		fmt.Fprintln(c.cfg.Err, "agentapp: warning: "+textsafe.Escape(msg))
	})
	// A call that runs as an MCP task shows its stages, as a model's
	// call does in a turn: "⋯ requestRefund working: …".
	ctx = mcpclient.WithTaskStatus(ctx, func(_ context.Context, p mcpclient.Progress) {
		act.status(t.Name, &host.ToolStatus{Task: p.Task, Status: p.Status, Message: p.Message})
	})
	ctx, cancel := context.WithTimeout(ctx, c.h.TurnTimeout())
	defer cancel()
	ctx, stop := c.interruptible(ctx)
	defer stop()
	// The call runs in a turn's context, as a model's call does: the
	// server may ask (sampling, elicitation) while its tool runs, and
	// Ctrl-C or the time limit ends the question with the call.
	c.turnCtx.Store(&ctx)
	defer c.turnCtx.Store(nil)
	start := c.cfg.Now()
	res, err := runTool(func() (any, error) { return c.h.Call(ctx, t, raw, c.confirmer) }, t.Name)
	dur := c.cfg.Now().Sub(start)
	reason, refused := denial(res)
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		act.cancelled(t.Name, dur) // Ctrl-C
		return
	}
	act.ended(t.Name, dur, err, reason, refused)
	if err != nil {
		return
	}
	act.viewOnWeb(t.Name, !refused && c.hasView(t.Origin, t.Name))
	fmt.Fprintln(out, escapeLines(showResult(res)))
}

// runTool runs t, turning a panic into an error, as the tool loop does.
func runTool(call func() (any, error), name string) (out string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the tool %s failed: %v", name, r)
		}
	}()
	v, err := call()
	if err != nil {
		return "", err
	}
	return agent.FormatOutput(v)
}

// showResult indents a JSON result for reading and cuts it to
// maxCallShown characters.
func showResult(s string) string {
	var b bytes.Buffer
	if json.Indent(&b, []byte(s), "", "  ") == nil {
		s = b.String()
	}
	if n := utf8.RuneCountInString(s); n > maxCallShown {
		cut := []rune(s)[:maxCallShown]
		s = string(cut) + fmt.Sprintf("\n… (%d more characters not shown)", n-maxCallShown)
	}
	return s
}
