//go:build linux

package mcpbench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// WebOptions is a load of concurrent turns on `agentapp web`, which runs
// already (compare.sh starts it with the offline model).
type WebOptions struct {
	Name     string
	BaseURL  string // http://HOST:PORT
	PID      int
	API      string // "chat": POST /api/sessions/{id}/messages; "v1": POST /v1/chat/completions with "stream": true
	Sessions int    // turns at once
	Repeats  int    // how many times the Sessions turns are run and timed
	// Warmup is how many times they are run first, untimed but for the
	// first run's first events (WebResult.ColdFirstEventP99MS): a fresh
	// server's first burst pays for its lazy set-up (the input guard's
	// patterns, the offline model's tables, the heap's first pages) as
	// the other rows' warm-up calls do.
	Warmup  int
	Message string // the user's message
	Expect  string // every turn's stream must contain it
	Ready   time.Duration
	Log     func(format string, args ...any)
}

// MaxWebSessions caps the turns of one load at once.
const MaxWebSessions = 4000

// MeasureWeb runs o.Sessions turns at once, o.Warmup times untimed and then
// o.Repeats times timed, each from a session of its own, and times each
// turn's first event and first text from the moment its request is sent.
//
// Every session connects from an address of its own in 127.0.0.0/8 (all of
// it is loopback on Linux): the server limits requests per client address,
// and 200 sessions from one address are one client far over its limit,
// where 200 browsers would each be well inside it.
func MeasureWeb(ctx context.Context, o WebOptions) (*WebResult, error) {
	if o.Sessions < 1 || o.Warmup < 0 || o.Sessions*(max(o.Repeats, 1)+o.Warmup) > MaxWebSessions {
		return nil, fmt.Errorf("sessions × (repeats + warm-up) must be 1 to %d, and warm-up ≥ 0", MaxWebSessions)
	}
	if o.API != "chat" && o.API != "v1" {
		return nil, fmt.Errorf("api must be chat or v1, not %q", o.API)
	}
	if o.Repeats < 1 {
		o.Repeats = 1
	}
	if o.Ready <= 0 {
		o.Ready = 30 * time.Second
	}
	base := strings.TrimRight(o.BaseURL, "/")
	probe := &http.Client{Timeout: 5 * time.Second}
	if err := waitHTTP(ctx, probe, base+"/healthz", o.Ready); err != nil {
		return nil, err
	}
	r := &WebResult{Name: o.Name, API: o.API, Sessions: o.Sessions, Repeats: o.Repeats, Warmup: o.Warmup, LoadBefore: LoadAvg()}
	var err error
	if r.RSSBeforeMiB, err = rssOf(o.PID); err != nil {
		return nil, err
	}
	var first, text []time.Duration
	var elapsed time.Duration
	var peak atomic.Uint64 // MiB × 1024 (KiB), the highest VmRSS seen
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			if v, err := rssOf(o.PID); err == nil && uint64(v*1024) > peak.Load() {
				peak.Store(uint64(v * 1024))
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	stopSampler := sync.OnceFunc(func() { close(stop); sampler.Wait() })
	defer stopSampler()
	var cpu time.Duration
	for rep := range o.Warmup + o.Repeats {
		warm := rep < o.Warmup
		clients := make([]*http.Client, o.Sessions)
		ids := make([]string, o.Sessions)
		for i := range clients {
			clients[i] = addressClient(rep*o.Sessions + i)
		}
		if o.API == "chat" {
			if err := parallel(o.Sessions, func(i int) (err error) {
				ids[i], err = createWebSession(ctx, clients[i], base)
				return err
			}); err != nil {
				return nil, err
			}
		}
		fs, ts := make([]time.Duration, o.Sessions), make([]time.Duration, o.Sessions)
		cpu0, err := CPUOf(o.PID)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		err = parallel(o.Sessions, func(i int) (err error) {
			fs[i], ts[i], err = webTurn(ctx, clients[i], base, o, ids[i])
			return err
		})
		if !warm {
			elapsed += time.Since(start)
		}
		cpu1, cerr := CPUOf(o.PID)
		for _, c := range clients {
			c.CloseIdleConnections()
		}
		if err != nil {
			return nil, err
		}
		if cerr != nil {
			return nil, cerr
		}
		if warm {
			if rep == 0 {
				r.ColdFirstEventP99MS = ms(Percentile(fs, 99))
			}
			continue
		}
		cpu += cpu1 - cpu0
		first, text = append(first, fs...), append(text, ts...)
	}
	r.FirstEventP50MS, r.FirstEventP99MS = ms(Percentile(first, 50)), ms(Percentile(first, 99))
	r.FirstTextP50MS, r.FirstTextP99MS = ms(Percentile(text, 50)), ms(Percentile(text, 99))
	r.TurnsPerS = round3(float64(len(first)) / elapsed.Seconds())
	r.CPUPerTurnUS = round3(float64(cpu) / float64(time.Microsecond) / float64(len(first)))
	stopSampler()
	r.RSSPeakMiB = round3(float64(peak.Load()) / 1024)
	r.MemPerStreamKiB = round3(max(0, r.RSSPeakMiB-r.RSSBeforeMiB) * 1024 / float64(o.Sessions))
	return r, nil
}

// addressClient is an HTTP client whose connections come from 127.x.y.z,
// a loopback address of its own for each n (see MeasureWeb).
func addressClient(n int) *http.Client {
	ip := net.IPv4(127, byte(10+n/62500), byte(n/250%250), byte(n%250+1))
	d := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: ip}}
	return &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{DialContext: d.DialContext, DisableCompression: true}}
}

func createWebSession(ctx context.Context, c *http.Client, base string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/sessions", nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("POST /api/sessions: HTTP %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	var info struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &info); err != nil || info.ID == "" {
		return "", fmt.Errorf("POST /api/sessions answered %.200q, with no session id", b)
	}
	return info.ID, nil
}

// maxWebStream bounds one turn's event stream.
const maxWebStream = 4 << 20

// webTurn sends one message and reads its event stream to the end.
func webTurn(ctx context.Context, c *http.Client, base string, o WebOptions, session string) (first, text time.Duration, err error) {
	var url, body string
	var isText func(block string) bool
	msg, _ := json.Marshal(o.Message)
	if o.API == "chat" {
		url, body = base+"/api/sessions/"+session+"/messages", `{"content":`+string(msg)+`}`
		isText = func(b string) bool { return strings.HasPrefix(b, "event: token") }
	} else {
		url, body = base+"/v1/chat/completions", `{"model":"agentapp","stream":true,"messages":[{"role":"user","content":`+string(msg)+`}]}`
		isText = func(b string) bool { return strings.Contains(b, `"content":"`) && !strings.Contains(b, `"content":""`) }
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 500))
		return 0, 0, fmt.Errorf("POST %s: HTTP %s: %s", strings.TrimPrefix(url, base), resp.Status, strings.TrimSpace(string(b)))
	}
	br := bufio.NewReader(io.LimitReader(resp.Body, maxWebStream))
	var all, block strings.Builder
	for {
		line, err := br.ReadString('\n')
		all.WriteString(line)
		if err != nil {
			break
		}
		if line != "\n" {
			block.WriteString(line)
			continue
		}
		if first == 0 {
			first = time.Since(start)
		}
		if text == 0 && isText(block.String()) {
			text = time.Since(start)
		}
		block.Reset()
	}
	if first == 0 || text == 0 {
		return 0, 0, fmt.Errorf("the turn's stream had no events or no text: %.300q", all.String())
	}
	if o.Expect != "" && !strings.Contains(all.String(), o.Expect) && !strings.Contains(all.String(), jsonEscaped(o.Expect)) {
		return 0, 0, errors.New("the turn's answer does not contain " + o.Expect + ": " + tail(all.String(), 300))
	}
	return first, text, nil
}

// jsonEscaped is s as encoding/json writes it inside a string, for
// streams that escape non-ASCII text.
func jsonEscaped(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}
