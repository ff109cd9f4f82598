package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/assistant"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/internal/trust"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/agentapp/agentapp/model/openai"
	"github.com/agentapp/agentapp/support"
	"github.com/agentapp/agentapp/trace"
	"github.com/agentapp/agentapp/web"
	"github.com/spf13/cobra"
)

// webTokenEnv supplies the operator view's token; from the environment
// only, so it stays out of `ps` output.
const webTokenEnv = "AGENTAPP_WEB_TOKEN"

// apiKeysEnv supplies the keys of /v1 (comma-separated), and
// metricsTokenEnv the token of /metrics and /readyz's details (default:
// the operator token); from the environment only, like the token.
const (
	apiKeysEnv      = "AGENTAPP_API_KEYS"
	metricsTokenEnv = "AGENTAPP_METRICS_TOKEN"
)

// splitKeys reads a comma-separated list of keys, blanks dropped.
func splitKeys(v string) []string {
	var keys []string
	for _, k := range strings.Split(v, ",") {
		if k = strings.TrimSpace(k); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

type webFlags struct {
	chatFlags
	http string
	// openV1 leaves /v1 without a key off loopback (a trusted network, or
	// a proxy that authenticates).
	openV1 bool
	// sandboxAddr is where the MCP Apps views' proxy listens, and
	// sandboxOrigin the origin the browser reaches it at ("" derives it
	// from the listener; "off" turns views off).
	sandboxAddr, sandboxOrigin string
	// operators are --operator NAME:TOKEN, named operators.
	operators []string
	// operatorTimeout: a held conversation whose operator is gone returns
	// to the queue after it.
	operatorTimeout time.Duration
}

func newWebCmd() *cobra.Command {
	var f webFlags
	cmd := &cobra.Command{
		Use:   "web",
		Short: "Serve the assistant on the web: chat page, chat API, OpenAI-compatible endpoint, operator view",
		Long: `web serves the customer-service assistant over HTTP from one process:

  /                      the chat page (Chinese and English, phone-sized screens too)
  /api/sessions          the chat API: each answer streams as server-sent events
  /v1/chat/completions   an OpenAI-compatible endpoint (the whole agent as one model)
  /v1/models             its model list
  /operator              hand-offs and tickets, each markable resolved
  /healthz /readyz       liveness; readiness (database reachable and writable, MCP servers connected)
  /metrics               Prometheus metrics

It uses the chat's tools, MCP servers (--mcp, --config), model (--model) and
guards (AGENT_GUARD_*); a tool in AGENT_GUARD_CONFIRM is approved with the
page's Allow / Deny buttons, and refused after 60 s without an answer.

A tool that links an MCP Apps view (a ui:// resource) gets the view beside
its step, run from a second listener (--sandbox-addr) so that it never
shares the page's origin; --sandbox-origin names that listener's public
origin behind a reverse proxy.

It listens on a loopback address by default. Bound to any other address it
needs a token for the operator view in ` + webTokenEnv + ` and the keys of
/v1 in ` + apiKeysEnv + ` (comma-separated; clients send
"Authorization: Bearer <key>"), and refuses to start without them
(--open-v1 leaves /v1 without a key). The operator signs in with the token as
the password; /metrics and the details of /readyz need ` + metricsTokenEnv + `,
or the operator token when that is not set (a bare {"ready": ...} and the
status code stay public for load balancers). Set keys and tokens on loopback
too and they are required there as well.`,
		Example: `  agentapp web
  agentapp web --http 127.0.0.1:9000 --mcp "agentapp serve"
  AGENT_GUARD_CONFIRM=createTicket agentapp web --mcp "agentapp serve"
  ` + webTokenEnv + `=secret ` + apiKeysEnv + `=sk-team-1 agentapp web --http 0.0.0.0:8080`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			err := runWeb(cmd, &f)
			if ee := (*exitError)(nil); errors.As(err, &ee) && ee.code == exitUsage {
				return usageHint(cmd, err)
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.http, "http", "127.0.0.1:8080", "listen on `ADDR` (port 0 picks a free port); a non-loopback address needs "+webTokenEnv+" and "+apiKeysEnv)
	fl.StringVar(&f.sandboxAddr, "sandbox-addr", "127.0.0.1:0", "listen on `ADDR` for the sandbox of MCP Apps views, another origin than the page's (port 0 picks a free port)")
	fl.StringVar(&f.sandboxOrigin, "sandbox-origin", "", `the origin browsers reach --sandbox-addr at, e.g. https://sandbox.example.com behind a reverse proxy (default http://ADDR of --sandbox-addr; "off" turns views off)`)
	fl.StringArrayVar(&f.operators, "operator", nil, "a named operator, `NAME:TOKEN` (repeatable): the token opens the operator view and names its holder to the customers they talk with")
	fl.DurationVar(&f.operatorTimeout, "operator-timeout", web.DefaultOperatorTimeout, "a conversation an operator holds returns to the waiting queue after this long with no operator stream open and nothing done on it; 0 never")
	fl.BoolVar(&f.openV1, "open-v1", false, "serve /v1 without an API key off loopback (behind a proxy that authenticates); by default "+apiKeysEnv+" is required there")
	fl.StringVar(&f.model, "model", "", `"offline" for the offline demo model, or a model name for the OpenAI-compatible provider (default: offline without an API key)`)
	fl.StringArrayVar(&f.mcp, "mcp", nil, `connect an MCP server started by this command line (repeatable), as in agentapp chat`)
	fl.StringVar(&f.config, "config", "", "mcpServers config file (default ./"+defaultConfigFile+" when it exists)")
	fl.IntVar(&f.maxSteps, "max-steps", agent.DefaultMaxSteps, "most tool rounds per answer")
	fl.DurationVar(&f.turnTimeout, "turn-timeout", host.DefaultTurnTimeout, "time limit for one whole answer, tool calls included")
	fl.BoolVar(&f.trace, "trace", false, "trace every turn's think/act/observe/done on stderr, each line labelled with its session (also AGENT_TRACE=1)")
	f.perms.register(fl)
	fl.BoolVar(&f.strictMCP, "strict-mcp", false, "refuse to start when any MCP server fails to connect (by default the others are served and the failure is logged)")
	addLimitFlags(fl, &f.limits)
	addContextWindowFlag(fl, &f.chatFlags)
	return cmd
}

// inactiveReason says in a few words why a server is not being served.
func inactiveReason(in host.Inactive) string {
	if hint := host.LoginHint(in.Err); hint != "" {
		return "it needs a login: " + hint
	}
	if in.Err == nil {
		return "no reason given"
	}
	return in.Err.Error()
}

// checkWebAddr validates --http against the token and the keys: any
// address that is not loopback (":8080" and "0.0.0.0:8080" included) needs
// the operator token and, unless openV1, keys for /v1.
func checkWebAddr(addr, token string, apiKeys []string, openV1 bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageError("--http %q is not HOST:PORT (%v), e.g. --http 127.0.0.1:8080", addr, err)
	}
	// A name under .localhost is loopback by RFC 6761, but a listener on
	// it binds where the resolver says: it needs the token as any name.
	loopback := trust.IsLoopbackHost(host) && !trust.IsLocalhostSubdomain(host)
	if !loopback && strings.TrimSpace(token) == "" {
		return usageError("--http %s is not a loopback address, so the operator view needs a token: set %s (or bind 127.0.0.1)", addr, webTokenEnv)
	}
	if !loopback && len(apiKeys) == 0 && !openV1 {
		return usageError("--http %s is not a loopback address, so /v1 needs API keys: set %s=key1,key2 (clients send \"Authorization: Bearer <key>\"), pass --open-v1 to serve it without a key, or bind 127.0.0.1", addr, apiKeysEnv)
	}
	return nil
}

func runWeb(cmd *cobra.Command, f *webFlags) error {
	stderr := cmd.ErrOrStderr()
	logger := cmdLogger(cmd, stderr, slog.LevelInfo)
	token := os.Getenv(webTokenEnv)
	apiKeys := splitKeys(os.Getenv(apiKeysEnv))
	metricsToken := strings.TrimSpace(os.Getenv(metricsTokenEnv))
	if metricsToken == "" {
		metricsToken = strings.TrimSpace(token)
	}
	switch {
	case f.maxSteps < 1:
		return usageError("--max-steps must be at least 1")
	case f.turnTimeout <= 0:
		return usageError("--turn-timeout must be positive, e.g. 2m")
	}
	if err := checkWebAddr(f.http, token, apiKeys, f.openV1); err != nil {
		return err
	}
	operators, err := webOperators(f.operators, chatConfigPath(&f.chatFlags))
	if err != nil {
		return err
	}
	if f.operatorTimeout < 0 {
		return usageError("--operator-timeout must be 0 (never) or positive, e.g. 2m")
	}
	operatorTimeout := f.operatorTimeout
	if operatorTimeout == 0 {
		operatorTimeout = -1 // web.Options: negative is never
	}
	setup, err := readHostSetup(cmd, &f.chatFlags) // startup.go, shared with runChatAs
	if err != nil {
		return err
	}
	m, info, dir := setup.m, setup.info, setup.dir
	// Deferred first, the flush of the spans runs last, after the turns
	// drained and the servers closed, within its own bound.
	tr, stopTracing, err := startTracing(cmd, os.LookupEnv, logger)
	if err != nil {
		return err
	}
	defer stopTracing()

	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// Listen before the data is touched: a port in use is the likeliest
	// failure and must leave nothing behind.
	ln, err := net.Listen("tcp", f.http)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w (is another server using the port? try another port, or port 0 for a free one)", f.http, err)
	}
	defer ln.Close()
	sandboxLn, sandboxOrigin, err := listenSandbox(f, ln.Addr().String())
	if err != nil {
		return err
	}
	if sandboxLn != nil {
		defer sandboxLn.Close()
	}
	if w := sandboxWarning(f.http, sandboxOrigin); w != "" {
		logger.Warn(w)
	}

	// Stored OAuth logins are used as in the chat; a server that needs a
	// browser login is reported, never logged into from here.
	h, err := setup.startHost(ctx, cmd, &f.chatFlags, nil, frontEnd{
		// A web server never asks on its terminal: only the project
		// servers already approved (agentapp mcp approve) are started.
		approve: func(project []mcpconfig.ScopedServer) ([]mcpconfig.Server, error) {
			return approveProjectServers(dir, project, strings.NewReader(""), stderr)
		},
		approveHooks: func(project mcpconfig.ScopedHooks) bool {
			return approveProjectHooks(dir, project, strings.NewReader(""), stderr)
		},
		connect: webConnectOptions(sandboxOrigin != "", mcpclient.WithLogger(logger), chatOAuth(dir, chatConfigPath(&f.chatFlags))),
		hints:   webHints(),
		logger:  logger,
	})
	if err != nil {
		return err
	}
	for _, in := range h.Tools().Inactive() {
		if in.Disabled || (!isConnectFailure(in.Err) && host.LoginHint(in.Err) == "") {
			continue
		}
		// As in the chat, the others are served; /readyz reports only the
		// servers that connected.
		logger.Warn(fmt.Sprintf("MCP server %s did not connect (%s); serving without it", in.Name, inactiveReason(in)))
	}
	var traceTo io.Writer
	if trace.Enabled(f.trace, os.Getenv) {
		traceTo = traceOutput(cmd, stderr)
	}
	var secrets []string // the provider's key, kept out of logs and traces
	if om, ok := m.(*openai.Model); ok {
		secrets = append(secrets, om.Config().APIKey)
	}
	// The operator view is the domain's: the assistant's, over the
	// support queue in the host's store.
	svc, err := support.New(ctx, h.Store())
	if err != nil {
		_ = h.Close()
		return err
	}
	srv, err := web.New(ctx, web.Options{
		Host:            h,
		Operator:        assistant.Operator(svc, logger),
		Token:           token,
		Operators:       operators,
		OperatorTimeout: operatorTimeout,
		APIKeys:         apiKeys,
		MetricsToken:    metricsToken,
		Secrets:         secrets,
		Logger:          logger,
		Trace:           traceTo,
		Tracing:         tr,

		SandboxOrigin:  sandboxOrigin,
		AllowInProject: allowInProject,
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	local, connected := h.Tools().Local(), h.Tools().Servers()

	base := "http://" + ln.Addr().String()
	b := banner{title: "agentapp web on " + base + "/"}
	b.add("model", "model", fmt.Sprintf("%s (%s)", m.Name(), info))
	tools := fmt.Sprintf("%d local, %d MCP %s", len(local), len(connected), plural(len(connected), "server", "servers"))
	for _, o := range h.Tools().Report().Overridden {
		// The server's tool is the one offered and run under that name.
		tools += fmt.Sprintf("; %s replaced by MCP server %s's", o.Tool, o.Server)
	}
	b.add("tools", "tools", textsafe.Escape(tools))
	b.add("chat_api", "chat API", base+"/api/sessions")
	switch {
	case len(apiKeys) > 0:
		b.add("openai", "OpenAI", fmt.Sprintf("%s/v1 (model %q; %d %s from %s)", base, web.DefaultModelID, len(apiKeys), plural(len(apiKeys), "key", "keys"), apiKeysEnv))
	default:
		b.add("openai", "OpenAI", fmt.Sprintf("%s/v1 (model %q; no API key)", base, web.DefaultModelID))
	}
	if token != "" {
		b.add("operator", "operator", fmt.Sprintf("%s/operator (token from %s)", base, webTokenEnv))
	} else {
		b.add("operator", "operator", base+"/operator (no token: loopback only)")
	}
	if active := h.Guards().Config().Active(); len(active) > 0 {
		b.add("guards", "guards", active)
	}
	if sandboxOrigin != "" {
		b.add("apps", "MCP Apps", "views sandboxed at "+sandboxOrigin+"/proxy")
	}
	if traceTo != nil {
		b.add("trace", "trace", "every turn's steps on stderr, labelled with its session")
	}
	b.write(cmd, stderr)
	start := time.Now()
	if sandboxLn != nil {
		stopSandbox := serveSandbox(srv, sandboxLn, logger)
		defer stopSandbox()
	}
	if err := srv.Serve(ctx, ln); err != nil {
		return err
	}
	d := time.Since(start).Round(time.Second)
	say(cmd, stderr, fmt.Sprintf("agentapp web: stopped after %v", d), "uptime", d.String())
	return nil
}

// webOperators are the --operator values and then the config file's
// "operators"; two operators may not share a name or a token.
func webOperators(vals []string, configFile string) ([]web.Operator, error) {
	if configFile == "" {
		return parseOperators(vals)
	}
	entries, err := mcpconfig.LoadOperators(configFile, nil)
	if err != nil {
		return nil, err
	}
	for i, e := range entries {
		if strings.Contains(e.Name, ":") {
			return nil, usageError("%s: operators[%d]: the name %q contains ':'", configFile, i, e.Name)
		}
		vals = append(vals, e.Name+":"+e.Token)
	}
	return parseOperators(vals)
}

// parseOperators reads the --operator values; two operators may not share
// a name or a token.
func parseOperators(vals []string) ([]web.Operator, error) {
	var out []web.Operator
	names, tokens := map[string]bool{}, map[string]bool{}
	for _, v := range vals {
		op, err := web.ParseOperator(v)
		if err != nil {
			return nil, usageError("--operator: %v", err)
		}
		if names[op.Name] || tokens[op.Token] {
			return nil, usageError("--operator %s: another operator has this name or token", op.Name)
		}
		names[op.Name], tokens[op.Token] = true, true
		out = append(out, op)
	}
	return out, nil
}
