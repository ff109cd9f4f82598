package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/agentapp/agentapp/internal/textsafe"
	"github.com/agentapp/agentapp/telemetry"
	"github.com/spf13/cobra"
)

// cliHandler writes log records for a person at a terminal: one line on
// stderr, "agentapp: message (server files, line 3): reason", with
// "warning:" or "error:" in front of the message when the level says so.
// The attributes are worded for reading, not parsing: "key value" pairs in
// parentheses, with an error or reason after a colon. Scripts that want
// the attributes as data use --log-format json. Messages and values are
// escaped (textsafe), so a record never carries a control character or
// escape sequence to the terminal, whoever logged it. The default slog
// handler prefixes a date and time, which is noise in a CLI whose lines
// are read as they come. Records below the handler's level are dropped.
type cliHandler struct {
	mu    *sync.Mutex
	w     io.Writer
	min   slog.Level
	attrs []slog.Attr
}

// newCLIHandler returns a handler writing records of level min and above.
func newCLIHandler(w io.Writer, min slog.Level) *cliHandler {
	return &cliHandler{mu: &sync.Mutex{}, w: w, min: min}
}

// cliLogger is a logger on newCLIHandler.
func cliLogger(w io.Writer, min slog.Level) *slog.Logger { return slog.New(newCLIHandler(w, min)) }

func (h *cliHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.min }

func (h *cliHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString("agentapp: ")
	switch {
	case r.Level >= slog.LevelError:
		b.WriteString("error: ")
	case r.Level >= slog.LevelWarn:
		b.WriteString("warning: ")
	}
	b.WriteString(textsafe.Escape(r.Message))
	var pairs []string
	var reasons []string
	add := func(a slog.Attr) bool {
		if a.Equal(slog.Attr{}) {
			return true
		}
		v := a.Value.Resolve().String()
		if v == "" {
			return true
		}
		v = textsafe.Escape(v)
		switch a.Key {
		case "error", "err", "reason":
			reasons = append(reasons, v)
		default:
			if strings.ContainsAny(v, " ,()") {
				v = strconv.Quote(v)
			}
			pairs = append(pairs, a.Key+" "+v)
		}
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	if len(pairs) > 0 {
		b.WriteString(" (" + strings.Join(pairs, ", ") + ")")
	}
	for _, why := range reasons {
		b.WriteString(": " + why)
	}
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *cliHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &cliHandler{mu: h.mu, w: h.w, min: h.min, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

// WithGroup flattens groups: the CLI's records do not use them.
func (h *cliHandler) WithGroup(string) slog.Handler { return h }

// Log formats (--log-format): text for people, json for log collectors.
const (
	logText = "text"
	logJSON = "json"
)

// cmdLogger is the logger of a command: cliLogger, or JSON records (one
// object per line, slog's attributes as fields) with --log-format json.
func cmdLogger(cmd *cobra.Command, w io.Writer, min slog.Level) *slog.Logger {
	if f, _ := cmd.Flags().GetString("log-format"); f == logJSON {
		// A record logged with a traced context carries trace_id and span_id.
		return slog.New(telemetry.LogHandler(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: min})))
	}
	return cliLogger(w, min)
}

// checkLogFormat is the root's check of --log-format, before any command
// runs; it also makes the default logger (for dependencies that log on
// it) follow the flag.
func checkLogFormat(cmd *cobra.Command) error {
	f, _ := cmd.Flags().GetString("log-format")
	switch f {
	case logText, logJSON:
	default:
		return usageHint(cmd, fmt.Errorf("--log-format %q: use text or json", f))
	}
	slog.SetDefault(cmdLogger(cmd, cmd.ErrOrStderr(), slog.LevelInfo))
	return nil
}
