package main

import (
	"context"
	"log/slog"
	"os"
	"strings"

	"github.com/agentapp/agentapp/assistant/compose"
	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/telemetry"
	"github.com/spf13/cobra"
)

// hostSetup is what both front ends read before their host opens, in one
// order: the model and its context window, the extra servers, the data
// directory, the guards (a mistyped switch is a start-up error, not a
// guard silently left off) and the limits.
type hostSetup struct {
	m          model.Model
	info       string
	hint       func(error) string
	ctxOpts    host.ContextOptions
	extra      []host.ExtraServer
	dir        string
	guards     guard.Config
	maxOut     int
	toolSearch *host.ToolSearchOptions
}

func readHostSetup(cmd *cobra.Command, f *chatFlags) (*hostSetup, error) {
	s := &hostSetup{}
	var err error
	if s.m, s.info, s.hint, err = chooseModel(f.model); err != nil {
		return nil, err
	}
	if s.ctxOpts, err = contextOptions(f, cmd.Flags().Changed("context-window"), s.m); err != nil {
		return nil, err
	}
	if s.extra, err = extraServers(f); err != nil {
		return nil, err
	}
	if s.dir, err = dataDir(cmd); err != nil {
		return nil, err
	}
	if s.guards, err = readGuardConfig(os.Getenv, s.dir); err != nil {
		return nil, err
	}
	if err := f.perms.apply(&s.guards); err != nil {
		return nil, err
	}
	if s.maxOut, s.toolSearch, err = limitOptions(&f.limits, chatConfigPath(f)); err != nil {
		return nil, err
	}
	return s, nil
}

// frontEnd is what differs between the front ends' hosts.
type frontEnd struct {
	// approve picks the project servers that may run.
	approve func(project []mcpconfig.ScopedServer) ([]mcpconfig.Server, error)
	connect []mcpclient.ConnectOption
	notify  func(host.Notice)
	hints   host.Hints
	logger  *slog.Logger
	tracing *telemetry.Tracing
}

// startHost opens the store and the host the way both front ends do: the
// assistant's parts (compose.Host), the config scopes and the extra
// servers, the guards and the limits. intr, when set, gives up on the
// servers still connecting.
func (s *hostSetup) startHost(ctx context.Context, cmd *cobra.Command, f *chatFlags, intr <-chan os.Signal, fe frontEnd) (*host.Host, error) {
	st, err := openStore(cmd)
	if err != nil {
		return nil, err
	}
	return openHost(ctx, intr, limited(s.maxOut, s.toolSearch, compose.Host(&host.Options{
		Model:             s.m,
		ConfigFile:        f.config,
		DefaultConfigFile: defaultConfigFile,
		Getenv:            os.Getenv,
		LookupEnv:         os.LookupEnv,
		Extra:             s.extra,
		ApproveProject:    fe.approve,
		Guards:            &s.guards,
		Store:             st,
		AuditToFile:       strings.TrimSpace(os.Getenv(guard.EnvAuditLog)) != "",
		ConnectOptions:    fe.connect,
		Strict:            f.strictMCP,
		Reason:            connectReason,
		MaxSteps:          f.maxSteps,
		TurnTimeout:       f.turnTimeout,
		Notify:            fe.notify,
		Logger:            fe.logger,
		Tracing:           fe.tracing,
		Hints:             fe.hints,
		Context:           s.ctxOpts,
	})))
}
