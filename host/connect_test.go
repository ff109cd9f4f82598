package host

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/agentapp/agentapp/agent"
)

// closeServer is a connected server stand-in that counts Close.
type closeServer struct {
	name   string
	mu     sync.Mutex
	closed int
}

func (s *closeServer) Name() string         { return s.name }
func (s *closeServer) Tools() []*agent.Tool { return nil }
func (s *closeServer) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed++
	return nil
}

func (s *closeServer) closes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// TestConnectAll: one failure closes the servers that did connect and
// names the one that failed; without one, the servers come in the given
// order.
func TestConnectAll(t *testing.T) {
	ok1 := &closeServer{name: "one"}
	ok2 := &closeServer{name: "three"}
	connect := func(_ context.Context, name string) (Server, error) {
		switch name {
		case "one":
			return ok1, nil
		case "three":
			return ok2, nil
		}
		return nil, errors.New("exec: \"nope\": executable file not found in $PATH")
	}
	names := []string{"one", "two", "three"}
	_, err := connectServers(context.Background(), names, names, connect)
	var ce *ConnectError
	if !errors.As(err, &ce) || ce.Server != "two" || !strings.Contains(err.Error(), `MCP server "two": exec`) {
		t.Errorf("err = %v, want a ConnectError for two", err)
	}
	if ok1.closes() != 1 || ok2.closes() != 1 {
		t.Errorf("the servers that connected were not closed: %d, %d", ok1.closes(), ok2.closes())
	}

	got, err := connectServers(context.Background(), []string{"three", "one"}, []string{"three", "one"}, connect)
	if err != nil || len(got) != 2 || got[0] != ok2 || got[1] != ok1 {
		t.Errorf("ConnectAll = %v, %v; want both, in the given order", got, err)
	}
}
