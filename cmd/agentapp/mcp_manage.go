package main

import (
	"context"
	"encoding/json"
	"errors"
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
	"github.com/spf13/pflag"
)

// defaultScope is where `mcp add` writes without --scope: the local scope,
// the user's private servers of this project, as Claude Code's `mcp add`
// does; project (the shared .mcp.json) and user are asked for.
const defaultScope = mcpconfig.ScopeLocal

// approvalsFile is the file of the data directory that remembers which
// project servers the user approved.
const approvalsFile = "mcp_approvals.json"

// listCheckTimeout bounds each server's live check in `mcp list` and `mcp
// get`; the checks run at once, so the list takes about as long as the
// slowest server, never more than this.
const listCheckTimeout = 10 * time.Second

// precedence is how `mcp list` and the README explain which server of a
// name wins.
const precedence = "--mcp, then --config FILE (or ./agentapp.json), then local (yours, this project), then project (./.mcp.json), then user (yours, every project)"

// manageFlags are the flags of the management commands.
type manageFlags struct {
	scope     string
	env       []string
	transport string
	json      bool
	revoke    bool
	file      string // add-from-claude-desktop --file
}

// manageKeep are the inherited flags that apply to the management
// commands; the rest (--server, --token, --timeout, the OAuth and client
// flags) are for the client commands, and are hidden from these commands'
// help and refused when given. --data-dir, where the approvals are kept,
// is given to the commands that read them.
var manageKeep = []string{"config", "log-format"}

// onlyFlags hides from c's help the inherited flags that are not in keep
// (nor extra), and refuses them when given, so that `mcp add --help` lists
// what applies to add.
func onlyFlags(c *cobra.Command, extra ...string) {
	keep := append(slices.Clone(manageKeep), extra...)
	inapplicable := func(cmd *cobra.Command, visit func(*pflag.Flag)) {
		cmd.InheritedFlags().VisitAll(func(fl *pflag.Flag) {
			if !slices.Contains(keep, fl.Name) {
				visit(fl)
			}
		})
	}
	c.SetHelpFunc(func(cmd *cobra.Command, args []string) {
		var hidden []*pflag.Flag
		inapplicable(cmd, func(fl *pflag.Flag) {
			if !fl.Hidden {
				fl.Hidden = true
				hidden = append(hidden, fl)
			}
		})
		defer func() {
			for _, fl := range hidden {
				fl.Hidden = false
			}
		}()
		cmd.Root().HelpFunc()(cmd, args)
	})
	c.PreRunE = func(cmd *cobra.Command, _ []string) error {
		var bad []string
		inapplicable(cmd, func(fl *pflag.Flag) {
			if fl.Changed {
				bad = append(bad, "--"+fl.Name)
			}
		})
		if len(bad) > 0 {
			return mcpUsageError(cmd, "%s %s not apply to %s", strings.Join(bad, ", "), plural(len(bad), "does", "do"), cmd.Name())
		}
		return nil
	}
}

// newMCPManageCmds returns add, add-json, list, get, remove and approve. f
// holds the mcp command's persistent flags: --config names the file to
// edit instead of a scope, --header adds headers to an HTTP server.
func newMCPManageCmds(f *mcpFlags) []*cobra.Command {
	var mf manageFlags
	scopeFlag := func(c *cobra.Command) {
		c.Flags().StringVarP(&mf.scope, "scope", "s", "", "local (the default: yours, for this project only, kept in your config directory), project (./.mcp.json, shared with the project) or user (yours, for every project)")
	}
	jsonFlag := func(c *cobra.Command) {
		c.Flags().BoolVar(&mf.json, "json", false, "print JSON (secrets masked as in the text)")
	}
	add := &cobra.Command{
		Use:   "add [--scope local|project|user] [-e KEY=VALUE…] NAME -- COMMAND [ARGS…]\n  agentapp mcp add [--transport http|sse] [--scope …] NAME URL [-H 'Name: value'…]",
		Short: "Add an MCP server (by default yours, for this project only)",
		Long: `add writes a server into a config file. The scopes, as in Claude Code:

  local    (the default) yours, for this project only: kept in your config
           directory ($XDG_CONFIG_HOME/agentapp/projects/…), never shared
  project  ./.mcp.json, shared with everyone who works on the project; the
           chat asks each user once before it starts such a server
  user     yours, for every project ($XDG_CONFIG_HOME/agentapp/mcp.json)

When two scopes name the same server, local wins over project, and project
over user (--mcp and --config FILE come before all three).

A stdio server is the command after "--"; -e KEY=VALUE sets its environment.
An HTTP server is NAME URL: a URL is recognised and added as --transport http
(give --transport sse for a legacy SSE server), with -H/--header 'Name: value'
(repeatable). Write ${VAR} to keep a secret out of the file: it is expanded
from your environment when the server starts. The file is written
atomically, 0600, keeping everything else in it.`,
		Example: `  agentapp mcp add memory -- npx -y @modelcontextprotocol/server-memory
  agentapp mcp add --scope user -e ROOT=/srv files -- npx -y @modelcontextprotocol/server-filesystem /srv
  agentapp mcp add --scope project crm https://crm.example.com/mcp -H 'Authorization: Bearer ${CRM_TOKEN}'`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return mcpAdd(cmd, f, &mf, args) },
	}
	scopeFlag(add)
	add.Flags().StringArrayVarP(&mf.env, "env", "e", nil, "environment variable of a stdio server, KEY=VALUE (repeatable)")
	add.Flags().StringVarP(&mf.transport, "transport", "t", "", "stdio, http or sse (default: http for a URL, else stdio)")
	onlyFlags(add, "header")

	addJSON := &cobra.Command{
		Use:     "add-json [--scope local|project|user] NAME JSON",
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
	scopeFlag(addJSON)
	onlyFlags(addJSON)

	fromDesktop := &cobra.Command{
		Use:   "add-from-claude-desktop [--scope local|project|user] [NAME…]",
		Short: "Import servers from Claude Desktop's config (the named ones, or all)",
		Long: `add-from-claude-desktop copies servers from Claude Desktop's
claude_desktop_config.json into a scope (local by default): the servers
named, or all of them. A name the scope already has is skipped with a note.
The file is looked up where Claude Desktop keeps it:

  macOS    ~/Library/Application Support/Claude/claude_desktop_config.json
  Windows  %APPDATA%\Claude\claude_desktop_config.json
  Linux    $XDG_CONFIG_HOME/Claude/claude_desktop_config.json (~/.config/Claude/…)

or given with --file.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return mcpAddFromDesktop(cmd, f, &mf, args) },
	}
	scopeFlag(fromDesktop)
	fromDesktop.Flags().StringVar(&mf.file, "file", "", "Claude Desktop's config file (default: where Claude Desktop keeps it on this system)")
	onlyFlags(fromDesktop)

	list := &cobra.Command{
		Use:   "list [--json]",
		Short: "List the configured MCP servers of every scope, each with a live check",
		Long: `list shows every configured server, the scope and file it comes from, and
the outcome of connecting to it once (a failed server with the lines of its
stderr that say why). It exits with status 3 when a server failed to connect
or its entry is invalid, so a script can check the setup.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return mcpList(cmd, f, &mf, "") },
	}
	jsonFlag(list)
	onlyFlags(list, "connect-timeout", "data-dir")
	get := &cobra.Command{
		Use:   "get [--json] NAME",
		Short: "Show one configured MCP server: its entry (secrets masked), file, scope and a live check",
		Args:  cobra.ExactArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return mcpList(cmd, f, &mf, args[0]) },
	}
	jsonFlag(get)
	onlyFlags(get, "connect-timeout", "data-dir")
	remove := &cobra.Command{
		Use:   "remove [--scope local|project|user] NAME",
		Short: "Remove an MCP server from the config",
		Args:  cobra.ExactArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return mcpRemove(cmd, f, &mf, args[0]) },
	}
	scopeFlag(remove)
	onlyFlags(remove)
	approve := &cobra.Command{
		Use:   "approve [--revoke] NAME…",
		Short: "Allow servers of this project's ./.mcp.json to run (the chat asks on a terminal); --revoke takes it back",
		Args:  cobra.MinimumNArgs(1),
		RunE:  func(cmd *cobra.Command, args []string) error { return mcpApprove(cmd, args, mf.revoke) },
	}
	approve.Flags().BoolVar(&mf.revoke, "revoke", false, "forget your approval (or refusal) of these servers: the chat asks again")
	onlyFlags(approve, "data-dir")
	reset := &cobra.Command{
		Use:   "reset-project-choices",
		Short: "Forget every approval and refusal of this project's ./.mcp.json servers: the chat asks again",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return mcpResetChoices(cmd) },
	}
	onlyFlags(reset, "data-dir")
	return []*cobra.Command{add, addJSON, fromDesktop, list, get, remove, approve, reset}
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

// isURL reports whether s is an http(s) URL, which `mcp add` adds as an
// HTTP server rather than as a command.
func isURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

func mcpAdd(cmd *cobra.Command, f *mcpFlags, mf *manageFlags, args []string) error {
	own, command := args, []string(nil)
	if at := cmd.ArgsLenAtDash(); at >= 0 {
		own, command = args[:at], args[at:]
	}
	t := strings.ToLower(mf.transport)
	if t == "" {
		// NAME URL, or NAME -- URL: an HTTP server, never a command.
		t = "stdio"
		if len(own) == 2 && len(command) == 0 && isURL(own[1]) || len(own) == 1 && len(command) == 1 && isURL(command[0]) {
			if len(command) == 1 {
				own, command = append(own, command[0]), nil
			}
			t = "http"
			fmt.Fprintf(cmd.ErrOrStderr(), "agentapp: %s is a URL: adding it as a streamable HTTP server (--transport http; give --transport sse for a legacy SSE server)\n", textsafe.Escape(own[1]))
		}
	}
	var e mcpconfig.Entry
	switch t {
	case "stdio":
		if len(own) > 1 && len(command) == 0 {
			// NAME COMMAND ARGS without "--" (no flag among them).
			own, command = own[:1], own[1:]
		}
		if len(own) != 1 || len(command) == 0 {
			return mcpUsageError(cmd, "add needs NAME -- COMMAND [ARGS…], e.g. agentapp mcp add memory -- npx -y @modelcontextprotocol/server-memory")
		}
		if isURL(command[0]) {
			return mcpUsageError(cmd, "%s is a URL, not a command; add an HTTP server with agentapp mcp add --transport http %s %s", command[0], own[0], command[0])
		}
		if len(f.headers) > 0 {
			return mcpUsageError(cmd, "--header applies to HTTP servers (a URL, or --transport http)")
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
		if !isURL(own[1]) {
			return mcpUsageError(cmd, "%q is not an http(s) URL", own[1])
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
	if scope == mcpconfig.ScopeProject {
		warnSharedSecrets(cmd.ErrOrStderr(), path, raw)
	}
	file.Set(name, raw)
	if scope == mcpconfig.ScopeLocal {
		setLocalProject(file)
	}
	if err := file.Save(); err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "Added MCP server %s to %s (%s scope).\n", name, path, scope)
	if scope == mcpconfig.ScopeLocal {
		fmt.Fprintln(w, "It is yours, for this project only; --scope project shares it in ./.mcp.json, --scope user adds it to every project.")
	}
	if scope == mcpconfig.ScopeProject {
		fmt.Fprintf(w, "The chat asks once before it starts a server of the project's %s; agentapp mcp approve %s allows it now.\n", mcpconfig.ProjectFile, name)
	}
	return nil
}

// setLocalProject records in a local scope's file which project it is for,
// for a person who opens it (the file's path holds only a digest).
func setLocalProject(file *mcpconfig.File) {
	wd, err := os.Getwd()
	if err != nil {
		return
	}
	p, _ := json.Marshal(mcpconfig.ProjectKey(wd))
	file.SetTop("project", p)
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
			names := make([]string, len(scopes))
			for i, sc := range scopes {
				names[i] = string(sc)
			}
			return mcpUsageError(cmd, "the %s scopes each have a server named %q; say which with --scope %s", strings.Join(names, " and "), name, strings.Join(names, " or --scope "))
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
	where := "your (local or user) or this project's config"
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

// projectFileHere opens the working directory's .mcp.json, which must
// exist.
func projectFileHere() (wd string, file *mcpconfig.File, err error) {
	wd, err = os.Getwd()
	if err != nil {
		return "", nil, err
	}
	path := filepath.Join(wd, mcpconfig.ProjectFile)
	file, err = mcpconfig.OpenFile(path)
	if err != nil {
		return "", nil, err
	}
	if !file.Exists() {
		return "", nil, &exitError{code: 1, err: fmt.Errorf("this directory has no %s; run this in the project's directory", mcpconfig.ProjectFile)}
	}
	return wd, file, nil
}

func mcpApprove(cmd *cobra.Command, names []string, revoke bool) error {
	a, err := openApprovals(cmd)
	if err != nil {
		return err
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	if revoke {
		// A server whose entry is gone can still be revoked: the
		// approval is what is asked about, not the file.
		var none []string
		for _, n := range names {
			if !a.Revoke(wd, n) {
				none = append(none, n)
			}
		}
		if len(none) > 0 {
			return &exitError{code: 1, err: fmt.Errorf("you neither approved nor declined %s in %s; nothing was changed (agentapp mcp list shows each server's state)", strings.Join(none, ", "), wd)}
		}
		if err := a.Save(); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "Forgot your choice about %s of %s; the chat asks again before it starts %s.\n",
			strings.Join(names, ", "), filepath.Join(wd, mcpconfig.ProjectFile), plural(len(names), "it", "them"))
		return nil
	}
	wd, file, err := projectFileHere()
	if err != nil {
		return err
	}
	for _, n := range names {
		e, ok := file.Entry(n)
		if !ok {
			return &exitError{code: 1, err: fmt.Errorf("%s has no server named %q (it has: %s)", file.Path, n, strings.Join(file.Names(), ", "))}
		}
		a.Approve(wd, n, e)
	}
	if err := a.Save(); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "Approved %s of %s; the chat starts %s from now on (until the entry changes; agentapp mcp approve --revoke NAME takes it back).\n",
		strings.Join(names, ", "), file.Path, plural(len(names), "it", "them"))
	return nil
}

// mcpResetChoices is `mcp reset-project-choices`.
func mcpResetChoices(cmd *cobra.Command) error {
	a, err := openApprovals(cmd)
	if err != nil {
		return err
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	n := a.ResetProject(wd)
	if err := a.Save(); err != nil {
		return err
	}
	if n == 0 {
		fmt.Fprintf(cmd.OutOrStdout(), "You had made no choice about the servers of %s; nothing to forget.\n", filepath.Join(wd, mcpconfig.ProjectFile))
		return nil
	}
	fmt.Fprintf(cmd.OutOrStdout(), "Forgot %d %s about the servers of %s; the chat asks again before it starts each.\n",
		n, plural(n, "choice", "choices"), filepath.Join(wd, mcpconfig.ProjectFile))
	return nil
}

// liveCheck is the outcome of connecting to a server once.
type liveCheck struct {
	tools int
	err   error
}

// status is the check's one-word state, for --json.
func (c liveCheck) status() string {
	switch {
	case c.err == nil:
		return "connected"
	case chat.LoginHint(c.err) != "":
		return "needs-login"
	}
	return "failed"
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

// failureSummary is a failed connect in one line: the error's first line
// and the lines of the server's stderr that say why, so that a start-up
// warning says "command not found: agentapp" or "FATAL: DATABASE_URL is
// not set" rather than only that the server failed.
func failureSummary(err error) string {
	if err == nil {
		return "no reason given"
	}
	// The callers name the command that checks the server.
	head, _, _ := strings.Cut(withoutHandCheck(err).Error(), "\n")
	if why := mcpclient.FailureReason(err); len(why) > 0 {
		head += " — its stderr says: " + strings.Join(why, " … ")
	}
	return head
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
			// The chat's capabilities (sampling, elicitation, roots):
			// a server may offer tools only to a client that has them,
			// and the count is the one the chat sees. Nobody answers a
			// request here (no chat runs), so each is refused.
			opts := append((&chat.ClientSide{}).ConnectOptions(0), mcpclient.WithLogger(logger), mcpclient.WithRoots(workingDirRoots()))
			b, err := mcpclient.Connect(cctx, c, opts...)
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
			return maskURL(s.URL) + " (legacy SSE)"
		}
		return maskURL(s.URL) + " (HTTP)"
	}
	return maskArgs(s.CommandLine())
}

// serverView is one server as `mcp list` and `mcp get` show it, and as
// --json prints it.
type serverView struct {
	Name   string `json:"name"`
	Scope  string `json:"scope"`
	File   string `json:"file"`
	Target string `json:"target,omitempty"`
	// Status is connected, failed, needs-login, invalid, disabled,
	// not-approved or declined.
	Status string `json:"status"`
	// Detail is the state in words, as the text shows it.
	Detail string `json:"detail"`
	Tools  *int   `json:"tools,omitempty"`
	// Error is the whole error of a failed or invalid server.
	Error string `json:"error,omitempty"`
	// StderrErrors are the lines of a failed stdio server's stderr that
	// say why (mcpclient.FailureReason); StderrTail its last lines.
	StderrErrors []string        `json:"stderrErrors,omitempty"`
	StderrTail   []string        `json:"stderrTail,omitempty"`
	Entry        json.RawMessage `json:"entry,omitempty"`
	// Replaces are the servers of this name in scopes it wins over.
	Replaces []shadowView `json:"replaces,omitempty"`
}

type shadowView struct {
	Scope string `json:"scope"`
	File  string `json:"file"`
}

// failed reports whether the server is one `mcp list` exits non-zero for.
func (v serverView) failed() bool { return v.Status == "failed" || v.Status == "invalid" }

// mcpList is `mcp list` (only == "") and `mcp get NAME`.
func mcpList(cmd *cobra.Command, f *mcpFlags, mf *manageFlags, only string) error {
	w := cmd.OutOrStdout()
	logger := cmdLogger(cmd, cmd.ErrOrStderr(), slog.LevelWarn)
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	res, err := mcpconfig.LoadScopes(mcpconfig.ScopesOptions{
		Dir: wd, ConfigFile: f.config, DefaultFile: defaultConfigFile, Getenv: os.Getenv,
		Load:       &mcpconfig.LoadOptions{Logger: logger, LookupEnv: os.LookupEnv},
		SkipBroken: true,
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
	views := make([]serverView, len(servers))
	for i, s := range servers {
		v := serverView{Name: s.Server.Name, Scope: string(s.Scope), File: s.File, Entry: maskEntry(s.Entry)}
		switch {
		case s.Err != nil:
			v.Status, v.Detail, v.Error = "invalid", "✗ invalid: "+s.Err.Error(), s.Err.Error()
		case s.Disabled:
			v.Status, v.Detail = "disabled", "disabled in "+s.File
		case s.Scope == mcpconfig.ScopeProject && approvals.Declined(wd, s.Server.Name, s.Entry):
			v.Status, v.Detail = "declined", "declined (agentapp mcp approve "+s.Server.Name+" allows it)"
		case s.Scope == mcpconfig.ScopeProject && !approvals.Approved(wd, s.Server.Name, s.Entry):
			v.Status, v.Detail = "not-approved", "not approved yet (the chat asks on a terminal; agentapp mcp approve "+s.Server.Name+" allows it)"
		default:
			check = append(check, s.Server)
			checkIdx = append(checkIdx, i)
		}
		if s.Err == nil && !s.Disabled {
			v.Target = target(s.Server)
		}
		for _, sh := range res.Shadowed {
			if sh.Server.Name == s.Server.Name {
				v.Replaces = append(v.Replaces, shadowView{Scope: string(sh.Scope), File: sh.File})
			}
		}
		views[i] = v
	}
	timeout := listCheckTimeout
	if f.connectTimeout > 0 {
		timeout = f.connectTimeout
	}
	ctx, stop := context.WithCancel(cmd.Context())
	defer stop()
	for j, c := range checkServers(ctx, check, timeout, logger) {
		v := &views[checkIdx[j]]
		v.Status, v.Detail = c.status(), c.String()
		if c.err == nil {
			n := c.tools
			v.Tools = &n
		} else {
			v.Error = c.err.Error()
			v.StderrErrors = mcpclient.FailureReason(c.err)
			var ce *mcpclient.ConnectError
			if errors.As(c.err, &ce) {
				v.StderrTail = ce.StderrTail
			}
		}
	}
	var failed []string
	for _, v := range views {
		if v.failed() {
			failed = append(failed, v.Name)
		}
	}
	switch {
	case mf.json && only != "":
		err = mcpWriteJSON(w, views[0])
	case mf.json:
		err = mcpWriteJSON(w, listJSON(views, res))
	case only != "":
		printGet(w, views[0])
	default:
		printList(w, views, res)
	}
	if err != nil {
		return err
	}
	if len(failed) > 0 {
		return &exitError{code: mcpExitConnection, err: fmt.Errorf("%d of %d MCP %s failed (did not connect, or the entry is invalid): %s",
			len(failed), len(views), plural(len(views), "server", "servers"), strings.Join(failed, ", "))}
	}
	return nil
}

// listJSON is `mcp list --json`.
func listJSON(views []serverView, res *mcpconfig.Resolved) any {
	type fileJSON struct {
		Scope   string `json:"scope"`
		Path    string `json:"path"`
		Exists  bool   `json:"exists"`
		Skipped string `json:"skipped,omitempty"`
	}
	files := []fileJSON{}
	for _, sf := range res.Files {
		fj := fileJSON{Scope: string(sf.Scope), Path: sf.Path, Exists: sf.Exists}
		for _, sk := range res.Skipped {
			if sk.File == sf.Path {
				fj.Skipped = sk.Error()
			}
		}
		files = append(files, fj)
	}
	if views == nil {
		views = []serverView{}
	}
	return map[string]any{"servers": views, "files": files, "precedence": precedence}
}

func printList(w io.Writer, views []serverView, res *mcpconfig.Resolved) {
	if len(views) == 0 {
		fmt.Fprintln(w, "No MCP servers are configured. Add one with agentapp mcp add NAME -- COMMAND (see agentapp mcp add --help).")
	} else {
		fmt.Fprintf(w, "%d MCP %s (where two name the same server, the first of these wins: %s):\n", len(views), plural(len(views), "server", "servers"), precedence)
	}
	for _, v := range views {
		t := v.Target
		switch v.Status {
		case "invalid":
			t = "invalid entry"
		case "disabled":
			t = "disabled"
		}
		fmt.Fprintln(w, textsafe.Escape(fmt.Sprintf("  %s (%s): %s — %s", v.Name, v.Scope, t, v.Detail)))
		for _, l := range v.StderrErrors {
			fmt.Fprintln(w, "      its stderr says: "+l)
		}
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
		for _, sk := range res.Skipped {
			if sk.File == sf.Path {
				note = " (skipped, it does not load: " + strings.TrimPrefix(sk.Error(), sk.File+": ") + ")"
			}
		}
		fmt.Fprintln(w, textsafe.Escape(fmt.Sprintf("  %s: %s%s", sf.Scope, sf.Path, note)))
	}
}

// printGet is `mcp get NAME`: the entry as written (secrets masked), where,
// and the whole outcome of the check.
func printGet(w io.Writer, v serverView) {
	fmt.Fprintln(w, textsafe.Escape(v.Name+":"))
	fmt.Fprintf(w, "  scope:  %s\n", v.Scope)
	fmt.Fprintf(w, "  file:   %s\n", v.File)
	if v.Target != "" {
		fmt.Fprintln(w, textsafe.Escape("  target: "+v.Target))
	}
	fmt.Fprintln(w, textsafe.Escape("  status: "+v.Detail))
	if v.Error != "" && v.Status == "failed" {
		// The whole error: the stderr lines that say why, then its tail.
		_, rest, _ := strings.Cut(v.Error, "\n")
		if rest != "" {
			fmt.Fprintln(w, "          "+strings.ReplaceAll(rest, "\n", "\n          "))
		}
	}
	var pretty strings.Builder
	if b, err := json.MarshalIndent(v.Entry, "  ", "  "); err == nil {
		pretty.Write(b)
	} else {
		pretty.Write(v.Entry)
	}
	fmt.Fprintln(w, "  entry:  "+escapeLinesCLI(pretty.String()))
	for _, sh := range v.Replaces {
		fmt.Fprintf(w, "  it replaces the server of that name in %s (%s scope)\n", sh.File, sh.Scope)
	}
}

func escapeLinesCLI(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = textsafe.Escape(l)
	}
	return strings.Join(lines, "\n")
}
