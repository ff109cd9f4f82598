package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/agentapp/agentapp/trace"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// defaultMCPLogLevel is the least severe server log message shown on
// stderr when --mcp-log-level is not given: warnings and worse are worth a
// person's attention, the rest is what --mcp-log-level debug is for.
const defaultMCPLogLevel = "warning"

// serverLogsPerSecond bounds the server log lines shown per second; a
// server decides how much it logs, not how much of the terminal it takes.
const serverLogsPerSecond = 20

func mcpLogLevelUsage() string {
	names := make([]string, len(mcpclient.LoggingLevels))
	for i, l := range mcpclient.LoggingLevels {
		names[i] = string(l)
	}
	return strings.Join(names, ", ")
}

// parseMCPLogLevel checks a --mcp-log-level value.
func parseMCPLogLevel(s string) (mcp.LoggingLevel, error) {
	l := mcp.LoggingLevel(strings.ToLower(strings.TrimSpace(s)))
	if !slices.Contains(mcpclient.LoggingLevels, l) {
		return "", fmt.Errorf("--mcp-log-level %q: want one of %s", s, mcpLogLevelUsage())
	}
	return l, nil
}

func levelRank(l mcp.LoggingLevel) int { return slices.Index(mcpclient.LoggingLevels, l) }

// serverLogPrinter shows the servers' log messages at min and above on w,
// one line each naming the server ("agentapp: MCP server S (warning):
// text"), at most serverLogsPerSecond a second with a count of the rest;
// with traceTo set, every message (whatever its level) also becomes a
// trace line there.
type serverLogPrinter struct {
	w       io.Writer
	min     mcp.LoggingLevel
	traceTo io.Writer

	mu      sync.Mutex
	window  time.Time
	shown   int
	dropped int
}

func (p *serverLogPrinter) print(l mcpclient.ServerLog) {
	if p.traceTo != nil {
		fmt.Fprintf(p.traceTo, "%s mcp log %s %s: %s\n", trace.Prefix, textsafe.Escape(l.Server), textsafe.Escape(string(l.Level)), l.Text)
	}
	if levelRank(l.Level) < levelRank(p.min) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if now.Sub(p.window) >= time.Second {
		if p.dropped > 0 {
			fmt.Fprintf(p.w, "agentapp: … and %d more log messages from MCP servers not shown\n", p.dropped)
		}
		p.window, p.shown, p.dropped = now, 0, 0
	}
	if p.shown >= serverLogsPerSecond {
		p.dropped++
		return
	}
	p.shown++
	who := textsafe.Escape(l.Server)
	if l.Logger != "" {
		who += "/" + l.Logger
	}
	fmt.Fprintf(p.w, "agentapp: MCP server %s (%s): %s\n", who, textsafe.Escape(string(l.Level)), l.Text)
}

// traceProgress writes a server's progress as a trace line.
func traceProgress(w io.Writer) func(mcpclient.Progress) {
	return func(p mcpclient.Progress) {
		fmt.Fprintf(w, "%s mcp progress %s %s\n", trace.Prefix, textsafe.Escape(p.Server), textsafe.Escape(p.String()))
	}
}

// workingDirRoots is the default roots of a server: the working
// directory, where the user runs agentapp from.
func workingDirRoots() []string {
	wd, err := os.Getwd()
	if err != nil {
		return []string{}
	}
	return []string{wd}
}
