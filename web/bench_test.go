package web

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/offline"
	"github.com/agentapp/agentapp/model/scripted"
)

// benchSessions is how many sessions send a message at once.
const benchSessions = 200

func benchEnv(b *testing.B, m model.Model, edit func(*envOptions)) (*testEnv, *http.Client) {
	e := newEnv(b, m, func(o *envOptions) {
		o.MaxStreams = benchSessions + 8
		if edit != nil {
			edit(o)
		}
	})
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 2 * benchSessions, MaxIdleConnsPerHost: 2 * benchSessions}}
	b.Cleanup(client.CloseIdleConnections)
	return e, client
}

// timing is when one turn's first event and first text arrived.
type timing struct{ firstEvent, firstText time.Duration }

// readTurn reads an event stream to its end, timing it from start; text
// marks the events that carry answer text.
func readTurn(resp *http.Response, start time.Time, isText func(block string) bool) (timing, error) {
	defer resp.Body.Close()
	var tm timing
	r := bufio.NewReader(resp.Body)
	var block strings.Builder
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if tm.firstText == 0 {
				tm.firstText = time.Since(start)
			}
			return tm, nil
		}
		if line != "\n" {
			block.WriteString(line)
			continue
		}
		if tm.firstEvent == 0 {
			tm.firstEvent = time.Since(start)
		}
		if tm.firstText == 0 && isText(block.String()) {
			tm.firstText = time.Since(start)
		}
		block.Reset()
	}
}

// runConcurrent runs benchSessions turns at once per iteration and
// reports first-event and first-text percentiles and turns per second.
func runConcurrent(b *testing.B, prepare func() []func() (timing, error)) {
	var all []timing
	var elapsed time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		turns := prepare()
		b.StartTimer()
		start := time.Now()
		times := make([]timing, len(turns))
		errs := make([]error, len(turns))
		var wg sync.WaitGroup
		for i, turn := range turns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				times[i], errs[i] = turn()
			}()
		}
		wg.Wait()
		elapsed += time.Since(start)
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		all = append(all, times...)
	}
	b.StopTimer()
	first := make([]time.Duration, len(all))
	text := make([]time.Duration, len(all))
	for i, tm := range all {
		first[i], text[i] = tm.firstEvent, tm.firstText
	}
	b.ReportMetric(pct(first, 50), "first-event-p50-ms")
	b.ReportMetric(pct(first, 99), "first-event-p99-ms")
	b.ReportMetric(pct(text, 50), "first-text-p50-ms")
	b.ReportMetric(pct(text, 99), "first-text-p99-ms")
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "turns/s")
}

func pct(ds []time.Duration, p int) float64 {
	slices.Sort(ds)
	i := (len(ds)*p + 99) / 100
	return float64(ds[max(0, i-1)]) / float64(time.Millisecond)
}

// BenchmarkConcurrentSessions: 200 sessions of the chat API each send one
// message (an order look-up: a tool call, a database read, the turn
// stored) with the offline model, all at once.
func BenchmarkConcurrentSessions(b *testing.B) {
	e, client := benchEnv(b, offline.New(offlineDemo), nil)
	isText := func(block string) bool { return strings.HasPrefix(block, "event: token") }
	runConcurrent(b, func() []func() (timing, error) {
		turns := make([]func() (timing, error), benchSessions)
		for i := range turns {
			id := e.newSession(b)
			turns[i] = func() (timing, error) {
				start := time.Now()
				resp, err := client.Post(e.url("/api/sessions/"+id+"/messages"), "application/json", strings.NewReader(`{"content":"订单 A-1024 到哪了？"}`))
				if err != nil {
					return timing{}, err
				}
				return readTurn(resp, start, isText)
			}
		}
		return turns
	})
}

// BenchmarkConcurrentCompletions: the same load on /v1/chat/completions,
// streaming.
func BenchmarkConcurrentCompletions(b *testing.B) {
	e, client := benchEnv(b, offline.New(offlineDemo), nil)
	isText := func(block string) bool { return strings.Contains(block, `"content":`) }
	body := `{"model":"agentapp","stream":true,"messages":[{"role":"user","content":"订单 A-1024 到哪了？"}]}`
	runConcurrent(b, func() []func() (timing, error) {
		turns := make([]func() (timing, error), benchSessions)
		for i := range turns {
			turns[i] = func() (timing, error) {
				start := time.Now()
				resp, err := client.Post(e.url("/v1/chat/completions"), "application/json", strings.NewReader(body))
				if err != nil {
					return timing{}, err
				}
				return readTurn(resp, start, isText)
			}
		}
		return turns
	})
}

// BenchmarkOpenStreamMemory holds 200 event streams open (each turn waits
// in a tool) and reports the heap they take, per stream. Client and
// server share the process, so the figure counts both ends of each
// connection.
func BenchmarkOpenStreamMemory(b *testing.B) {
	b.Run("api", func(b *testing.B) {
		benchOpenStreams(b, func(e *testEnv, client *http.Client) func() (*http.Response, error) {
			session := e.newSession(b) // made before the heap is measured
			return func() (*http.Response, error) {
				return client.Post(e.url("/api/sessions/"+session+"/messages"), "application/json", strings.NewReader(`{"content":"等"}`))
			}
		})
	})
	b.Run("openai", func(b *testing.B) {
		benchOpenStreams(b, func(e *testEnv, client *http.Client) func() (*http.Response, error) {
			return func() (*http.Response, error) {
				return client.Post(e.url("/v1/chat/completions"), "application/json", strings.NewReader(`{"stream":true,"messages":[{"role":"user","content":"等"}]}`))
			}
		})
	})
}

// benchOpenStreams opens benchSessions streams made by prepare, waits
// until every turn is inside the hold tool, and reports the heap and the
// goroutines they added.
func benchOpenStreams(b *testing.B, prepare func(*testEnv, *http.Client) func() (*http.Response, error)) {
	for range b.N {
		b.StopTimer()
		release := make(chan struct{})
		var entered sync.WaitGroup
		entered.Add(benchSessions)
		hold := &agent.Tool{Name: "hold", Description: "waits", Execute: func(ctx context.Context, _ json.RawMessage) (any, error) {
			entered.Done()
			select {
			case <-release:
			case <-ctx.Done():
			}
			return "ok", nil
		}}
		e, client := benchEnv(b, holdModel{}, func(o *envOptions) { o.Local = []*agent.Tool{hold} })
		starts := make([]func() (*http.Response, error), benchSessions)
		for i := range starts {
			starts[i] = prepare(e, client)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		goroutines := runtime.NumGoroutine()
		b.StartTimer()
		var wg sync.WaitGroup
		for _, start := range starts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := start()
				if err != nil {
					b.Error(err)
					return
				}
				readTurn(resp, time.Now(), func(string) bool { return false })
			}()
		}
		entered.Wait()
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/benchSessions, "heap-B/stream")
		b.ReportMetric(float64(runtime.NumGoroutine()-goroutines)/benchSessions, "goroutines/stream")
		close(release)
		wg.Wait()
	}
}

// holdModel calls hold for each new message and answers once it returned,
// in every session at once (a scripted model replays one list for all).
type holdModel struct{}

func (holdModel) Name() string { return "hold" }
func (h holdModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	return h.Stream(ctx, req, nil)
}
func (holdModel) Stream(ctx context.Context, req *model.Request, onText func(string)) (*model.Response, error) {
	if last := req.Messages[len(req.Messages)-1]; last.Role == model.RoleTool {
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "done"}}, nil
	}
	return &model.Response{Message: model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{scripted.Call("h", "hold", nil)}}}, nil
}
