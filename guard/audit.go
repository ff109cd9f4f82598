package guard

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Audit event names.
const (
	// EventAllowlistDenied: an MCP tool not on the allowlist was called.
	EventAllowlistDenied = "allowlist_denied"
	// EventInjectionDenied: an MCP tool call's arguments held an
	// injection pattern.
	EventInjectionDenied = "injection_denied"
	// EventConfirm: the user was asked to confirm a call; Decision says
	// what came of it.
	EventConfirm = "confirm"
	// EventPermissionDenied: the permission policy denies the tool.
	EventPermissionDenied = "permission_denied"
	// EventInputRejected: a user message held an injection pattern.
	EventInputRejected = "input_rejected"
	// EventViewContextRejected: the context an MCP App view reported for
	// the model held an injection pattern.
	EventViewContextRejected = "view_context_rejected"
	// EventIngestRejected: a document held an injection pattern.
	EventIngestRejected = "ingest_rejected"
)

// Event is one line of the audit log.
type Event struct {
	Time  time.Time `json:"time"`
	Event string    `json:"event"`
	// Tool and Server name the MCP tool call concerned.
	Tool   string `json:"tool,omitempty"`
	Server string `json:"server,omitempty"`
	// Reason says why, in words.
	Reason string `json:"reason,omitempty"`
	// Pattern and Match describe an injection finding.
	Pattern string `json:"pattern,omitempty"`
	Match   string `json:"match,omitempty"`
	// Decision is "approved" or "refused" for a confirmation.
	Decision string `json:"decision,omitempty"`
	// Document and Chunk locate a rejected ingest (Chunk is 1-based).
	Document string `json:"document,omitempty"`
	Chunk    int    `json:"chunk,omitempty"`
	// Args is a short preview of the call's arguments.
	Args string `json:"args,omitempty"`
}

// Audit appends events to a JSON-lines file. The file is opened on the
// first event (so a chat that refuses nothing leaves no file), in append
// mode, created with mode 0600 because it may quote what users and servers
// sent. An I/O error never stops the caller: the first one is logged, the
// event is dropped and later events are tried again. A nil *Audit, or one
// with an empty path, records nothing. Safe for concurrent use.
type Audit struct {
	path   string
	sink   AuditSink // set: records go here instead of the file
	logger *slog.Logger
	now    func() time.Time

	mu     sync.Mutex
	f      *os.File
	warned bool
}

// NewAudit returns an audit log writing to path. Failures are reported to
// logger; nil discards them, so a program that wants to hear that its audit
// log cannot be written must pass one.
func NewAudit(path string, logger *slog.Logger) *Audit {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Audit{path: path, logger: logger, now: time.Now}
}

// AuditSink stores audit records somewhere other than a file: the shared
// database, so that replicas behind a load balancer keep one trail.
// *store.Store implements it.
type AuditSink interface {
	AppendAudit(ctx context.Context, at time.Time, event string, record []byte) error
}

// auditSinkTimeout bounds one write to a sink: a database that went away
// must not hold up the tool call being audited.
const auditSinkTimeout = 5 * time.Second

// NewAuditTo returns an audit log writing to sink; where names it for
// people (the banner shows it as the audit log's place). Failures are
// reported as NewAudit's are.
func NewAuditTo(sink AuditSink, where string, logger *slog.Logger) *Audit {
	a := NewAudit(where, logger)
	a.sink = sink
	return a
}

// Path is the file the log is written to, or where a sink keeps it.
func (a *Audit) Path() string {
	if a == nil {
		return ""
	}
	return a.path
}

// Record appends one event, stamping its time when unset.
func (a *Audit) Record(e Event) {
	if a == nil || (a.path == "" && a.sink == nil) {
		return
	}
	if e.Time.IsZero() {
		e.Time = a.now()
	}
	e.Time = e.Time.UTC()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		a.fail("encode audit event", err)
		return
	}
	if a.sink != nil {
		ctx, cancel := context.WithTimeout(context.Background(), auditSinkTimeout)
		defer cancel()
		if err := a.sink.AppendAudit(ctx, e.Time, e.Event, bytes.TrimSuffix(b.Bytes(), []byte("\n"))); err != nil {
			a.fail("write audit record", err)
		}
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		if err := os.MkdirAll(filepath.Dir(a.path), 0o700); err != nil {
			a.failLocked("create audit log directory", err)
			return
		}
		f, err := os.OpenFile(a.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			a.failLocked("open audit log", err)
			return
		}
		// The mode given to OpenFile applies only to a new file; a log made
		// by an older version or by hand may be readable by others, and it
		// holds what users asked for. Only the owner keeps access.
		if fi, err := f.Stat(); err == nil && fi.Mode().Perm()&0o077 != 0 {
			if err := f.Chmod(fi.Mode().Perm() &^ 0o077); err != nil {
				a.failLocked("restrict the audit log's mode", err)
			}
		}
		a.f = f
	}
	// One Write per line: with O_APPEND the line lands whole at the end
	// even if another process appends too.
	if _, err := a.f.Write(b.Bytes()); err != nil {
		a.failLocked("write audit log", err)
	}
}

func (a *Audit) fail(what string, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.failLocked(what, err)
}

// failLocked logs the first failure only: a full disk would otherwise
// print a warning for every tool call.
func (a *Audit) failLocked(what string, err error) {
	if a.warned {
		return
	}
	a.warned = true
	a.logger.Warn("audit log failed; events are not recorded until it works again",
		"what", what, "path", a.path, "err", err)
}

// Close closes the file. Recording after Close opens it again.
func (a *Audit) Close() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	a.f = nil
	return err
}
