//go:build unix

package main

import (
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentapp/agentapp/internal/testkit"
	"github.com/creack/pty"
)

// On a terminal, agentapp mcp asks the server's form itself (--elicit
// ask is the default there): the answers typed reach the server, checked
// against the schema, with the defaults filled in where Enter was pressed.
func TestMCPElicitOnATerminal(t *testing.T) {
	bin := everythingBin(t)
	cmd := exec.Command(agentappBin(t), "mcp", "call", "trigger-elicitation-request", "--", bin)
	cmd.Dir = t.TempDir()
	f, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := &testkit.SyncBuffer{}
	copied := make(chan struct{})
	go func() { io.Copy(out, f); close(copied) }()
	out.WaitFor(t, "String (required): ", 30*time.Second)
	// name, birthdate, check, email (invalid, then valid), firstLine,
	// homepage, integer, legacyTitledEnum, number, titledMultipleSelectEnum,
	// titledSingleSelectEnum, untitledMultipleSelectEnum,
	// untitledSingleSelectEnum, and the confirmation.
	for _, line := range []string{"Grace", "", "n", "nope", "grace@example.com", "", "", "", "2", "", "", "3", "", "", ""} {
		io.WriteString(f, line+"\r")
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit: %v\n%s", err, out.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("agentapp mcp did not finish:\n%s", out.String())
	}
	// The process has exited; the copy from the terminal ends once it
	// has read the last lines.
	select {
	case <-copied:
	case <-time.After(10 * time.Second):
	}
	text := out.String()
	for _, want := range []string{"not valid: want an e-mail address", `- Name: Grace`, `- Agreed to terms: false`, `- Email: grace@example.com`, `- Favorite Integer: 42`, `\"legacyTitledEnum\": \"pet-2\"`, `\"titledSingleSelectEnum\": \"hero-3\"`} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
}
