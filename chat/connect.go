package chat

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/agentapp/agentapp/agent"
)

// Server is a connected MCP server as the chat sees it; *mcpclient.Bridge
// implements it. Tools are already adapted (and prefixed and filtered as
// the server's config says), with Origin set to the server's name.
type Server interface {
	Name() string
	Tools() []*agent.Tool
	Close() error
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

// ConnectAll connects every server at once and waits for all of them, so
// start-up takes as long as the slowest server rather than the sum. The
// servers come back in the order of names. If any connection fails, the
// servers that did connect are closed (no process outlives a failed start)
// and the error joins one *ConnectError per failed server, in order.
func ConnectAll[C any](ctx context.Context, names []string, cfgs []C, connect func(context.Context, C) (Server, error)) ([]Server, error) {
	servers, errs := ConnectEach(ctx, names, cfgs, connect)
	if err := errors.Join(errs...); err != nil {
		closeAll(servers)
		return nil, err
	}
	return servers, nil
}

// ConnectEach connects every server at once, like ConnectAll, but keeps
// the servers that connected when others fail: servers[i] is set or
// errs[i] is a *ConnectError, so the chat can start with the servers that
// work and list the others as failed.
func ConnectEach[C any](ctx context.Context, names []string, cfgs []C, connect func(context.Context, C) (Server, error)) (servers []Server, errs []error) {
	servers = make([]Server, len(cfgs))
	errs = make([]error, len(cfgs))
	var wg sync.WaitGroup
	for i, cfg := range cfgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := connect(ctx, cfg)
			if err != nil {
				errs[i] = &ConnectError{Server: names[i], Err: err}
				return
			}
			servers[i] = s
		}()
	}
	wg.Wait()
	return servers, errs
}

// closeAll closes every server at once (each close may wait out a grace
// period for its process) and returns their errors joined.
func closeAll(servers []Server) error {
	errs := make([]error, len(servers))
	var wg sync.WaitGroup
	for i, s := range servers {
		if s == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Close(); err != nil {
				errs[i] = fmt.Errorf("close MCP server %q: %w", s.Name(), err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
