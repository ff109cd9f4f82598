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
)

// cliHandler writes log records for a person at a terminal: one line on
// stderr, "agentapp: message key=value …", with "warning:" or "error:" in
// front of the message when the level says so. Messages and values are
// escaped (textsafe), so a record never carries a control character or
// escape sequence to the terminal, whoever logged it. The default slog handler
// prefixes a date and time, which is noise in a CLI whose lines are read
// as they come. Records below the handler's level are dropped.
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
	write := func(a slog.Attr) bool {
		if a.Equal(slog.Attr{}) {
			return true
		}
		v := a.Value.Resolve().String()
		if v == "" || strings.ContainsAny(v, " \t\n\"=") || textsafe.Escape(v) != v {
			// Quoted, control characters escaped: values quote servers
			// and files, and must not reach the terminal as they are.
			v = strconv.Quote(v)
		}
		fmt.Fprintf(&b, " %s=%s", a.Key, v)
		return true
	}
	for _, a := range h.attrs {
		write(a)
	}
	r.Attrs(write)
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
