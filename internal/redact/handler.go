package redact

import (
	"context"
	"log/slog"
)

// Handler returns a slog.Handler that redacts the message and every
// string (and error) attribute of a record before h sees it, so that an
// error logged with its details does not write the key into the log.
func Handler(h slog.Handler, known ...string) slog.Handler {
	return &handler{h: h, known: append([]string(nil), known...)}
}

type handler struct {
	h     slog.Handler
	known []string
}

func (r *handler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r *handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, Secrets(rec.Message, r.known...), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(r.attr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, Secrets(v.String(), r.known...))
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, len(g))
		for i, ga := range g {
			out[i] = r.attr(ga)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, Secrets(err.Error(), r.known...))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

func (r *handler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = r.attr(a)
	}
	return &handler{h: r.h.WithAttrs(red), known: r.known}
}

func (r *handler) WithGroup(name string) slog.Handler {
	return &handler{h: r.h.WithGroup(name), known: r.known}
}
