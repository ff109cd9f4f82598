package host

import (
	"testing"

	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/store/storetest"
)

func openTestStore(t *testing.T) *store.Store {
	t.Helper()
	return storetest.Open(t)
}
