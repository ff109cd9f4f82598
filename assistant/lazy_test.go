package assistant_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentapp/agentapp/assistant"
	"github.com/agentapp/agentapp/kb"
	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/support"
	"github.com/google/go-cmp/cmp"
)

// openCounting returns an OpenFunc on a fresh database that counts its
// calls, and the store it opens (closed when the test ends).
func openCounting(t *testing.T, calls *atomic.Int32) assistant.OpenFunc {
	dir := t.TempDir()
	return func(ctx context.Context) (*support.Service, *kb.KB, error) {
		calls.Add(1)
		st, err := store.Open(dir)
		if err != nil {
			return nil, nil, err
		}
		t.Cleanup(func() { st.Close() })
		d, err := assistant.OpenDomain(ctx, st, nil, nil)
		if err != nil {
			return nil, nil, err
		}
		return d.Support, d.KB, nil
	}
}

// TestLazyDescribesToolsLikeServerOptions checks that the lazily opened
// server publishes the very descriptions of the opened one (everything but
// Execute), and that describing them opens nothing.
func TestLazyDescribesToolsLikeServerOptions(t *testing.T) {
	var calls atomic.Int32
	open := openCounting(t, &calls)
	lazy := assistant.NewLazy(open).ServerOptions("test")
	if n := calls.Load(); n != 0 {
		t.Fatalf("building the options opened the domain %d times", n)
	}
	svc, k, err := open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	eager := assistant.ServerOptions(svc, k, "test")
	type desc struct {
		Name, Title, Description string
		In, Out                  string
		RO, Idem, Valid          bool
		Destr, Open              *bool
	}
	var got, want []desc
	for _, t := range lazy.Tools {
		got = append(got, desc{t.Name, t.Title, t.Description, string(t.InputSchema), string(t.OutputSchema), t.ReadOnly, t.Idempotent, t.Validate, t.Destructive, t.OpenWorld})
	}
	for _, t := range eager.Tools {
		want = append(want, desc{t.Name, t.Title, t.Description, string(t.InputSchema), string(t.OutputSchema), t.ReadOnly, t.Idempotent, t.Validate, t.Destructive, t.OpenWorld})
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("lazy tool descriptions differ from the opened ones (-want +got):\n%s", d)
	}
	if lazy.Tasks == nil || !cmp.Equal(lazy.Tasks.TaskTools(), eager.Tasks.TaskTools()) || lazy.Docs == nil ||
		lazy.Instructions != eager.Instructions || !cmp.Equal(lazy.ToolMeta, eager.ToolMeta) {
		t.Errorf("lazy options differ: %+v, want %+v", lazy, eager)
	}
}

// TestLazyOpensOnceOnFirstUse checks that concurrent first requests (tool
// calls, resources/list) open the domain once and get the opened domain's
// answers.
func TestLazyOpensOnceOnFirstUse(t *testing.T) {
	var calls atomic.Int32
	opts := assistant.NewLazy(openCounting(t, &calls)).ServerOptions("test")
	var order *orderStatus
	for _, tl := range opts.Tools {
		if tl.Name == "getOrderStatus" {
			order = &orderStatus{tl.Execute}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 8 {
		wg.Go(func() {
			out, err := order.run(`{"orderId":"A-2048"}`)
			if err == nil && !strings.Contains(out, "仓库打包中") {
				err = errors.New("getOrderStatus answered " + out)
			}
			errs <- err
		})
		wg.Go(func() {
			docs, err := opts.Docs.ListDocs(t.Context())
			if err == nil && len(docs) == 0 {
				err = errors.New("resources/list of the seeded knowledge base is empty")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("the domain was opened %d times, want once", n)
	}
}

type orderStatus struct {
	exec func(context.Context, json.RawMessage) (any, error)
}

func (o *orderStatus) run(args string) (string, error) {
	out, err := o.exec(context.Background(), json.RawMessage(args))
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(out)
	return string(b), err
}

// TestLazyFailedOpening checks that an opening that fails is tried once
// and its error, saying what could not be opened and why, reaches every
// request that needs the data.
func TestLazyFailedOpening(t *testing.T) {
	var calls atomic.Int32
	cause := errors.New("disk on fire")
	opts := assistant.NewLazy(func(context.Context) (*support.Service, *kb.KB, error) {
		calls.Add(1)
		return nil, nil, cause
	}).ServerOptions("test")
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, cause) || !strings.Contains(err.Error(), "the customer-service data could not be opened") {
			t.Errorf("%s: %v, want the opening's error explained", what, err)
		}
	}
	for _, tl := range opts.Tools {
		_, err := tl.Execute(t.Context(), json.RawMessage(`{}`))
		check(tl.Name, err)
	}
	_, err := opts.Docs.ListDocs(t.Context())
	check("ListDocs", err)
	_, _, err = opts.Docs.ReadDoc(t.Context(), "x")
	check("ReadDoc", err)
	_, err = opts.Tasks.Tasks(t.Context(), "caller")
	check("Tasks", err)
	if n := calls.Load(); n != 1 {
		t.Errorf("the failing opening ran %d times, want once", n)
	}
}

// TestLazyStop checks that Stop before any request keeps the domain
// unopened (nothing to close) and later requests are refused, and that
// Stop after an opening reports it.
func TestLazyStop(t *testing.T) {
	var calls atomic.Int32
	l := assistant.NewLazy(openCounting(t, &calls))
	opts := l.ServerOptions("test")
	if l.Stop() {
		t.Error("Stop before any request reported an opened domain")
	}
	if _, err := opts.Docs.ListDocs(t.Context()); err == nil || !strings.Contains(err.Error(), "shutting down") {
		t.Errorf("ListDocs after Stop: %v, want a shutting-down error", err)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("the domain was opened %d times after Stop", n)
	}

	l = assistant.NewLazy(openCounting(t, &calls))
	if _, err := l.ServerOptions("test").Docs.ListDocs(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !l.Stop() {
		t.Error("Stop after an opening reported none")
	}
}
