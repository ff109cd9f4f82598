package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentapp/agentapp/internal/term"
	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/mcpconfig"
)

// approveProjectServers returns the project servers (from ./.mcp.json) that
// may run: those approved before, and on a terminal those the user approves
// now, once each (the answer is kept in the data directory). A project's
// file comes with the project, from whoever wrote it, and names commands to
// run, so none runs unasked. Without a terminal nobody can be asked: an
// unapproved server is skipped with a warning that says how to approve it.
func approveProjectServers(dataDir string, project []mcpconfig.ScopedServer, stdin io.Reader, stderr io.Writer) ([]mcpconfig.Server, error) {
	if len(project) == 0 {
		return nil, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	a, err := mcpconfig.OpenApprovals(filepath.Join(dataDir, approvalsFile))
	if err != nil {
		return nil, err
	}
	interactive := term.IsTerminal(stdin)
	var ok []mcpconfig.Server
	changed := false
	for _, s := range project {
		name := s.Server.Name
		if a.Approved(wd, name, s.Entry) {
			ok = append(ok, s.Server)
			continue
		}
		if a.Declined(wd, name, s.Entry) {
			fmt.Fprintln(stderr, textsafe.Escape(fmt.Sprintf("agentapp: skipped MCP server %s of %s: you declined it (agentapp mcp approve %s allows it)", name, s.File, name)))
			continue
		}
		if !interactive {
			fmt.Fprintln(stderr, textsafe.Escape(fmt.Sprintf("agentapp: warning: skipped MCP server %s of %s: a project's servers run only once you approve them; run agentapp mcp approve %s in this directory, or start the chat on a terminal to be asked", name, s.File, name)))
			continue
		}
		fmt.Fprintln(stderr, textsafe.Escape(fmt.Sprintf("This project's %s wants to start MCP server %s: %s", mcpconfig.ProjectFile, name, target(s.Server))))
		fmt.Fprint(stderr, "Allow it? The answer is remembered for this project. [y/N] ")
		line, err := readLineUnbuffered(stdin)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("read the answer: %w", err)
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			a.Approve(wd, name, s.Entry)
			changed = true
			ok = append(ok, s.Server)
		case "":
			// No answer (end of input) is not a no: ask again next time.
			fmt.Fprintln(stderr, textsafe.Escape(fmt.Sprintf("MCP server %s not started; the chat asks again next time.", name)))
		default:
			a.Decline(wd, name, s.Entry)
			changed = true
			fmt.Fprintln(stderr, textsafe.Escape(fmt.Sprintf("MCP server %s not started, and not asked about again while its entry stays the same (agentapp mcp approve %s allows it later).", name, name)))
		}
	}
	if changed {
		if err := a.Save(); err != nil {
			return nil, err
		}
	}
	return ok, nil
}

// readLineUnbuffered reads one line a byte at a time, so that nothing
// after it is taken from the terminal the line editor reads next.
func readLineUnbuffered(r io.Reader) (string, error) {
	var b strings.Builder
	buf := make([]byte, 1)
	for b.Len() < 1024 {
		n, err := r.Read(buf)
		if n == 1 {
			if buf[0] == '\n' {
				return b.String(), nil
			}
			b.WriteByte(buf[0])
		}
		if err != nil {
			return b.String(), err
		}
	}
	return b.String(), nil
}

// hooksApproval is the name the project's hooks are approved under; a
// server name cannot hold '#', so it never meets a server's approval.
const hooksApproval = "#hooks"

// approveProjectHooks says whether the hooks of the project's .mcp.json may
// run: approved before (for this very object), or approved now on a
// terminal after the commands were shown. Hooks run commands on every turn,
// so like the project's servers none runs unasked; without a terminal they
// are skipped with a warning that says how to approve them.
func approveProjectHooks(dataDir string, f mcpconfig.ScopedHooks, stdin io.Reader, stderr io.Writer) bool {
	warn := func(msg string) { fmt.Fprintln(stderr, textsafe.Escape("agentapp: warning: "+msg)) }
	wd, err := os.Getwd()
	if err != nil {
		warn("skipped the hooks of " + f.File + ": " + err.Error())
		return false
	}
	a, err := mcpconfig.OpenApprovals(filepath.Join(dataDir, approvalsFile))
	if err != nil {
		warn("skipped the hooks of " + f.File + ": " + err.Error())
		return false
	}
	if a.Approved(wd, hooksApproval, f.Entry) {
		return true
	}
	cmds := f.Hooks.Commands()
	if !term.IsTerminal(stdin) {
		warn(fmt.Sprintf("skipped the hooks of %s (commands: %s): a project's hooks run only once you approve them; start agentapp chat on a terminal in this directory to be asked, or move them to your own config file", f.File, strings.Join(cmds, "; ")))
		return false
	}
	fmt.Fprintln(stderr, textsafe.Escape(fmt.Sprintf("This project's %s has hooks that run these commands at points of each session:", mcpconfig.ProjectFile)))
	for _, c := range cmds {
		fmt.Fprintln(stderr, textsafe.Escape("  "+c))
	}
	fmt.Fprint(stderr, "Allow them? The answer is remembered until they change. [y/N] ")
	line, _ := readLineUnbuffered(stdin)
	if strings.ToLower(strings.TrimSpace(line)) != "y" && strings.ToLower(strings.TrimSpace(line)) != "yes" {
		fmt.Fprintln(stderr, "The project's hooks do not run; the chat asks again next time.")
		return false
	}
	a.Approve(wd, hooksApproval, f.Entry)
	if err := a.Save(); err != nil {
		warn("the approval of the hooks could not be saved: " + err.Error())
	}
	return true
}
