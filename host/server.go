package host

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is a connected MCP server as the host sees it; *mcpclient.Bridge
// implements it. Tools are already adapted (and prefixed and filtered as
// the server's config says), with Origin set to the server's name.
type Server interface {
	Name() string
	Tools() []*agent.Tool
	Close() error
}

// Supervised is a Server whose process is supervised while the host runs
// (*mcpclient.Bridge): it can be restarted, reports its state, and its tool
// list can change (a restart lists the tools again; a server may announce
// notifications/tools/list_changed).
type Supervised interface {
	Server
	// Status reports the state (connected, restarting, down) and the
	// number of tools.
	Status() mcpclient.Status
	// Restart reconnects the server now and gives a server that is down
	// its automatic restarts back.
	Restart(ctx context.Context) error
	// Refresh re-reads the tool list if the server announced a change, and
	// returns the list's generation, which grows whenever Tools may have
	// changed.
	Refresh(ctx context.Context) (uint64, error)
}

// Catalog is a Server that may offer resources and prompts besides tools
// (*mcpclient.Bridge). The lists are the server's last listing, refreshed
// after it announced a change.
type Catalog interface {
	Server
	OffersResources() bool
	OffersPrompts() bool
	Resources(ctx context.Context) ([]*mcp.Resource, error)
	ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error)
	Prompts(ctx context.Context) ([]*mcp.Prompt, error)
	GetPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error)
}

// Rooted is a Server that offers roots (*mcpclient.Bridge).
type Rooted interface {
	Server
	Roots() []*mcp.Root
	SetRoots(dirs []string) error
}

// The bridge is what the host connects; these keep it what the host
// expects.
var (
	_ Supervised = (*mcpclient.Bridge)(nil)
	_ Catalog    = (*mcpclient.Bridge)(nil)
	_ Rooted     = (*mcpclient.Bridge)(nil)
)

// ServerState is where a configured MCP server stands. A running server
// reports its supervisor's finer state (connected, restarting, down)
// instead.
type ServerState string

// The states of a configured server that is not running.
const (
	// StateFailed: the server did not connect; the reason is kept.
	StateFailed ServerState = "failed"
	// StateDisabled: the config says "disabled": true, or it was disabled
	// while the host runs.
	StateDisabled ServerState = "disabled"
	// StateNeedsLogin: the server refused the connection until the user
	// logs in.
	StateNeedsLogin ServerState = "needs login"
)

// Inactive is a configured MCP server that is not running: it failed to
// connect, it needs a login, or it is disabled. The host starts without it
// and lists it with its state, so one broken server does not keep the
// others from being used.
type Inactive struct {
	Name string
	// Disabled is set for a server the config disables; Err is then nil.
	Disabled bool
	// DisabledBy says where it was disabled (e.g. the config file); ""
	// means it was disabled while the host runs.
	DisabledBy string
	// Err is why the server failed to connect.
	Err error
}

// State is the server's state: disabled, needs login (the error carries
// a LoginHint) or failed.
func (in Inactive) State() ServerState {
	switch {
	case in.Disabled:
		return StateDisabled
	case LoginHint(in.Err) != "":
		return StateNeedsLogin
	}
	return StateFailed
}

// LoginHint returns the command that logs in to a server that refused the
// connection for want of a login, or "" when err is not such a refusal.
// Any error in the chain with a LoginHint() string method is one (the
// OAuth client's login-required error has it), so the host needs no
// knowledge of how logging in works.
func LoginHint(err error) string {
	var h interface{ LoginHint() string }
	if err != nil && errors.As(err, &h) {
		return h.LoginHint()
	}
	return ""
}

// ConnectError is a server that could not be connected at start-up.
type ConnectError struct {
	// Server is the name of the server from the config or --mcp flag.
	Server string
	Err    error
}

func (e *ConnectError) Error() string { return "MCP server " + quote(e.Server) + ": " + e.Err.Error() }
func (e *ConnectError) Unwrap() error { return e.Err }

func quote(s string) string { return `"` + s + `"` }

// connectServers connects every server at once and waits for all of them, so
// start-up takes as long as the slowest server rather than the sum. The
// servers come back in the order of names. If any connection fails, the
// servers that did connect are closed (no process outlives a failed start)
// and the error joins one *ConnectError per failed server, in order.
func connectServers[C any](ctx context.Context, names []string, cfgs []C, connect func(context.Context, C) (Server, error)) ([]Server, error) {
	servers, errs := connectEach(ctx, names, cfgs, connect)
	if err := errors.Join(errs...); err != nil {
		_ = closeServers(servers)
		return nil, err
	}
	return servers, nil
}

// connectEach connects every server at once, like connectServers, but keeps
// the servers that connected when others fail: servers[i] is set or
// errs[i] is a *ConnectError, so the host can start with the servers that
// work and list the others as failed.
func connectEach[C any](ctx context.Context, names []string, cfgs []C, connect func(context.Context, C) (Server, error)) (servers []Server, errs []error) {
	servers = make([]Server, len(cfgs))
	errs = make([]error, len(cfgs))
	var wg sync.WaitGroup
	for i, cfg := range cfgs {
		wg.Go(func() {
			s, err := connect(ctx, cfg)
			if err != nil {
				errs[i] = &ConnectError{Server: names[i], Err: err}
				return
			}
			servers[i] = s
		})
	}
	wg.Wait()
	return servers, errs
}

// closeTimeout bounds closeServers: a bridge's Close waits out its process's
// grace period, so closing them one after the other could take N times
// that.
const closeTimeout = 15 * time.Second

// closeServers closes every server at once and returns their errors joined,
// each naming its server. It waits at most closeTimeout: a server still
// closing then is reported as an error (its Close goes on and ends on its
// own bound) rather than holding up the caller. Nil servers are skipped.
func closeServers(servers []Server) error {
	return closeAll(servers, closeTimeout)
}

func closeAll(servers []Server, limit time.Duration) error {
	type result struct {
		i   int
		err error
	}
	done := make(chan result, len(servers))
	n := 0
	for i, s := range servers {
		if s == nil {
			continue
		}
		n++
		go func() {
			var err error
			if cerr := s.Close(); cerr != nil {
				err = fmt.Errorf("close MCP server %q: %w", s.Name(), cerr)
			}
			done <- result{i, err}
		}()
	}
	errs := make([]error, len(servers))
	closed := make([]bool, len(servers))
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for range n {
		select {
		case r := <-done:
			errs[r.i], closed[r.i] = r.err, true
		case <-timer.C:
			var open []string
			for i, s := range servers {
				if s != nil && !closed[i] {
					open = append(open, quote(s.Name()))
				}
			}
			errs = append(errs, fmt.Errorf("MCP %s %s still closing after %v; %s left to finish on %s own", plural(len(open), "server", "servers"), strings.Join(open, ", "), limit, plural(len(open), "it is", "they are"), plural(len(open), "its", "their")))
			return errors.Join(errs...)
		}
	}
	return errors.Join(errs...)
}

// indexOf returns the index of the server called name in servers, or -1.
func indexOf(servers []Server, name string) int {
	return slices.IndexFunc(servers, func(s Server) bool { return s.Name() == name })
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
