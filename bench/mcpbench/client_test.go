//go:build linux

package mcpbench

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

func TestMeasureBridge(t *testing.T) {
	ctx := context.Background()
	o := ClientOptions{Server: "fake", Command: []string{os.Args[0]}, Env: map[string]string{"MCPBENCH_FAKE": "ok"},
		Tool: "t", Args: json.RawMessage(`{}`), Calls: 100, Warmup: 5}
	r, err := MeasureBridge(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if r.Client != OurClient || r.Server != "fake" || r.Calls != 100 || r.P50US <= 0 || r.P99US < r.P50US || r.MeanUS <= 0 || r.ConnectMS <= 0 {
		t.Errorf("result %+v", r)
	}
	// A wrong answer is not a round trip: the run fails, naming the call.
	o.Env["MCPBENCH_FAKE_BAD"] = "iserror@50"
	if _, err := MeasureBridge(ctx, o); err == nil || !strings.Contains(err.Error(), "call 45") {
		t.Errorf("isError on the 50th call (45th measured): %v", err)
	}
	o.Env["MCPBENCH_FAKE_BAD"] = ""
	o.Tool = "nope"
	if _, err := MeasureBridge(ctx, o); err == nil || !strings.Contains(err.Error(), `no tool "nope" (it has t)`) {
		t.Errorf("unknown tool: %v", err)
	}
}

func TestMeasureSpawn(t *testing.T) {
	ctx := context.Background()
	r, err := MeasureSpawn(ctx, SpawnOptions{Name: "echo", Command: []string{"sh", "-c", "echo the order has 已发货"}, Expect: "已发货", Runs: 5})
	if err != nil {
		t.Fatal(err)
	}
	if r.Runs != 5 || len(r.AllMS) != 5 || r.MedianMS <= 0 || r.MedianMS != Series(r.AllMS).Median() {
		t.Errorf("result %+v", r)
	}
	for _, c := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"sh", "-c", "echo something else"}, `does not contain "已发货"`},
		{[]string{"sh", "-c", "echo 已发货; exit 3"}, "exit status 3"},
	} {
		if _, err := MeasureSpawn(ctx, SpawnOptions{Command: c.cmd, Expect: "已发货", Runs: 2}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.cmd, err, c.want)
		}
	}
	// A command that does not answer in time is killed with its group,
	// and the run fails within the bound.
	start := time.Now()
	_, err = MeasureSpawn(ctx, SpawnOptions{Command: []string{"sh", "-c", "sleep 30 & wait"}, Expect: "x", Runs: 1, Timeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "no answer within") || time.Since(start) > 5*time.Second {
		t.Errorf("hang: %v after %v", err, time.Since(start))
	}
}
