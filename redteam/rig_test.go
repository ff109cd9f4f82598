package redteam

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/assistant/compose"
	"github.com/agentapp/agentapp/chat"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/host/hosttest"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/scripted"
	"github.com/agentapp/agentapp/store"
)

// rig is one chat as `agentapp chat --mcp <hostile server>` would start it
// with the given environment: guards from guard.FromEnv, the local tools
// from assistant.LocalTools, the hostile server connected in memory, all merged
// by chat.New (host.BuildTools).
type rig struct {
	chat     *chat.Chat
	st       *store.Store
	model    *scripted.Model
	hostile  *hostile
	out, err bytes.Buffer
	audit    string
}

type rigOptions struct {
	env   map[string]string
	turns []scripted.Turn
	// stdin answers confirmation questions.
	stdin string
	// confirmer replaces the chat's terminal confirmer (which refuses on
	// a pipe) when set.
	confirmer guard.Confirmer
	// allowAll is --permission-mode allow-all: the hostile server's
	// tools, which declare nothing, run without a question.
	allowAll bool
}

func newRig(t *testing.T, o rigOptions) *rig {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	r := &rig{hostile: &hostile{}, model: scripted.New(o.turns...)}
	cfg, err := guard.FromEnv(func(k string) string { return o.env[k] }, dir)
	if err != nil {
		t.Fatalf("guard.FromEnv: %v", err)
	}
	if o.allowAll {
		cfg.Permissions.Mode = guard.ModeAllowAll
	}
	r.audit = cfg.AuditLog

	if r.st, err = store.Open(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.st.Close() })
	b, err := mcpclient.ConnectInMemory(ctx, "hostile", r.hostile.server())
	if err != nil {
		t.Fatal(err)
	}
	// As cmd/agentapp words them, so that the warnings read as a user's.
	hints := chat.Hints{Host: host.Hints{
		KeepLocalTools: "set " + guard.EnvMCPStrict + "=1",
		LocalToolsWin:  guard.EnvMCPStrict + " is set",
	}}
	// The host is opened as cmd/agentapp opens it, with the assistant's
	// parts (compose.Host), through host.Open (hosttest).
	ho := compose.Host(&host.Options{
		Model: r.model, Servers: []host.Server{b}, Guards: &cfg, Store: r.st, KeepStore: true, Hints: hints.Host,
		Notify: func(n host.Notice) {
			if n.Warning {
				fmt.Fprintln(&r.err, "agentapp: warning:", n.Text)
				return
			}
			fmt.Fprintln(&r.err, n.Text)
		},
	})
	h := hosttest.MustOpen(t, ho)
	r.chat, err = chat.New(ctx, chat.Config{
		Host:      h,
		Confirmer: o.confirmer,
		In:        strings.NewReader(o.stdin),
		Out:       &r.out,
		Err:       &r.err,
		Hints:     hints,
	})
	if err != nil {
		t.Fatalf("chat.New: %v", err)
	}
	t.Cleanup(func() { r.chat.Close() })
	return r
}

// ask runs one question in one-shot JSON mode and decodes the answer.
func (r *rig) ask(t *testing.T, q string) chat.Answer {
	t.Helper()
	r.out.Reset()
	if err := r.chat.Ask(context.Background(), q, true); err != nil {
		t.Fatalf("Ask(%q): %v\nstderr:\n%s", q, err, r.err.String())
	}
	var a chat.Answer
	if err := json.Unmarshal(r.out.Bytes(), &a); err != nil {
		t.Fatalf("answer is not JSON: %v\n%s", err, r.out.String())
	}
	return a
}

// seen is everything of the run a model or a later session could read:
// every message of every request the model received, the JSON answer with
// its steps, and the stored session.
func (r *rig) seen(t *testing.T, a chat.Answer) string {
	t.Helper()
	var b strings.Builder
	for _, req := range r.model.Requests() {
		for _, m := range req.Messages {
			b.WriteString(m.Content + "\n")
			for _, c := range m.ToolCalls {
				b.Write(c.Arguments)
				b.WriteString("\n")
			}
		}
	}
	enc, _ := json.Marshal(a)
	b.Write(enc)
	b.WriteString("\n")
	rows, err := r.st.DB.Query(`SELECT content, tool_calls FROM chat_messages`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var content, calls string
		if err := rows.Scan(&content, &calls); err != nil {
			t.Fatal(err)
		}
		b.WriteString(content + "\n" + calls + "\n")
	}
	return b.String()
}

// toolMessages returns the tool results the model received, in order.
func (r *rig) toolMessages() []model.Message {
	var out []model.Message
	reqs := r.model.Requests()
	if len(reqs) == 0 {
		return nil
	}
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == model.RoleTool {
			out = append(out, m)
		}
	}
	return out
}

// auditLines parses the audit log; a missing file is no lines.
func auditLines(t *testing.T, path string) []guard.Event {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []guard.Event
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e guard.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Time.IsZero() || e.Event == "" {
			t.Fatalf("audit line %q is not {time, event, ...}: %v", sc.Text(), err)
		}
		out = append(out, e)
	}
	return out
}

// denial decodes a tool message that is a guard refusal.
func denial(content string) (guard.Denial, bool) {
	var d guard.Denial
	if json.Unmarshal([]byte(content), &d) != nil || !d.Denied {
		return guard.Denial{}, false
	}
	return d, true
}
