package main

import (
	"context"

	"github.com/agentapp/agentapp/mcpclient"
	mcptasks "github.com/agentapp/agentapp/mcpclient/tasks"
	"github.com/spf13/cobra"
)

// MCP tasks from scripts: `agentapp mcp call --task` and `agentapp mcp
// tasks list|get|result|cancel`. A call of a tool that requires or allows
// a task already runs as one (the server's "tasks" setting); --task makes
// it one or fails.

// addMCPTaskCmds adds --task to `mcp call` and the `mcp tasks` commands.
func addMCPTaskCmds(mcpCmd *cobra.Command, f *mcpFlags) {
	for _, c := range mcpCmd.Commands() {
		if c.Name() != "call" {
			continue
		}
		var asTask bool
		c.Flags().BoolVar(&asTask, "task", false, "run the call as an MCP task (the tool must allow it); its status goes to stderr, Ctrl-C cancels it")
		run := c.RunE
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if asTask {
				cmd.SetContext(mcpclient.AsTask(cmd.Context()))
			}
			return run(cmd, args)
		}
	}
	mcpCmd.AddCommand(newMCPTasksCmd(f))
}

func newMCPTasksCmd(f *mcpFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tasks list|get|result|cancel [TASK-ID] [--server S] [-- COMMAND ARGS…]",
		Short: "List, inspect, fetch or cancel the server's MCP tasks",
		Long: `tasks speaks the task methods of MCP (protocol 2025-11-25) and prints JSON:

  agentapp mcp tasks list --server http://127.0.0.1:8080/mcp --token T
  agentapp mcp tasks get TASK-ID --server …
  agentapp mcp tasks result TASK-ID --server …   (waits for the end)
  agentapp mcp tasks cancel TASK-ID --server …

A server shows a caller its own tasks only, and a stdio server started for
one command forgets its tasks when it exits, so these are for HTTP servers.
A call started with agentapp mcp call names its task on stderr.`,
	}
	byID := func(name, short string, fn func(context.Context, *mcpclient.Bridge, string) (any, error)) *cobra.Command {
		return &cobra.Command{
			Use:   name + " TASK-ID [--server S] [-- COMMAND ARGS…]",
			Short: short,
			RunE: func(cmd *cobra.Command, args []string) error {
				return withBridge(cmd, f, args, 1, func(ctx context.Context, b *mcpclient.Bridge, own []string) error {
					if len(own) != 1 {
						return mcpUsageError(cmd, "%s needs the task id", name)
					}
					v, err := fn(ctx, b, own[0])
					if err != nil {
						return &exitError{mcpExitConnection, err}
					}
					return mcpWriteJSON(cmd.OutOrStdout(), v)
				})
			},
		}
	}
	cmd.AddCommand(
		&cobra.Command{
			Use:   "list [--server S] [-- COMMAND ARGS…]",
			Short: "List the tasks the server keeps for you",
			RunE: func(cmd *cobra.Command, args []string) error {
				return withBridge(cmd, f, args, 0, func(ctx context.Context, b *mcpclient.Bridge, _ []string) error {
					tasks, err := b.ListTasks(ctx)
					if err != nil {
						return &exitError{mcpExitConnection, err}
					}
					if tasks == nil {
						tasks = []*mcptasks.Task{}
					}
					return mcpWriteJSON(cmd.OutOrStdout(), map[string]any{"server": b.Name(), "tasks": tasks})
				})
			},
		},
		byID("get", "Print a task's state (tasks/get)", func(ctx context.Context, b *mcpclient.Bridge, id string) (any, error) {
			return b.GetTask(ctx, id)
		}),
		byID("result", "Wait for a task to end and print its result (tasks/result)", func(ctx context.Context, b *mcpclient.Bridge, id string) (any, error) {
			return b.TaskResult(ctx, id)
		}),
		byID("cancel", "Cancel a task (tasks/cancel) and print its state", func(ctx context.Context, b *mcpclient.Bridge, id string) (any, error) {
			return b.CancelTask(ctx, id)
		}),
	)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return mcpUsageError(cmd, "unknown subcommand %q; use list, get, result or cancel", args[0])
		}
		return mcpUsageError(cmd, "missing subcommand: list, get, result or cancel")
	}
	return cmd
}

// TaskSupport lets the adapter word the errors of a tool that requires a
// task as the bridge would.
func (r *recordingCaller) TaskSupport(tool string) string {
	if ts, ok := r.next.(interface{ TaskSupport(string) string }); ok {
		return ts.TaskSupport(tool)
	}
	return mcptasks.Forbidden
}
