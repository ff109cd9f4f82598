package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/kb"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/agentapp/agentapp/support"
)

// OpenFunc opens the domain behind the server: the support service and the
// knowledge base, their tables migrated. It runs at most once.
type OpenFunc func(ctx context.Context) (*support.Service, *kb.KB, error)

// Lazy is the server's domain opened on the first request that needs it
// (a tool call, resources/list or read, a task), not at start: opening
// SQLite and checking the migrations was about a tenth of a cold start,
// and a client's initialize and tools/list need neither. Every such
// request waits for the one opening; if it fails, each gets its error.
type Lazy struct {
	open  OpenFunc
	once  sync.Once
	svc   *support.Service
	k     *kb.KB
	tools map[string]*agent.Tool
	err   error
}

// NewLazy returns a Lazy that calls open on first use.
func NewLazy(open OpenFunc) *Lazy { return &Lazy{open: open} }

// get opens the domain once. The opening does not end with the request
// that happens to trigger it (its cancellation would fail every later
// request too); open bounds its own waits.
func (l *Lazy) get(ctx context.Context) (*Lazy, error) {
	l.once.Do(func() {
		svc, k, err := l.open(context.WithoutCancel(ctx))
		if err != nil {
			l.err = fmt.Errorf("the customer-service data could not be opened: %w", err)
			return
		}
		l.svc, l.k = svc, k
		l.tools = make(map[string]*agent.Tool)
		for _, t := range PublishedTools(svc, k) {
			l.tools[t.Name] = t
		}
	})
	if l.err != nil {
		return nil, l.err
	}
	return l, nil
}

// Stop ends the opening: if the domain was never opened, later requests
// get an error instead of opening it. It reports whether open ran, so the
// caller knows whether there is a store to close; an opening under way
// finishes first.
func (l *Lazy) Stop() (opened bool) {
	opened = true
	l.once.Do(func() { opened, l.err = false, errors.New("the server is shutting down") })
	return opened
}

// ServerOptions are ServerOptions(svc, k, version) for the domain l opens:
// the same tools (names, descriptions, schemas, annotations), documents and
// tasks, each opening the domain when first used.
func (l *Lazy) ServerOptions(version string) *mcpserver.Options {
	opts := ServerOptions(support.Unopened(), &kb.KB{}, version)
	for i, t := range opts.Tools {
		opts.Tools[i] = l.tool(t)
	}
	opts.Docs = lazyDocs{l}
	opts.Tasks = lazyTasks{l}
	return opts
}

// tool is t's description running the opened domain's tool of that name.
func (l *Lazy) tool(t *agent.Tool) *agent.Tool {
	name := t.Name
	return &agent.Tool{
		Name: t.Name, Title: t.Title, Description: t.Description,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
		ReadOnly: t.ReadOnly, Idempotent: t.Idempotent, Destructive: t.Destructive, OpenWorld: t.OpenWorld,
		Origin: t.Origin, Validate: t.Validate,
		Execute: func(ctx context.Context, args json.RawMessage) (any, error) {
			d, err := l.get(ctx)
			if err != nil {
				return nil, err
			}
			return d.tools[name].Execute(ctx, args)
		},
	}
}

type lazyDocs struct{ l *Lazy }

func (d lazyDocs) ListDocs(ctx context.Context) ([]mcpserver.DocInfo, error) {
	l, err := d.l.get(ctx)
	if err != nil {
		return nil, err
	}
	return Docs(l.k).ListDocs(ctx)
}

func (d lazyDocs) ReadDoc(ctx context.Context, id string) (mcpserver.DocInfo, string, error) {
	l, err := d.l.get(ctx)
	if err != nil {
		return mcpserver.DocInfo{}, "", err
	}
	return Docs(l.k).ReadDoc(ctx, id)
}

type lazyTasks struct{ l *Lazy }

func (t lazyTasks) TaskTools() []string { return refundTasks{}.TaskTools() }

func (t lazyTasks) StartTask(ctx context.Context, caller, tool string, args json.RawMessage, ttl time.Duration) (*mcpserver.Task, error) {
	l, err := t.l.get(ctx)
	if err != nil {
		return nil, err
	}
	return refundTasks{l.svc}.StartTask(ctx, caller, tool, args, ttl)
}

func (t lazyTasks) Task(ctx context.Context, caller, id string) (*mcpserver.Task, error) {
	l, err := t.l.get(ctx)
	if err != nil {
		return nil, err
	}
	return refundTasks{l.svc}.Task(ctx, caller, id)
}

func (t lazyTasks) Tasks(ctx context.Context, caller string) ([]*mcpserver.Task, error) {
	l, err := t.l.get(ctx)
	if err != nil {
		return nil, err
	}
	return refundTasks{l.svc}.Tasks(ctx, caller)
}

func (t lazyTasks) CancelTask(ctx context.Context, caller, id string) (*mcpserver.Task, error) {
	l, err := t.l.get(ctx)
	if err != nil {
		return nil, err
	}
	return refundTasks{l.svc}.CancelTask(ctx, caller, id)
}
