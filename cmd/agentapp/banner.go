package main

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/agentapp/agentapp/model/openai"
	"github.com/spf13/cobra"
)

// banner is what a server prints on stderr when it starts: a title line
// and "label: value" rows under it. For people it is aligned text; with
// --log-format json it is one record whose fields are the rows, so that
// every line of stderr is JSON for a log collector.
type banner struct {
	title string
	rows  []bannerRow
}

// bannerRow is one row: key names its JSON field, label its text column.
// A []string value is a list: one line each in text, an array in JSON.
type bannerRow struct {
	key, label string
	value      any
}

func (b *banner) add(key, label string, value any) {
	b.rows = append(b.rows, bannerRow{key, label, value})
}

// write prints the banner in the command's log format.
func (b *banner) write(cmd *cobra.Command, w io.Writer) {
	if logFormat(cmd) == logJSON {
		attrs := make([]any, 0, len(b.rows))
		for _, r := range b.rows {
			attrs = append(attrs, slog.Any(r.key, r.value))
		}
		cmdLogger(cmd, w, slog.LevelInfo).Info(b.title, attrs...)
		return
	}
	var out strings.Builder
	out.WriteString(b.title + "\n")
	for _, r := range b.rows {
		label := fmt.Sprintf("  %-10s ", r.label+":")
		switch v := r.value.(type) {
		case []string:
			out.WriteString(label + strings.Join(v, "\n"+strings.Repeat(" ", len(label))) + "\n")
		default:
			out.WriteString(label + fmt.Sprint(v) + "\n")
		}
	}
	io.WriteString(w, out.String())
}

// logFormat is the command's --log-format.
func logFormat(cmd *cobra.Command) string {
	f, _ := cmd.Flags().GetString("log-format")
	return f
}

// say writes a one-line message of a server's life (started, stopped) in
// the command's log format: the line itself for people, a record with
// attrs as fields with --log-format json.
func say(cmd *cobra.Command, w io.Writer, line string, attrs ...any) {
	if logFormat(cmd) == logJSON {
		cmdLogger(cmd, w, slog.LevelInfo).Info(line, attrs...)
		return
	}
	fmt.Fprintln(w, line)
}

// traceOutput is where a server's --trace lines go: w itself for people,
// or, with --log-format json, a writer that turns each line into a record
// so the trace does not break the JSON stream.
func traceOutput(cmd *cobra.Command, w io.Writer) io.Writer {
	if logFormat(cmd) != logJSON {
		return w
	}
	return &lineLogger{logger: cmdLogger(cmd, w, slog.LevelInfo)}
}

// maxTraceLine bounds what lineLogger holds of a line without its end; a
// longer one is logged in pieces.
const maxTraceLine = 64 << 10

// lineLogger logs every complete line written to it as one info record.
type lineLogger struct {
	mu      sync.Mutex
	logger  *slog.Logger
	partial []byte
}

func (l *lineLogger) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.logger.Info(string(l.partial[:i]), "trace", true)
		l.partial = l.partial[i+1:]
	}
	if len(l.partial) >= maxTraceLine {
		l.logger.Info(string(l.partial), "trace", true)
		l.partial = nil
	}
	if len(l.partial) == 0 {
		l.partial = nil
	}
	return len(p), nil
}

// baseURLWithNote is the provider's base URL for the model line of a
// banner, followed by where it came from when that was a .env file, so that
// a base URL nobody exported is never used silently.
func baseURLWithNote(cfg openai.Config) string {
	if note := cfg.BaseURLNote(); note != "" {
		return cfg.BaseURL + " (" + note + ")"
	}
	return cfg.BaseURL
}

// baseURLNoted reports whether a model line says the base URL came from a
// .env file: chat -p, which prints no banner, then prints the line on stderr.
func baseURLNoted(info string) bool { return strings.Contains(info, "(base URL from ") }
