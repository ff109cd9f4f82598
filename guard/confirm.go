package guard

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/agentapp/agentapp/internal/textsafe"
)

// DefaultConfirmTimeout is how long a confirmer waits for an answer before
// it refuses. A question nobody answers must not hold a call, and the turn
// around it, forever; refusing is the safe outcome.
const DefaultConfirmTimeout = 60 * time.Second

// ConfirmRequest is a tool call waiting for the user's approval.
type ConfirmRequest struct {
	Tool   string
	Server string
	Args   json.RawMessage
	// Why says why the call is asked about (the permission policy's
	// reason), for a confirmer that wants to show it.
	Why string
	// Cause is what made the policy ask, for a front end that says how
	// to run the call without asking.
	Cause AskCause
}

// AskCause is what made the permission policy ask about a call.
type AskCause int

// The causes.
const (
	// AskDefault: no rule names the tool and its server does not declare
	// it read-only.
	AskDefault AskCause = iota
	// AskRule: an ask rule names it.
	AskRule
	// AskConfirmList: AGENT_GUARD_CONFIRM names it.
	AskConfirmList
)

// Describe names the call's tool and server for a person to read, as
// "tool T (server S)". The names come from the server, so they are escaped
// (textsafe.Escape): a hostile name cannot repaint the question it is
// asked in.
func (r ConfirmRequest) Describe() string { return describeCall(r.Tool, r.Server) }

// ArgsPreview shows the call's arguments as the audit log records them:
// compact JSON (or the raw text if it is not JSON), escaped and cut to 200
// characters by textsafe.Preview, so that an argument cannot repaint the
// question either.
func (r ConfirmRequest) ArgsPreview() string { return previewArgs(r.Args) }

// Decision is the outcome of a confirmation. Reason says in words how it
// came about (for the audit log and for the model when refused).
type Decision struct {
	Approved bool
	Reason   string
}

// Confirmer asks the user whether a tool call may run. Implementations must
// refuse when in doubt and must honour ctx.
type Confirmer interface {
	Confirm(ctx context.Context, req ConfirmRequest) Decision
}

// Answer decides what an answer the user typed to a confirmation question
// means. Only y or yes, in any case and with surrounding space, approves;
// anything else refuses, with a reason quoting what was typed. It is here,
// not with the confirmer that asks, so that every way of asking applies
// one rule.
func Answer(line string) Decision {
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return Decision{Approved: true, Reason: "approved by the user"}
	}
	return Decision{Reason: "the user answered " + strconv.Quote(clip(line)) + ", not yes"}
}

// maxPreviewRunes bounds the argument preview in questions and the audit
// log.
const maxPreviewRunes = 200

// describeCall is ConfirmRequest.Describe, for the guards' own refusals.
func describeCall(tool, server string) string {
	if server == "" {
		return "tool " + textsafe.Escape(tool)
	}
	return "tool " + textsafe.Escape(tool) + " (server " + textsafe.Escape(server) + ")"
}

// previewArgs is ConfirmRequest.ArgsPreview, for the audit log.
func previewArgs(args json.RawMessage) string {
	t := strings.TrimSpace(string(args))
	if t == "" || t == "null" {
		return "{}"
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(t)); err == nil {
		t = b.String()
	}
	return textsafe.Preview(t, maxPreviewRunes)
}
