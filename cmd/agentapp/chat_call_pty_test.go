//go:build unix

package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

// TestChatCallRunsInATurn: /call runs a tool as the model's calls run,
// inside a turn, so a server may ask while it runs (issue 29 point 3).
// On a terminal, against server-everything over stdio:
// trigger-sampling-request reaches the model after the approval,
// trigger-elicitation-request shows the form, and an error is shown
// whole, not cut to its first 120 characters.
func TestChatCallRunsInATurn(t *testing.T) {
	bin := everythingBin(t)
	data := t.TempDir()
	// allow-all: the test is about what a server asks while its tool
	// runs, not about the question before it.
	f, out := startPTYChat(t, data, "--model", "offline", "--mcp", "everything="+bin, "--permission-mode", "allow-all")

	io.WriteString(f, `/call trigger-sampling-request {"prompt":"订单 A-1024 到哪了？","maxTokens":100}`+"\r")
	out.WaitFor(t, "Allow? [y/N] ", 30*time.Second)
	io.WriteString(f, "y\r")
	// The offline model answered the server's request; the server returns
	// the completion as the tool's result.
	out.WaitFor(t, "✓ trigger-sampling-request", 30*time.Second)
	out.WaitFor(t, "offline-demo", 30*time.Second)

	io.WriteString(f, "/call trigger-elicitation-request\r")
	out.WaitFor(t, "String (required): ", 30*time.Second)
	io.WriteString(f, "Grace\r")
	// The answer reached the form, which asks the next field; stop there.
	out.WaitFor(t, "String with date format (date): ", 30*time.Second)
	io.WriteString(f, ":cancel\r")
	out.WaitFor(t, "✓ trigger-elicitation-request", 30*time.Second)

	// An argument of the wrong type is refused before the call is sent
	// (issue 43: arguments are checked against the tool's schema), with
	// the check's message whole.
	io.WriteString(f, `/call get-sum {"a":"x"}`+"\r")
	out.WaitFor(t, `invalid arguments for get-sum: validating root: validating /properties/a: type: x has type "string", want "number"`, 30*time.Second)

	text := out.String()
	for _, bad := range []string{"not running a tool call", "(+"} {
		if strings.Contains(text, bad) {
			t.Errorf("output has %q:\n%s", bad, text)
		}
	}
}
