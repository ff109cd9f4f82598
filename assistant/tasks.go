package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/mcpserver"
	"github.com/agentapp/agentapp/support"
)

// refundTasks runs requestRefund as an MCP task on the support database:
// the task works ("waiting for an operator") until an operator decides.
type refundTasks struct{ svc *support.Service }

func (r refundTasks) TaskTools() []string { return []string{"requestRefund"} }

func (r refundTasks) StartTask(ctx context.Context, caller, tool string, args json.RawMessage, ttl time.Duration) (*mcpserver.Task, error) {
	t, err := r.svc.StartRefundTask(ctx, caller, args, ttl)
	return toServerTask(t, err)
}

func (r refundTasks) Task(ctx context.Context, caller, id string) (*mcpserver.Task, error) {
	return toServerTask(r.svc.RefundTask(ctx, caller, id))
}

func (r refundTasks) Tasks(ctx context.Context, caller string) ([]*mcpserver.Task, error) {
	ts, err := r.svc.RefundTasks(ctx, caller)
	if err != nil {
		return nil, err
	}
	out := make([]*mcpserver.Task, 0, len(ts))
	for _, t := range ts {
		st, _ := toServerTask(t, nil)
		out = append(out, st)
	}
	return out, nil
}

func (r refundTasks) TasksPage(ctx context.Context, caller, cursor string) ([]*mcpserver.Task, string, error) {
	ts, next, err := r.svc.RefundTasksPage(ctx, caller, cursor)
	if errors.Is(err, support.ErrBadCursor) {
		return nil, "", mcpserver.ErrBadCursor
	}
	if err != nil {
		return nil, "", err
	}
	out := make([]*mcpserver.Task, 0, len(ts))
	for _, t := range ts {
		st, _ := toServerTask(t, nil)
		out = append(out, st)
	}
	return out, next, nil
}

func (r refundTasks) CancelTask(ctx context.Context, caller, id string) (*mcpserver.Task, error) {
	return toServerTask(r.svc.CancelRefundTask(ctx, caller, id))
}

func toServerTask(t *support.RefundTask, err error) (*mcpserver.Task, error) {
	switch {
	case errors.Is(err, support.ErrNotFound):
		return nil, mcpserver.ErrNoTask
	case errors.Is(err, support.ErrTaskEnded):
		return nil, mcpserver.ErrTaskEnded
	case err != nil:
		return nil, err
	}
	return &mcpserver.Task{
		ID: t.ID, Status: t.Status, StatusMessage: t.StatusMessage,
		Created: t.Created, Updated: t.Updated, TTL: t.TTL, PollInterval: t.PollInterval,
		Output: t.Refund,
	}, nil
}

// callerTool makes a tool's records belong to the MCP caller
// (mcpserver.CallerFrom: the bearer token, else the session), so that a
// refund request filed in one session can be read in another with the
// same token, on any replica.
func callerTool(t *agent.Tool) *agent.Tool {
	exec := t.Execute
	return &agent.Tool{
		Name: t.Name, Title: t.Title, Description: t.Description,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema,
		ReadOnly: t.ReadOnly, Idempotent: t.Idempotent, Destructive: t.Destructive, OpenWorld: t.OpenWorld,
		Origin: t.Origin, Validate: t.Validate,
		Execute: func(ctx context.Context, args json.RawMessage) (any, error) {
			if c := mcpserver.CallerFrom(ctx); c != "" {
				ctx = support.WithCaller(ctx, c)
			}
			return exec(ctx, args)
		},
	}
}
