// Command agentapp is a customer-service agent that speaks the Model Context
// Protocol both ways: `agentapp chat` talks to a model with local and MCP
// tools, `agentapp serve` publishes the tools and knowledge base as an MCP
// server, `agentapp mcp` is a scriptable MCP client and `agentapp kb`
// manages the knowledge base.
//
// This package only wires flags to the packages that do the work.
package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/agentapp/agentapp/mcpclient/supervise"
	"github.com/agentapp/agentapp/mcpconfig"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// exitError carries a process exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func newRootCmd() *cobra.Command {
	info := readBuildInfo()
	root := &cobra.Command{
		Use:   "agentapp",
		Short: "A customer-service agent runtime that speaks MCP in both directions",
		Long: `agentapp runs a customer-service assistant (orders, tickets, hand-off to a human,
a company knowledge base) with a tool-calling model. Its tools are served as an
MCP server, and any external MCP server's tools can be plugged into the chat.
agentapp mcp manages those servers (add, list, get, remove, approve) and calls
any MCP server's tools from a script.`,
		Version:       info.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// The version flag is declared here rather than by cobra so that it has
	// no -v shorthand: under mcp, -v means --verbose, and one letter should
	// mean one thing everywhere.
	root.Flags().Bool("version", false, "print the version, VCS revision and Go version")
	root.SetVersionTemplate("{{.Version}}\n")
	root.PersistentFlags().String("data-dir", "", "data directory (default $AGENTAPP_DATA_DIR or the user data dir)")
	root.PersistentFlags().String("log-format", logText, "log lines on stderr: text (for people) or json (one JSON object per line, for log collectors)")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return checkLogFormat(cmd) }
	addDatabaseFlags(root)
	root.AddCommand(newChatCmd(), newServeCmd(), newWebCmd(), newKBCmd(), newMCPCmd(), newDBCmd(), newVersionCmd(info))
	markUsageErrors(root)
	return root
}

// exitUsage is the exit status of every usage error: an unknown command or
// flag, a bad flag value, or the wrong number of arguments. Scripts can
// tell "you called me wrong" from "the work failed" (1) this way.
const exitUsage = 2

// markUsageErrors makes every usage error cobra detects in the tree under
// cmd exit with exitUsage and point to the command's --help. Cobra reports
// them as plain errors, which would otherwise exit 1 like a failed command.
// A command group (kb, the root) becomes runnable, showing its help, so
// that an unknown subcommand reaches its argument check instead of
// printing the help and exiting 0.
func markUsageErrors(cmd *cobra.Command) {
	if cmd.HasSubCommands() && !cmd.Runnable() {
		cmd.Args = unknownSubcommand
		// Cobra's own unknown-command error suggests names within two
		// edits; SuggestionsFor only does when this is set.
		if cmd.SuggestionsMinimumDistance <= 0 {
			cmd.SuggestionsMinimumDistance = 2
		}
		cmd.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	}
	if check := cmd.Args; check != nil {
		cmd.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return usageHint(cmd, err)
			}
			return nil
		}
	}
	flagErr := cmd.FlagErrorFunc()
	cmd.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageHint(cmd, flagErr(cmd, suggestFlag(cmd, err)))
	})
	for _, c := range cmd.Commands() {
		markUsageErrors(c)
	}
}

// suggestFlag adds "did you mean --X?" to pflag's error for an unknown
// long flag that is one or two edits from a flag of cmd (--mpc, --mcp).
func suggestFlag(cmd *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	if n := mcpconfig.Nearest(name, names); n != "" {
		return fmt.Errorf("%w; did you mean --%s?", err, n)
	}
	return err
}

// unknownSubcommand is the argument check of a command group: any argument
// is a subcommand it does not have.
func unknownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", s[0])
	}
	return errors.New(msg)
}

// usageHint returns err as a usage error (exit status exitUsage) that
// names the --help to read, unless it already does.
func usageHint(cmd *cobra.Command, err error) error {
	var ee *exitError
	if errors.As(err, &ee) && ee.code != exitUsage {
		return err
	}
	if !strings.Contains(err.Error(), "--help") {
		err = fmt.Errorf("%w (see %s --help)", err, cmd.CommandPath())
	} else if ee != nil {
		return err
	}
	return &exitError{code: exitUsage, err: err}
}
func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	// agentapp's packages log only on the loggers the commands pass them;
	// the default logger is for dependencies that log on it, so their lines
	// look like ours.
	slog.SetDefault(cliLogger(os.Stderr, slog.LevelInfo))
	// A stdio MCP server's helper that left its process group (setsid) is
	// reparented to us when the server exits, so that the bridge can still
	// stop it and we reap it. Only here, not in newRootCmd: the tests that
	// run the commands in their own process start children of their own.
	// Where it is not supported, the bridges stop process groups only.
	// Commands that start no MCP server (serve, kb) skip it: it costs a
	// signal handler and a reaper for nothing.
	root := newRootCmd()
	if startsServers(root, args) {
		if err := supervise.AdoptOrphans(); err != nil && !errors.Is(err, errors.ErrUnsupported) {
			fmt.Fprintf(os.Stderr, "agentapp: %v; a helper an MCP server detaches from its tree (forking twice, setsid, clearing its environment) may outlive agentapp\n", err)
		}
	}
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	fmt.Fprintln(os.Stderr, "agentapp:", err)
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}

// startsServers reports whether the command args select may start stdio
// MCP servers: chat, web and the mcp client commands.
func startsServers(root *cobra.Command, args []string) bool {
	cmd, _, err := root.Find(args)
	if err != nil {
		return false
	}
	for c := cmd; c != nil && c != root; c = c.Parent() {
		if c.Parent() == root && (c.Name() == "chat" || c.Name() == "mcp" || c.Name() == "web") {
			return true
		}
	}
	return false
}
