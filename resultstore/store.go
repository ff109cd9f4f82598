// Package resultstore keeps tool results too large for the model's context:
// the model gets the head of such a result and a note saying it was cut,
// how large the whole is and how to read on; the whole is kept in a Store,
// per session, and the readToolResult tool pages through it.
//
// Cutting is never silent: the note is part of what the model sees, and
// Cut returns what the host shows the user. Storage is bounded in bytes,
// count and age, because a session that calls a chatty tool all day must
// not grow without end.
package resultstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Result is one stored tool result.
type Result struct {
	// ID is the handle the model reads it by; Put assigns it.
	ID string
	// Session is the conversation it belongs to; another session cannot
	// read it.
	Session string
	// Server and Tool say where it came from ("" server for a local tool).
	Server, Tool string
	// Text is the whole result as the tool returned it.
	Text string
	// Created is when it was stored.
	Created time.Time
}

// Store keeps whole results. The host's session store may implement it to
// keep results with the session; Memory is the in-process one.
type Store interface {
	// Put stores r and returns its id.
	Put(ctx context.Context, r Result) (string, error)
	// Get returns the result id of session, or an error wrapping
	// ErrNotFound.
	Get(ctx context.Context, session, id string) (Result, error)
	// Prune drops what is past its age or over the caps.
	Prune(ctx context.Context) error
}

// ErrNotFound is wrapped by Get's error for an id the store does not have
// (never stored, in another session, or dropped by age or size).
var ErrNotFound = errors.New("no stored result with this id")

// ErrTooLarge is wrapped by Put's error for a result larger than a
// session's whole allowance.
var ErrTooLarge = errors.New("result larger than the store keeps")

// MemoryOptions bound a Memory store. A nil *MemoryOptions, or a zero
// field, means the default.
type MemoryOptions struct {
	// MaxSessionBytes bounds the text kept per session (default 32 MiB);
	// the oldest results go first.
	MaxSessionBytes int
	// MaxSessionResults bounds the results kept per session (default 100).
	MaxSessionResults int
	// MaxSessions bounds the sessions with results (default 256); the
	// session used least recently goes first.
	MaxSessions int
	// MaxAge drops results older than this (default 24 hours).
	MaxAge time.Duration
	// Now is the clock (default time.Now); tests set it.
	Now func() time.Time
}

// Memory is a Store in process memory. It is safe for concurrent use.
type Memory struct {
	opts     MemoryOptions
	mu       sync.Mutex
	sessions map[string]*session
}

type session struct {
	results []Result // oldest first
	bytes   int
	used    time.Time
}

// NewMemory returns an empty in-memory store.
func NewMemory(opts *MemoryOptions) *Memory {
	var o MemoryOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxSessionBytes <= 0 {
		o.MaxSessionBytes = 32 << 20
	}
	if o.MaxSessionResults <= 0 {
		o.MaxSessionResults = 100
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = 256
	}
	if o.MaxAge <= 0 {
		o.MaxAge = 24 * time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Memory{opts: o, sessions: map[string]*session{}}
}

// newID returns a fresh handle: short enough for the model to copy, random
// so that handles of different sessions never collide or can be guessed.
func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return "tr_" + hex.EncodeToString(b[:])
}

// Put implements Store. A result larger than MaxSessionBytes is refused
// with ErrTooLarge rather than emptying the session for it.
func (m *Memory) Put(_ context.Context, r Result) (string, error) {
	if len(r.Text) > m.opts.MaxSessionBytes {
		return "", fmt.Errorf("%w: %d bytes, the limit per session is %d", ErrTooLarge, len(r.Text), m.opts.MaxSessionBytes)
	}
	now := m.opts.Now()
	r.ID = newID()
	r.Created = now
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[r.Session]
	if s == nil {
		s = &session{}
		m.sessions[r.Session] = s
	}
	s.used = now
	s.results = append(s.results, r)
	s.bytes += len(r.Text)
	m.pruneLocked(now)
	return r.ID, nil
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, sess, id string) (Result, error) {
	now := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.sessions[sess]; s != nil {
		for _, r := range s.results {
			if r.ID == id && now.Sub(r.Created) <= m.opts.MaxAge {
				s.used = now
				return r, nil
			}
		}
	}
	return Result{}, fmt.Errorf("%w: %q", ErrNotFound, id)
}

// Prune implements Store.
func (m *Memory) Prune(context.Context) error {
	now := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pruneLocked(now)
	return nil
}

// DropSession forgets a session's results, for when the session ends.
func (m *Memory) DropSession(sess string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions, sess)
}

// Stats returns the number of sessions, results and bytes kept.
func (m *Memory) Stats() (sessions, results, bytes int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range m.sessions {
		sessions++
		results += len(s.results)
		bytes += s.bytes
	}
	return
}

func (m *Memory) pruneLocked(now time.Time) {
	for k, s := range m.sessions {
		drop := 0
		for drop < len(s.results) && (now.Sub(s.results[drop].Created) > m.opts.MaxAge ||
			s.bytes > m.opts.MaxSessionBytes || len(s.results)-drop > m.opts.MaxSessionResults) {
			s.bytes -= len(s.results[drop].Text)
			drop++
		}
		if drop > 0 {
			s.results = append([]Result(nil), s.results[drop:]...)
		}
		if len(s.results) == 0 {
			delete(m.sessions, k)
		}
	}
	for len(m.sessions) > m.opts.MaxSessions {
		var oldest string
		var at time.Time
		first := true
		for k, s := range m.sessions {
			if first || s.used.Before(at) {
				oldest, at, first = k, s.used, false
			}
		}
		delete(m.sessions, oldest)
	}
}

// HasResults reports whether session has a stored result within MaxAge.
func (m *Memory) HasResults(_ context.Context, sess string) (bool, error) {
	now := m.opts.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.sessions[sess]; s != nil {
		for _, r := range s.results {
			if now.Sub(r.Created) <= m.opts.MaxAge {
				return true, nil
			}
		}
	}
	return false, nil
}
