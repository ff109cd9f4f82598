// Package hosttest opens the hosts of the front ends' tests as the command
// line opens its own: through host.Open, the one constructor, with the
// options a test gives and defaults for what it leaves out.
package hosttest

import (
	"context"
	"testing"

	"github.com/agentapp/agentapp/guard"
	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/store"
)

// Defaults fills in what a test leaves out of o: a nil Store is a fresh
// database in dir, and nil Guards let every call run without a question
// (a test that sets no guards means none; the default policy would ask
// about the servers' tools that are not read-only).
func Defaults(o *host.Options, dir string) error {
	if o.Store == nil {
		st, err := store.Open(dir)
		if err != nil {
			return err
		}
		o.Store = st
	}
	if o.Guards == nil {
		all, err := guard.ParsePattern("*")
		if err != nil {
			return err
		}
		o.Guards = &guard.Config{Permissions: guard.Permissions{Rules: []guard.Rule{{Pattern: all, Permission: guard.Allow, Source: "the test"}}}}
	}
	return nil
}

// Open opens a host with o (Defaults first) through host.Open; it is
// closed when the test ends, if its front end has not closed it.
func Open(t testing.TB, o *host.Options) (*host.Host, error) {
	t.Helper()
	if err := Defaults(o, t.TempDir()); err != nil {
		return nil, err
	}
	h, err := host.Open(context.Background(), o)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = h.Close() })
	return h, nil
}

// MustOpen is Open that fails the test on an error.
func MustOpen(t testing.TB, o *host.Options) *host.Host {
	t.Helper()
	h, err := Open(t, o)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
