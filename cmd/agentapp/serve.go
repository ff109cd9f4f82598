package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/assistant"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/kb"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/support"
	"github.com/spf13/cobra"
)

// serverTokenEnv is the environment variable that supplies the bearer token
// when --token is not given (so the token stays out of `ps` output).
const serverTokenEnv = "AGENTAPP_SERVER_TOKEN"

// directCallsEnv set to "off" makes serve answer every tools/call through
// the SDK's request path (mcpserver.Options.NoDirectCalls): the switch for
// a user who suspects the stdio fast path.
const directCallsEnv = "AGENTAPP_DIRECT_CALLS"

// directCallsOff reads directCallsEnv: "off" turns the direct path off,
// unset or "on" leaves it on, anything else is refused with what to write.
func directCallsOff(getenv func(string) string) (bool, error) {
	switch v := getenv(directCallsEnv); v {
	case "", "on":
		return false, nil
	case "off":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: write off (every tools/call through the SDK's path) or on (the default)", directCallsEnv, v)
	}
}

func newServeCmd() *cobra.Command {
	var httpAddr, token, skillsDir string
	var stateless bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the customer-service tools and knowledge base as an MCP server",
		Long: `serve publishes getOrderStatus, createTicket and searchKnowledge, and the
knowledge-base documents as resources docs://kb/{docId}, to any MCP client
(Claude Desktop, Cursor, the MCP Inspector, agentapp chat --mcp).

By default it speaks MCP over stdio: the client starts "agentapp serve" and
talks on stdin/stdout; messages for people go to stderr. With --http it
serves streamable HTTP at http://ADDR/mcp instead. A loopback address is the
default; any other address needs a bearer token (--token or
` + serverTokenEnv + `).

AGENT_GUARD_PII=1 masks phone numbers, national ids and bank cards in the
output of every published tool and in the documents (resources/read); a
value other than 1, true, 0 or false stops the server at start-up. The
other AGENT_GUARD_* variables guard agentapp chat and are ignored here.

It also publishes skills (the MCP Skills extension, SEP-2640): by default
the customer-service playbooks built in (refunds, handoff, order-status);
--skills DIR serves the skills of DIR instead (each a folder with a
SKILL.md; one that breaks the format is skipped with a warning), and
--skills none serves none.`,
		Example: `  agentapp serve
  agentapp serve --http 127.0.0.1:8080
  agentapp serve --skills ./skills
  AGENTAPP_SERVER_TOKEN=secret agentapp serve --http 0.0.0.0:8080`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if token == "" {
				token = os.Getenv(serverTokenEnv)
			}
			if cmd.Flags().Changed("token") && httpAddr == "" {
				return usageHint(cmd, errors.New("--token only applies to HTTP; add --http ADDR, or drop --token (stdio needs no token)"))
			}
			if stateless && httpAddr == "" {
				return usageHint(cmd, errors.New("--stateless only applies to HTTP; add --http ADDR"))
			}
			return runServe(cmd, httpAddr, token, skillsDir, stateless, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve streamable HTTP at `ADDR`/mcp instead of stdio, e.g. 127.0.0.1:8080 (port 0 picks a free port)")
	cmd.Flags().StringVar(&token, "token", "", "bearer token HTTP clients must send (default $"+serverTokenEnv+"); required unless --http is a loopback address; several, one per client, separated by commas (each client's MCP tasks are its own)")
	cmd.Flags().Int("max-conns", mcpserver.DefaultMaxConnections, "HTTP: connections open at once, from all clients (an MCP client holds one or two); beyond it, 503. -1 for no bound")
	cmd.Flags().Int("max-conns-per-addr", mcpserver.DefaultMaxConnectionsPerAddress, "HTTP: connections one client address may hold open (an IPv6 /64 is one address); beyond it, 503. The default serves 16 sessions of 6 connections each and leaves loopback clients to --max-conns; given here, it bounds loopback clients too. Behind a proxy or load balancer raise it, or -1 for no bound")
	cmd.Flags().Duration("call-timeout", defaultCallTimeout, "the longest a tool call may take (a database that hangs or holds a lock fails the call with \"the database is unavailable, try again shortly\" instead of stalling it); 0 for no bound")
	cmd.Flags().StringVar(&skillsDir, "skills", "", "publish the skills of `DIR` (a folder per skill, each with a SKILL.md) instead of the built-in playbooks; none publishes no skills")
	cmd.Flags().BoolVar(&stateless, "stateless", false, "HTTP: keep no MCP session between requests, so any replica behind a load balancer answers any request (clients get no server-sent notifications)")
	return cmd
}

// runServe checks the configuration, listens (HTTP), opens the data,
// builds the server and serves it until the client goes away (stdio: stdin
// reaches EOF) or a signal arrives. Everything that can be refused is
// refused before the data directory is created.
func runServe(cmd *cobra.Command, httpAddr, token, skillsDir string, stateless bool, stderr io.Writer) error {
	tuneServe(os.Getenv, httpAddr != "")
	addr := ""
	if httpAddr != "" {
		var err error
		// Check the address and the token before touching the data, so
		// a refused configuration fails fast and changes nothing.
		if addr, err = mcpserver.ResolveHTTPAddr(httpAddr, token); err != nil {
			return err
		}
	}

	// The guards are read before the data is touched, as in chat: a
	// mistyped switch is a start-up error, not a guard silently left off.
	dir, err := dataDir(cmd)
	if err != nil {
		return err
	}
	guardCfg, ignored, err := serveGuardConfig(os.Getenv, os.Environ(), dir)
	if err != nil {
		return err
	}
	logger := cmdLogger(cmd, stderr, slog.LevelWarn)
	if len(ignored) > 0 {
		logger.Warn("serve ignores " + strings.Join(ignored, ", ") + ": of the guards only " + guard.EnvPII +
			" applies to serve, the others protect agentapp chat")
	}
	// The skills too: a folder that cannot be read stops the start.
	folder, skillsFrom, err := loadServeSkills(skillsDir, logger)
	if err != nil {
		return err
	}
	// Tracing is set up before the data is touched too: an OTEL_* variable
	// that cannot be used is a start-up error.
	tr, stopTracing, err := startTracing(cmd, os.LookupEnv, logger)
	if err != nil {
		return err
	}
	defer stopTracing()

	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// Listen before the data is touched: a port already in use is the
	// likeliest failure, and it must leave no data directory behind
	// (opening the store creates and seeds one).
	var ln net.Listener
	if addr != "" {
		if ln, err = net.Listen("tcp", addr); err != nil {
			return fmt.Errorf("cannot listen on %s: %w (is another server using the port? try another port, or port 0 for a free one)", addr, err)
		}
		defer ln.Close() // RunHTTP closes it too; this covers a failure before
	}

	st, err := openStore(cmd)
	if err != nil {
		return err
	}
	defer st.Close()
	svc, err := support.New(ctx, st)
	if err != nil {
		return err
	}
	// The server's own logger keeps to warnings; the seeding of the demo
	// FAQ on first start is worth an info line.
	k, err := kb.Open(ctx, st, kb.WithLogger(cmdLogger(cmd, stderr, slog.LevelInfo)))
	if err != nil {
		return err
	}
	if err := k.SeedDemo(ctx); err != nil {
		return err
	}
	docs, err := k.List(ctx)
	if err != nil {
		return err
	}

	version := readBuildInfo().Short()
	opts := assistant.ServerOptions(svc, k, version)
	opts.Logger = logger
	opts.Tracing = tr
	opts.Skills = folder
	// requestState signed with the database's key: any replica accepts it.
	if opts.StateKey, err = st.Secret(ctx, "mcp-request-state"); err != nil {
		return err
	}
	if guardCfg.PII {
		// Everything that leaves the server quotes data the client did not
		// send: orders, tickets, knowledge-base text. Mask all of it.
		g := guard.New(guardCfg, nil, nil)
		for i, t := range opts.Tools {
			opts.Tools[i] = g.MaskTool(t)
		}
		opts.Docs = maskedDocs{opts.Docs}
	}
	callTimeout, _ := cmd.Flags().GetDuration("call-timeout")
	for i, t := range opts.Tools {
		opts.Tools[i] = withCallDeadline(t, callTimeout)
	}
	postgres := st.Dialect() == store.Postgres
	// On PostgreSQL every process's ingests are announced (kb.ChangeChannel),
	// so this server can promise its clients resources/list_changed.
	opts.DocsChange = postgres
	if opts.NoDirectCalls, err = directCallsOff(os.Getenv); err != nil {
		return err
	}
	server := mcpserver.New(opts)
	dir = filepath.Dir(st.Path)
	if postgres {
		dir = st.Path
		lctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = st.Listen(lctx, kb.ChangeChannel, logger, func(string) { server.DocsChanged() })
		}()
		defer func() { cancel(); <-done }()
	}

	if addr == "" {
		serveBanner(version, "stdio (stdout carries MCP frames only)", opts.Tools, len(docs), dir, "", guardCfg.PII).skills(folder, skillsFrom).write(cmd, stderr)
		return server.ServeStdio(ctx)
	}

	auth := "none (loopback clients only)"
	if token != "" {
		auth = "bearer token required"
	}
	serveBanner(version, "http://"+ln.Addr().String()+mcpserver.HTTPPath, opts.Tools, len(docs), dir, auth, guardCfg.PII).skills(folder, skillsFrom).write(cmd, stderr)
	handler := mcpserver.NewHTTPHandler(server, &mcpserver.HTTPOptions{Token: token, Logger: logger, Stateless: stateless})
	perAddr, _ := cmd.Flags().GetInt("max-conns-per-addr")
	maxConns, _ := cmd.Flags().GetInt("max-conns")
	if perAddr == 0 {
		perAddr = -1 // 0 on the command line means what -1 does, not the default
	}
	// A bound given on the command line applies to loopback clients too
	// (a local reverse proxy's clients all come from loopback).
	onLoopback := cmd.Flags().Changed("max-conns-per-addr")
	if err := mcpserver.RunHTTP(ctx, ln, handler, &mcpserver.RunOptions{Logger: logger, MaxConnections: maxConns, MaxConnectionsPerAddress: perAddr, PerAddressOnLoopback: onLoopback}); err != nil {
		return err
	}
	say(cmd, stderr, "agentapp serve: stopped")
	return nil
}

// serveBanner tells the person starting the server what it offers. It goes
// to stderr: on stdio, stdout belongs to the protocol.
func serveBanner(version, endpoint string, tools []*agent.Tool, ndocs int, dir, auth string, pii bool) *banner {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	b := &banner{title: fmt.Sprintf("agentapp %s MCP server on %s", version, endpoint)}
	b.add("tools", "tools", strings.Join(names, ", "))
	b.add("resources", "resources", fmt.Sprintf("%s (%d documents now)", mcpserver.DocURITemplate, ndocs))
	if store.IsPostgresURL(dir) {
		b.add("database", "database", dir)
	} else {
		b.add("data_dir", "data dir", dir)
	}
	if auth != "" {
		b.add("auth", "auth", auth)
	}
	if pii {
		b.add("guard", "guard", fmt.Sprintf("PII (%s): phone numbers, ids and cards masked in tool output and documents", guard.EnvPII))
	}
	return b
}

// readGuardConfig reads the AGENT_GUARD_* variables through getenv as chat
// does: a bad value is a usage error (exit 2) naming the variable, so a
// mistyped security switch stops the program instead of silently leaving
// the guard off. (chat.go still has the same few lines inline; it could
// call this.)
func readGuardConfig(getenv func(string) string, dataDir string) (guard.Config, error) {
	cfg, err := guard.FromEnv(getenv, dataDir)
	if err != nil {
		return guard.Config{}, &exitError{code: 2, err: fmt.Errorf("%w (see docs/security.md for the AGENT_GUARD_* variables)", err)}
	}
	return cfg, nil
}

// serveGuardConfig is the guard configuration of serve. Of the guards only
// the PII mask applies to a server: the others (allowlist, confirmation,
// input scan, strict merge) concern tools that come from MCP servers into
// the chat. So only AGENT_GUARD_PII is read and checked, and a variable
// serve does not use cannot stop it; ignored lists the other non-empty
// AGENT_GUARD_* variables of environ (a misspelt AGENT_GUARD_PII among
// them), sorted, for a warning.
func serveGuardConfig(getenv func(string) string, environ []string, dataDir string) (cfg guard.Config, ignored []string, err error) {
	cfg, err = readGuardConfig(func(name string) string {
		if name == guard.EnvPII {
			return getenv(name)
		}
		return ""
	}, dataDir)
	if err != nil {
		return guard.Config{}, nil, err
	}
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "AGENT_GUARD_") && name != guard.EnvPII && strings.TrimSpace(value) != "" {
			ignored = append(ignored, name)
		}
	}
	slices.Sort(ignored)
	return cfg, slices.Compact(ignored), nil
}

// maskedDocs is a DocStore whose documents have personal numbers masked
// (guard.MaskText), for serve with the PII guard on. Titles and source
// file names are masked too, since resources/list shows them; masking
// replaces digits with '*' one for one, so the sizes stay right. Ids are
// left alone: they are the documents' URIs, which a client must be able to
// read back.
type maskedDocs struct{ mcpserver.DocStore }

func (d maskedDocs) ListDocs(ctx context.Context) ([]mcpserver.DocInfo, error) {
	docs, err := d.DocStore.ListDocs(ctx)
	for i := range docs {
		docs[i] = maskDocInfo(docs[i])
	}
	return docs, err
}

func (d maskedDocs) ReadDoc(ctx context.Context, id string) (mcpserver.DocInfo, string, error) {
	info, text, err := d.DocStore.ReadDoc(ctx, id)
	if err != nil {
		return info, "", err
	}
	return maskDocInfo(info), guard.MaskText(text), nil
}

func maskDocInfo(d mcpserver.DocInfo) mcpserver.DocInfo {
	d.Title = guard.MaskPII(d.Title)
	d.Source = guard.MaskPII(d.Source)
	return d
}

// defaultCallTimeout bounds a serve tool call. Every tool of serve answers
// from the database in milliseconds; one still running after this is
// stuck behind a lock or a server that does not answer.
const defaultCallTimeout = 20 * time.Second

// withCallDeadline returns t with its calls bounded by d (none when d <= 0).
// A call cut off by the deadline fails with a tool error saying the
// database is busy or unavailable, and the next call starts afresh: a
// PostgreSQL server that hung or a lock held for a minute used to stall
// every call for as long as it lasted.
func withCallDeadline(t *agent.Tool, d time.Duration) *agent.Tool {
	if d <= 0 || t.Execute == nil {
		return t
	}
	exec := t.Execute
	// Field by field: a Tool holds a sync.Once and a compiled schema of its own.
	c := &agent.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema,
		OutputSchema: t.OutputSchema, ReadOnly: t.ReadOnly, Idempotent: t.Idempotent, Destructive: t.Destructive,
		OpenWorld: t.OpenWorld, Origin: t.Origin, Validate: t.Validate}
	c.Execute = func(ctx context.Context, args json.RawMessage) (any, error) {
		cctx, cancel := context.WithTimeout(ctx, d)
		defer cancel()
		out, err := exec(cctx, args)
		if err != nil && ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) {
			if errors.Is(err, store.ErrBusy) { // it says so, and what to do
				return nil, fmt.Errorf("%s did not finish within %v: %w", t.Name, d, err)
			}
			return nil, fmt.Errorf("%s did not finish within %v: %s (%w)", t.Name, d, store.UnavailableMessage, err)
		}
		return out, err
	}
	return c
}
