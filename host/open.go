package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/telemetry"
)

// Options say how Open opens a host: where the MCP server configs are,
// which project servers may run, the guards, the store, the local tools and
// how servers are connected. A nil *Options, or a zero field, means the
// default; Model is required. The host reads no environment variable: the
// command line reads them and fills these fields in.
type Options struct {
	// Model answers the turns.
	Model model.Model
	// Dir is the project directory whose .mcp.json is the project scope;
	// "" means the working directory.
	Dir string
	// ConfigFile is an mcpServers file to read besides the scopes; ""
	// reads DefaultConfigFile in Dir when it exists.
	ConfigFile, DefaultConfigFile string
	// Getenv and LookupEnv expand the configs' variables and find the
	// user's config directory; nil sees an empty environment.
	Getenv    func(string) string
	LookupEnv func(string) (string, bool)
	// Extra are servers given apart from the files (the command line's
	// --mcp), connected after the files' servers in this order.
	Extra []ExtraServer
	// Servers are servers already connected (an embedder's in-process
	// servers), listed after the ones Open connects. The host owns them:
	// Close, or a failing Open, closes every one.
	Servers []Server
	// Inactive are servers given apart from the files that do not run at
	// the start. Enabling one of these or of Servers again (Table.Enable)
	// calls Connect with a config that names it only.
	Inactive []Inactive
	// ApproveProject picks which of the project scope's servers may run
	// (they come with the project, from whoever wrote it); nil runs none.
	ApproveProject func(project []mcpconfig.ScopedServer) ([]mcpconfig.Server, error)

	// Guards configure the guards; nil means their defaults.
	Guards *guard.Config
	// Store holds the sessions and the domain's data; the host takes it
	// over (Close closes it) unless KeepStore is set. Required.
	Store *store.Store
	// KeepStore leaves the store open at Close: its owner (an embedder
	// that shares it, a test that opens hosts one after another over one
	// database) closes it.
	KeepStore bool
	// AuditToFile keeps the audit trail in Guards.AuditLog even on a shared
	// PostgreSQL database, whose audit table is used otherwise (so that
	// replicas keep one trail).
	AuditToFile bool
	// LocalTools makes the local tools from the store and the guards (the
	// assistant's); nil means none.
	LocalTools func(ctx context.Context, st *store.Store, g *guard.Guards, logger *slog.Logger) ([]*agent.Tool, error)
	// Local are tools made already, offered after LocalTools'.
	Local []*agent.Tool

	// Connect connects one server; nil means mcpclient.Connect with
	// ConnectOptions.
	Connect        func(ctx context.Context, cfg mcpconfig.Server) (Server, error)
	ConnectOptions []mcpclient.ConnectOption
	// Strict fails the start when any server cannot be used (a config
	// error, a failed connection); by default the host starts with the
	// others and lists the rest as inactive.
	Strict bool
	// Reason words why a server did not connect, for the Inactive list
	// (the command line adds how to check it by hand); nil keeps the
	// error.
	Reason func(err error, cfg mcpconfig.Server) error

	// System is the system prompt; empty sends none.
	System string
	// MaxSteps bounds tool rounds per turn; 0 means agent.DefaultMaxSteps.
	MaxSteps int
	// TurnTimeout bounds a whole turn; 0 means DefaultTurnTimeout.
	TurnTimeout time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Notify receives what the tool table reports while the host runs
	// (clash warnings, changed tool lists); nil logs them to Logger.
	Notify func(Notice)
	// Logger receives what the host reports; nil discards.
	Logger *slog.Logger
	// Tracing starts a span for each turn, under which the loop's model
	// and tool calls and the MCP requests are traced; nil traces a turn
	// only when its context already carries a trace.
	Tracing *telemetry.Tracing
	// Hints name the switches behind some messages (see Hints).
	Hints Hints
	// MaxOutputTokens caps a tool result the model sees (0: the default);
	// a server's maxOutputTokens in the config caps its own.
	MaxOutputTokens int
	// ToolSearch says when MCP tools are deferred behind searchTools
	// (toolsearch.go); nil means auto.
	ToolSearch *ToolSearchOptions
	// Context sizes the model's context window (see ContextOptions).
	Context ContextOptions
	// Sources finds the passages an answer cites among the turn's tool
	// outputs (the composition knows their shape: package assistant's
	// knowledge-base hits); nil finds none.
	Sources func(answer string, toolOutputs []string) []Source
}

// ExtraServer is a server given apart from the config files.
type ExtraServer struct {
	Server mcpconfig.Server
	// Named: its name was chosen by the user, so it must be free (a silent
	// rename would break "/mcp restart NAME"); a derived name is made
	// unique instead.
	Named bool
	// Source is how the user gave it (e.g. `--mcp "NAME=cmd"`), for the
	// error when its name is taken.
	Source string
}

// NameError is a name the user chose for an extra server that is taken.
type NameError struct{ Msg string }

func (e *NameError) Error() string { return e.Msg }

// StartError is a strict start that failed: each failure is a
// *ConnectError, in the order of the servers.
type StartError struct {
	Failures []error
	Configs  []mcpconfig.Server
}

func (e *StartError) Error() string   { return errors.Join(e.Failures...).Error() }
func (e *StartError) Unwrap() []error { return e.Failures }

// Open opens a host: it reads the config scopes and the extra servers,
// asks which project servers may run, opens the guards and their audit
// trail on the store, makes the local tools, and connects every server at
// once. By default a server that cannot be used is listed as inactive and
// the host starts with the others; with Strict it is an error (a
// *StartError for connections). Cancelling ctx while connecting gives up:
// the servers connected are closed and ctx's error returned.
//
// On error everything Open opened is closed, the store included.
func Open(ctx context.Context, opts *Options) (h *Host, err error) {
	if opts == nil || opts.Model == nil {
		return nil, errors.New("host: no model")
	}
	if opts.Store == nil {
		return nil, errors.New("host: no store")
	}
	o := *opts
	var closers []func() error
	if !o.KeepStore {
		closers = append(closers, o.Store.Close)
	}
	given := o.Servers // closed by newHost from the call on
	defer func() {
		if err != nil && h == nil {
			err = errors.Join(err, closeServers(given), runClosers(closers))
		}
	}()
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	if o.LookupEnv == nil {
		o.LookupEnv = func(string) (string, bool) { return "", false }
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfgs, inactive, unapproved, fileRules, err := o.serverConfigs(logger)
	if err != nil {
		return nil, err
	}

	var gcfg guard.Config
	if o.Guards != nil {
		gcfg = *o.Guards
	}
	// The files' rules come first: the order does not change a verdict
	// (deny beats ask beats allow wherever they are), only which rule a
	// reason names.
	gcfg.Permissions.Rules = append(fileRules, gcfg.Permissions.Rules...)
	var audit *guard.Audit
	if o.Store.Dialect() == store.Postgres && !o.AuditToFile {
		gcfg.AuditLog = "table " + store.AuditTable + " of the database " + o.Store.Path
		audit = guard.NewAuditTo(o.Store, gcfg.AuditLog, logger)
	} else {
		audit = guard.NewAudit(gcfg.AuditLog, logger)
	}
	closers = append(closers, audit.Close)
	guards := guard.New(gcfg, nil, audit) // each turn brings its confirmer
	var local []*agent.Tool
	if o.LocalTools != nil {
		if local, err = o.LocalTools(ctx, o.Store, guards, logger); err != nil {
			return nil, err
		}
	}
	local = append(local, o.Local...)

	connect := o.Connect
	if connect == nil {
		connect = func(ctx context.Context, c mcpconfig.Server) (Server, error) {
			b, err := mcpclient.Connect(ctx, c, o.ConnectOptions...)
			if err != nil {
				return nil, err
			}
			return b, nil
		}
	}
	servers, failed, err := o.connectAll(ctx, cfgs, connect)
	if err != nil {
		return nil, err
	}
	inactive = append(append(failed, inactive...), o.Inactive...)
	servers = append(servers, o.Servers...)
	given = nil
	return newHost(ctx, config{
		Model:      o.Model,
		Local:      local,
		Servers:    servers,
		Inactive:   inactive,
		Unapproved: unapproved,
		Connect: func(ctx context.Context, name string) (Server, error) {
			for _, c := range cfgs {
				if c.Name == name {
					return connect(ctx, c)
				}
			}
			// A server given apart from the files is started again by
			// its name only.
			for _, in := range o.Inactive {
				if in.Name == name {
					return connect(ctx, mcpconfig.Server{Name: name})
				}
			}
			for _, sv := range o.Servers {
				if sv.Name() == name {
					return connect(ctx, mcpconfig.Server{Name: name})
				}
			}
			return nil, fmt.Errorf("no MCP server %q is configured", name)
		},
		Guards:      guards,
		Store:       o.Store,
		System:      o.System,
		MaxSteps:    o.MaxSteps,
		TurnTimeout: o.TurnTimeout,
		Now:         o.Now,
		Notify:      o.Notify,
		Hints:       o.Hints,
		Context:     o.Context,
		Logger:      o.Logger,
		Tracing:     o.Tracing,
		Results:     &resultOptions{MaxTokens: o.MaxOutputTokens, PerServer: serverCaps(cfgs)},
		ToolSearch:  o.ToolSearch,
		Sources:     o.Sources,
		closers:     closers,
	})
}

// serverConfigs gathers the servers to connect: the config scopes' (the
// approved project servers first), then the extra servers in order; and
// the configured servers that will not run (a config error, disabled).
func (o *Options) serverConfigs(logger *slog.Logger) (cfgs []mcpconfig.Server, inactive []Inactive, unapproved []string, rules []guard.Rule, err error) {
	dir := o.Dir
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	res, err := mcpconfig.LoadScopes(mcpconfig.ScopesOptions{
		Dir: dir, ConfigFile: o.ConfigFile, DefaultFile: o.DefaultConfigFile, Getenv: o.Getenv,
		Load: &mcpconfig.LoadOptions{Logger: logger, LookupEnv: o.LookupEnv},
		// A file that does not load is skipped with a warning naming it,
		// as a server that does not start is: the others still run.
		SkipBroken: !o.Strict,
	})
	if err != nil {
		return nil, nil, nil, nil, err
	}
	fileOf := map[string]string{}
	var project []mcpconfig.ScopedServer
	for _, s := range res.Servers {
		fileOf[s.Server.Name] = s.File
		switch {
		case s.Err != nil:
			if o.Strict {
				return nil, nil, nil, nil, s.Err
			}
			inactive = append(inactive, Inactive{Name: s.Server.Name, Err: s.Err})
		case s.Disabled:
			inactive = append(inactive, Inactive{Name: s.Server.Name, Disabled: true, DisabledBy: s.File})
		case s.Scope == mcpconfig.ScopeProject:
			project = append(project, s)
		default:
			cfgs = append(cfgs, s.Server)
		}
	}
	if len(project) > 0 && o.ApproveProject != nil {
		approved, err := o.ApproveProject(project)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		cfgs = append(approved, cfgs...)
		for _, s := range project {
			if !slices.ContainsFunc(approved, func(a mcpconfig.Server) bool { return a.Name == s.Server.Name }) {
				unapproved = append(unapproved, s.Server.Name)
			}
		}
	} else if len(project) > 0 {
		for _, s := range project {
			logger.Warn(fmt.Sprintf("skipped MCP server %s of %s: nobody approved it", s.Server.Name, s.File))
			unapproved = append(unapproved, s.Server.Name)
		}
	}
	chosen := map[string]string{} // explicit name -> the source that chose it
	for _, x := range o.Extra {
		if !x.Named {
			continue
		}
		name := x.Server.Name
		if prev, dup := chosen[name]; dup {
			return nil, nil, nil, nil, &NameError{fmt.Sprintf("%s and %s both name a server %q; give each a different name", prev, x.Source, name)}
		}
		if file, ok := fileOf[name]; ok {
			return nil, nil, nil, nil, &NameError{fmt.Sprintf("%s names a server %q, but %s already has a server of that name; choose another name", x.Source, name, file)}
		}
		chosen[name] = x.Source
	}
	taken := func(n string) bool {
		_, extra := chosen[n]
		_, file := fileOf[n]
		return extra || file
	}
	for _, x := range o.Extra {
		c := x.Server
		if !x.Named {
			c.Name = mcpconfig.UniqueName(c.Name, taken)
		}
		cfgs = append(cfgs, c)
	}
	return cfgs, inactive, unapproved, o.fileRules(dir, res, logger), nil
}

// fileRules are the permission rules of the config files. A project's
// .mcp.json may ask and deny but not allow: it comes with the project, from
// whoever wrote it, and an allow there would run that person's choice of
// tools without asking the user (Claude Code likewise has the user approve
// what a project brings). Its allow rules are left out with a warning
// saying where the user can adopt them.
func (o *Options) fileRules(dir string, res *mcpconfig.Resolved, logger *slog.Logger) []guard.Rule {
	var rules []guard.Rule
	for _, f := range res.Permissions {
		for _, r := range f.Rules {
			if f.Scope == mcpconfig.ScopeProject && r.Permission == guard.Allow {
				where := "your local scope file"
				if p, err := mcpconfig.LocalFile(dir, o.Getenv); err == nil {
					where += " " + p
				}
				msg := fmt.Sprintf("%s allows %s, but a project file may only ask or deny, so it is ignored; to allow it, put the rule in %s", f.File, r.Pattern, where)
				if o.Hints.AllowFlag != "" {
					msg += " or " + o.Hints.AllowFlag + " " + r.Pattern.String()
				}
				logger.Warn(msg)
				continue
			}
			rules = append(rules, r)
		}
	}
	return rules
}

// connectAll connects every server at once (connectEach). Without Strict
// the failures become Inactive servers; with it they fail the start.
func (o *Options) connectAll(ctx context.Context, cfgs []mcpconfig.Server, connect func(context.Context, mcpconfig.Server) (Server, error)) ([]Server, []Inactive, error) {
	if len(cfgs) == 0 {
		return nil, nil, nil
	}
	names := make([]string, len(cfgs))
	for i, c := range cfgs {
		names[i] = c.Name
	}
	all, errs := connectEach(ctx, names, cfgs, connect)
	var servers []Server
	for _, s := range all {
		if s != nil {
			servers = append(servers, s)
		}
	}
	if ctx.Err() != nil {
		return nil, nil, errors.Join(ctx.Err(), closeServers(servers))
	}
	if errors.Join(errs...) == nil {
		return servers, nil, nil
	}
	if o.Strict {
		var failures []error
		for _, e := range errs {
			if e != nil {
				failures = append(failures, e)
			}
		}
		return nil, nil, errors.Join(&StartError{Failures: failures, Configs: cfgs}, closeServers(servers))
	}
	var inactive []Inactive
	for i, e := range errs {
		if e == nil {
			continue
		}
		if o.Reason != nil {
			e = o.Reason(e, cfgs[i])
		}
		inactive = append(inactive, Inactive{Name: names[i], Err: e})
	}
	return servers, inactive, nil
}
