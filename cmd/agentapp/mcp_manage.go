package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentapp/agentapp/chat"
	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/spf13/cobra"
)

// defaultScope is where `mcp add` writes without --scope: the project's
// .mcp.json, as Claude Code adds to the current project by default (its
// "local" scope is also per project; agentapp has no private per-project
// file, and the project file is the one a chat in this directory reads).
const defaultScope = mcpconfig.ScopeProject

// approvalsFile is the file of the data directory that remembers which
// project servers the user approved.
const approvalsFile = "mcp_approvals.json"

// listCheckTimeout bounds each server's live check in `mcp list` and `mcp
// get`; the checks run at once, so the list takes about as long as the
// slowest server, never more than this.
const listCheckTimeout = 10 * time.Second

// precedence is how `mcp list` and the README explain which server of a
// name wins.
const precedence = "--mcp, then --config FILE (or ./agentapp.json), then the project's ./.mcp.json, then the user's file"

// manageFlags are the flags of the management commands.
type manageFlags struct {
	scope     string
	env       []string
	transport string
}

// newMCPManageCmds returns add, add-json, list, get, remove and approve. f
// holds the mcp command's persistent flags: --config names the file to
// edit instead of a scope, --header adds headers to an HTTP server.
func newMCPManageCmds(f *mcpFlags) []*cobra.Command {
	var mf manageFlags
	scopeFlag := func(c *cobra.Command, def string) {
		c.Flags().StringVarP(&mf.scope, "scope", "s", def, "user ($XDG_CONFIG_HOME/agentapp/mcp.json, for every project) or project (./.mcp.json, shared with the project)")
	}
	add := &cobra.Command{
		Use:   "add [--scope user|project] [-e KEY=VALUE…] NAME -- COMMAND [ARGS…]\n  agentapp mcp add --transport http|sse [--scope user|project] NAME URL [--header 'Name: value'…]",
		Short: "Add an MCP server to the user's or the project's config",
		Long: `add writes a server into a config file: by default the project's ./.mcp.json
(--scope project), or your own file with --scope user, or the file --config names.

A stdio server is the command after "--"; -e KEY=VALUE sets its environment
(write ${VAR} to keep a secret out of the file: it is expanded when the server
starts). An HTTP server is --transport http NAME URL, with --header 'Name: value'
(repeatable). The file is written atomically, 0600, keeping everything else in it.`,
		Example: `  agentapp mcp add memory -- npx -y @modelcontextprotocol/server-memory
  agentapp mcp add --scope user -e ROOT=/srv files -- npx -y @modelcontextprotocol/server-filesystem /srv
  agentapp mcp add --transport http crm https://crm.example.com/mcp --header 'Authorization: Bearer ${CRM_TOKEN}'`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return mcpAdd(cmd, f, &mf, args) },
	}
	scopeFlag(add, "")
	add.Flags().StringArrayVarP(&mf.env, "env", "e", nil, "environment variable of a stdio server, KEY=VALUE (repeatable)")
	add.Flags().StringVarP(&mf.transport, "transport", "t", "stdio", "stdio, http or sse")

	addJSON := &cobra.Command{
		Use:     "add-json [--scope user|project] NAME JSON",
		Short:   "Add an MCP server from its JSON entry, as in an mcpServers file",
		Example: `  agentapp mcp add-json weather '{"command": "uvx", "args": ["mcp-weather"], "env": {"KEY": "${WEATHER_KEY}"}}'`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw := json.RawMessage(args[1])
			if err := mcpconfig.CheckEntry(args[0], raw); err != nil {
				return mcpUsageError(cmd, "%v", err)
			}
			return writeServer(cmd, f, &mf, args[0], raw)
		},
	}
	scopeFlag(addJSON, "")

	list := &cobra.Command{
		Use:   "list",
		Short: "List the configured MCP servers of every scope, each with a live check",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return mcpList(cmd, f, "") },
	}
	get := &cobra.Command{
		Use:   "get NAME",
		Short: "Show one configured MCP server: its entry, file, scope and a live check",
		Args:  cobra.ExactArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return mcpList(cmd, f, args[0]) },
	}
	remove := &cobra.Command{
		Use:   "remove [--scope user|project] NAME",
		Short: "Remove an MCP server from the config",
		Args:  cobra.ExactArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return mcpRemove(cmd, f, &mf, args[0]) },
	}
	scopeFlag(remove, "")
	approve := &cobra.Command{
		Use:   "approve NAME…",
		Short: "Allow servers of this project's ./.mcp.json to run (the chat asks on a terminal)",
		Args:  cobra.MinimumNArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return mcpApprove(cmd, args) },
	}
	return []*cobra.Command{add, addJSON, list, get, remove, approve}
}

// targetFile is the file a management command edits: --config, else the
// scope's file.
func targetFile(cmd *cobra.Command, f *mcpFlags, mf *manageFlags, def mcpconfig.Scope) (string, mcpconfig.Scope, error) {
	if f.config != "" {
		if mf.scope != "" {
			return "", "", mcpUsageError(cmd, "give either --config FILE or --scope, not both")
		}
		return f.config, mcpconfig.ScopeFile, nil
	}
	scope := def
	if mf.scope != "" {
		s, err := mcpconfig.ParseScope(mf.scope)
		if err != nil {
			return "", "", mcpUsageError(cmd, "%v", err)
		}
		scope = s
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", "", err
	}
	path, err := mcpconfig.ScopeFilePath(scope, wd, os.Getenv)
	return path, scope, err
}

func mcpAdd(cmd *cobra.Command, f *mcpFlags, mf *manageFlags, args []string) error {
	own, command := args, []string(nil)
	if at := cmd.ArgsLenAtDash(); at >= 0 {
		own, command = args[:at], args[at:]
	}
	var e mcpconfig.Entry
	switch t := strings.ToLower(mf.transport); t {
	case "stdio":
		if len(own) > 1 && len(command) == 0 {
			// NAME COMMAND ARGS without "--" (no flag among them).
			own, command = own[:1], own[1:]
		}
		if len(own) != 1 || len(command) == 0 {
			return mcpUsageError(cmd, "add needs NAME -- COMMAND [ARGS…], e.g. agentapp mcp add memory -- npx -y @modelcontextprotocol/server-memory")
		}
		if len(f.headers) > 0 {
			return mcpUsageError(cmd, "--header applies to HTTP servers (--transport http)")
		}
		e.Command, e.Args = command[0], command[1:]
		for _, kv := range mf.env {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return mcpUsageError(cmd, "-e %q: want KEY=VALUE", kv)
			}
			if e.Env == nil {
				e.Env = map[string]string{}
			}
			e.Env[k] = v
		}
	case "http", "sse":
		if len(own) != 2 || len(command) > 0 {
			return mcpUsageError(cmd, "add --transport %s needs NAME URL, e.g. agentapp mcp add --transport %s crm https://crm.example.com/mcp", t, t)
		}
		if len(mf.env) > 0 {
			return mcpUsageError(cmd, "-e applies to stdio servers; send values to an HTTP server with --header")
		}
		e.Transport, e.URL = t, own[1]
		for _, h := range f.headers {
			name, value, err := mcpconfig.HeaderLine(h)
			if err != nil {
				return mcpUsageError(cmd, "%v", err)
			}
			if e.Headers == nil {
				e.Headers = map[string]string{}
			}
			e.Headers[name] = value
		}
	default:
		return mcpUsageError(cmd, "--transport %q: use stdio, http or sse", mf.transport)
	}
	raw := e.JSON()
	// The legacy SSE transport is written as asked; whether this build can
	// connect to it is the client's to say when the server is used.
	if e.Transport != "sse" {
		if err := mcpconfig.CheckEntry(own[0], raw); err != nil {
			return mcpUsageError(cmd, "%v", err)
		}
	} else if !mcpconfig.ValidServerName(own[0]) {
		return mcpUsageError(cmd, "%q is not a valid server name; use letters, digits, '_' and '-'", own[0])
	}
	return writeServer(cmd, f, mf, own[0], raw)
}

// writeServer adds the entry to the target file, refusing a name the file
// already has (as claude mcp add does: remove it first).
func writeServer(cmd *cobra.Command, f *mcpFlags, mf *manageFlags, name string, raw json.RawMessage) error {
	path, scope, err := targetFile(cmd, f, mf, defaultScope)
	if err != nil {
		return err
	}
	file, err := mcpconfig.OpenFile(path)
	if err != nil {
		return err
	}
	if _, ok := file.Entry(name); ok {
		return &exitError{code: 1, err: fmt.Errorf("%s already has a server named %q; remove it first (agentapp mcp remove %s%s) or choose another name", path, name, name, scopeArg(scope, path))}
	}
	file.Set(name, raw)
	if err := file.Save(); err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "Added MCP server %s to %s (%s scope).\n", name, path, scope)
	if scope == mcpconfig.ScopeProject {
		fmt.Fprintf(w, "The chat asks once before it starts a server of the project's %s; agentapp mcp approve %s allows it now.\n", mcpconfig.ProjectFile, name)
	}
	return nil
}

func scopeArg(scope mcpconfig.Scope, path string) string {
	if scope == mcpconfig.ScopeFile {
		return " --config " + path
	}
	return " --scope " + string(scope)
}

func mcpRemove(cmd *cobra.Command, f *mcpFlags, mf *manageFlags, name string) error {
	var paths []string
	var scopes []mcpconfig.Scope
	if f.config != "" || mf.scope != "" {
		path, scope, err := targetFile(cmd, f, mf, defaultScope)
		if err != nil {
			return err
		}
		paths, scopes = []string{path}, []mcpconfig.Scope{scope}
	} else {
		// Without --scope: the one scope that has the name.
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		for _, s := range mcpconfig.Scopes {
			p, err := mcpconfig.ScopeFilePath(s, wd, os.Getenv)
			if err != nil {
				continue
			}
			file, err := mcpconfig.OpenFile(p)
			if err != nil {
				return err
			}
			if _, ok := file.Entry(name); ok {
				paths, scopes = append(paths, p), append(scopes, s)
			}
		}
		if len(paths) > 1 {
			return mcpUsageError(cmd, "both the user and the project config have a server named %q; say which with --scope user or --scope project", name)
		}
	}
	for i, p := range paths {
		file, err := mcpconfig.OpenFile(p)
		if err != nil {
			return err
		}
		if !file.Remove(name) {
			continue
		}
		if err := file.Save(); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "Removed MCP server %s from %s (%s scope).\n", name, p, scopes[i])
		return nil
	}
	where := "the user's or this project's config"
	if len(paths) == 1 {
		where = paths[0]
	}
	return &exitError{code: 1, err: fmt.Errorf("no MCP server named %q in %s; agentapp mcp list shows the servers", name, where)}
}

// openApprovals opens the data directory's approvals.
func openApprovals(cmd *cobra.Command) (*mcpconfig.Approvals, error) {
	dir, err := dataDir(cmd)
	if err != nil {
		return nil, err
	}
	return mcpconfig.OpenApprovals(filepath.Join(dir, approvalsFile))
}

func mcpApprove(cmd *cobra.Command, names []string) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	path := filepath.Join(wd, mcpconfig.ProjectFile)
	file, err := mcpconfig.OpenFile(path)
	if err != nil {
		return err
	}
	if !file.Exists() {
		return &exitError{code: 1, err: fmt.Errorf("this directory has no %s; approve runs in the project's directory", mcpconfig.ProjectFile)}
	}
	a, err := openApprovals(cmd)
	if err != nil {
		return err
	}
	for _, n := range names {
		e, ok := file.Entry(n)
		if !ok {
			return &exitError{code: 1, err: fmt.Errorf("%s has no server named %q (it has: %s)", path, n, strings.Join(file.Names(), ", "))}
		}
		a.Approve(wd, n, e)
	}
	if err := a.Save(); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "Approved %s of %s; the chat starts %s from now on (until the entry changes).\n",
		strings.Join(names, ", "), path, plural(len(names), "it", "them"))
	return nil
}

// liveCheck is the outcome of connecting to a server once.
type liveCheck struct {
	tools int
	err   error
}

func (c liveCheck) String() string {
	switch {
	case c.err == nil:
		return fmt.Sprintf("✓ connected, %d %s", c.tools, plural(c.tools, "tool", "tools"))
	case chat.LoginHint(c.err) != "":
		return "needs login: " + chat.LoginHint(c.err)
	}
	msg, _, _ := strings.Cut(c.err.Error(), "\n")
	return "✗ failed: " + msg
}

// checkServers connects to each server at once, each for at most timeout,
// and closes it again.
func checkServers(ctx context.Context, cfgs []mcpconfig.Server, timeout time.Duration, logger *slog.Logger) []liveCheck {
	out := make([]liveCheck, len(cfgs))
	var wg sync.WaitGroup
	for i, c := range cfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c.ConnectTimeout <= 0 || c.ConnectTimeout > timeout {
				c.ConnectTimeout = timeout
			}
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			b, err := mcpclient.Connect(cctx, c, mcpclient.WithLogger(logger))
			if err != nil {
				out[i] = liveCheck{err: err}
				return
			}
			out[i] = liveCheck{tools: len(b.Tools())}
			_ = b.Close()
		}()
	}
	wg.Wait()
	return out
}

// target is how a server is reached, for the list.
func target(s mcpconfig.Server) string {
	if s.IsHTTP() {
		if s.Transport == mcpconfig.TransportSSE {
			return s.URL + " (legacy SSE)"
		}
		return s.URL + " (HTTP)"
	}
	return s.CommandLine()
}

// mcpList is `mcp list` (only == "") and `mcp get NAME`.
func mcpList(cmd *cobra.Command, f *mcpFlags, only string) error {
	w := cmd.OutOrStdout()
	logger := cmdLogger(cmd, cmd.ErrOrStderr(), slog.LevelWarn)
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	res, err := mcpconfig.LoadScopes(mcpconfig.ScopesOptions{
		Dir: wd, ConfigFile: f.config, DefaultFile: defaultConfigFile, Getenv: os.Getenv,
		Load: &mcpconfig.LoadOptions{Logger: logger, LookupEnv: os.LookupEnv},
	})
	if err != nil {
		return err
	}
	approvals, err := openApprovals(cmd)
	if err != nil {
		return err
	}
	servers := res.Servers
	if only != "" {
		i := slices.IndexFunc(servers, func(s mcpconfig.ScopedServer) bool { return s.Server.Name == only })
		if i < 0 {
			return &exitError{code: 1, err: fmt.Errorf("no MCP server named %q is configured; agentapp mcp list shows the servers", only)}
		}
		servers = servers[i : i+1]
	}
	// Only servers that would run are checked: a disabled one is not, and
	// neither is an unapproved project server, whose command the user has
	// not agreed to run.
	var check []mcpconfig.Server
	var checkIdx []int
	state := make([]string, len(servers))
	for i, s := range servers {
		switch {
		case s.Err != nil:
			state[i] = "✗ invalid: " + s.Err.Error()
		case s.Disabled:
			state[i] = "disabled in " + s.File
		case s.Scope == mcpconfig.ScopeProject && approvals.Declined(wd, s.Server.Name, s.Entry):
			state[i] = "declined (agentapp mcp approve " + s.Server.Name + " allows it)"
		case s.Scope == mcpconfig.ScopeProject && !approvals.Approved(wd, s.Server.Name, s.Entry):
			state[i] = "not approved yet (the chat asks on a terminal; agentapp mcp approve " + s.Server.Name + " allows it)"
		default:
			check = append(check, s.Server)
			checkIdx = append(checkIdx, i)
		}
	}
	timeout := listCheckTimeout
	if f.connectTimeout > 0 {
		timeout = f.connectTimeout
	}
	ctx, stop := context.WithCancel(cmd.Context())
	defer stop()
	for j, c := range checkServers(ctx, check, timeout, logger) {
		state[checkIdx[j]] = c.String()
	}
	if only != "" {
		return printGet(w, servers[0], state[0], res)
	}
	if len(servers) == 0 {
		fmt.Fprintln(w, "No MCP servers are configured. Add one with agentapp mcp add NAME -- COMMAND (see agentapp mcp add --help).")
	} else {
		fmt.Fprintf(w, "%d MCP %s (where two name the same server, the first of these wins: %s):\n", len(servers), plural(len(servers), "server", "servers"), precedence)
	}
	for i, s := range servers {
		fmt.Fprintln(w, textsafe.Escape(fmt.Sprintf("  %s (%s): %s — %s", s.Server.Name, s.Scope, targetOf(s), state[i])))
	}
	for _, s := range res.Shadowed {
		fmt.Fprintln(w, textsafe.Escape(fmt.Sprintf("  %s (%s, %s): replaced by the server of that name above", s.Server.Name, s.Scope, s.File)))
	}
	fmt.Fprintln(w, "Files:")
	for _, sf := range res.Files {
		note := ""
		if !sf.Exists {
			note = " (none)"
		}
		fmt.Fprintf(w, "  %s: %s%s\n", sf.Scope, sf.Path, note)
	}
	return nil
}

func targetOf(s mcpconfig.ScopedServer) string {
	switch {
	case s.Err != nil:
		return "invalid entry"
	case s.Disabled:
		return "disabled"
	}
	return target(s.Server)
}

// printGet is `mcp get NAME`: the entry as written and where.
func printGet(w io.Writer, s mcpconfig.ScopedServer, state string, res *mcpconfig.Resolved) error {
	fmt.Fprintln(w, textsafe.Escape(s.Server.Name+":"))
	fmt.Fprintf(w, "  scope:  %s\n", s.Scope)
	fmt.Fprintf(w, "  file:   %s\n", s.File)
	if !s.Disabled && s.Err == nil {
		fmt.Fprintln(w, textsafe.Escape("  target: "+target(s.Server)))
	}
	fmt.Fprintln(w, textsafe.Escape("  status: "+state))
	var pretty strings.Builder
	if b, err := json.MarshalIndent(json.RawMessage(s.Entry), "  ", "  "); err == nil {
		pretty.Write(b)
	} else {
		pretty.Write(s.Entry)
	}
	fmt.Fprintln(w, "  entry:  "+escapeLinesCLI(pretty.String()))
	for _, sh := range res.Shadowed {
		if sh.Server.Name == s.Server.Name {
			fmt.Fprintf(w, "  it replaces the server of that name in %s (%s scope)\n", sh.File, sh.Scope)
		}
	}
	return nil
}

func escapeLinesCLI(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = textsafe.Escape(l)
	}
	return strings.Join(lines, "\n")
}
