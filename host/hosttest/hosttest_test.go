package hosttest

import (
	"testing"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/model/scripted"
)

// TestDefaults: a host opened with nothing but a model has a database and
// guards that ask nothing.
func TestDefaults(t *testing.T) {
	o := &host.Options{Model: scripted.New()}
	h := MustOpen(t, o)
	if h.Store() == nil || o.Guards == nil || len(o.Guards.Permissions.Rules) != 1 {
		t.Fatalf("store %v, guards %+v", h.Store(), o.Guards)
	}
}
