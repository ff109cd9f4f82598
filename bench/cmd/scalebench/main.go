// Command scalebench drives createTicket calls at replicas of `agentapp
// serve --http --stateless` sharing one PostgreSQL database, optionally
// SIGKILLs one replica part-way, and then checks the database: every
// acknowledged ticket is stored exactly once, no id is duplicated, every
// stored ticket belongs to a call that was made and has its idempotency
// row (no half-written call). bench/scale.sh starts the replicas and runs
// it; it prints one JSON line of figures on stdout, and a failed check
// makes it exit 1.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentapp/agentapp/mcpserver"
	"github.com/agentapp/agentapp/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// result is the JSON line scalebench prints.
type result struct {
	Replicas    int      `json:"replicas"`
	Clients     int      `json:"clients"`
	Calls       int      `json:"calls"`
	Acked       int      `json:"acked"`
	Failed      int      `json:"failed"`
	Errors      int64    `json:"errors"`
	Retries     int64    `json:"retries"`
	Reconnects  int64    `json:"reconnects"`
	Killed      bool     `json:"killed"`
	Seconds     float64  `json:"seconds"`
	CallsPerSec float64  `json:"callsPerSec"`
	Stored      int      `json:"stored"`
	Problems    []string `json:"problems"`
}

func main() {
	endpoints := flag.String("endpoints", "", "comma-separated MCP endpoints of the replicas")
	database := flag.String("database", "", "the replicas' PostgreSQL URL, for the checks")
	clients := flag.Int("clients", 50, "concurrent clients")
	calls := flag.Int("calls", 10000, "createTicket calls in all")
	killPID := flag.Int("kill", 0, "PID of a replica to SIGKILL part-way (0: none)")
	killAt := flag.Float64("kill-at", 0.4, "fraction of the calls acknowledged when -kill fires")
	attempts := flag.Int("attempts", 8, "tries per call before it counts as failed")
	flag.Parse()
	eps := strings.Split(*endpoints, ",")
	if *endpoints == "" || *database == "" || *clients < 1 || *calls < 1 {
		fmt.Fprintln(os.Stderr, "scalebench: -endpoints and -database are required (see bench/scale.sh)")
		os.Exit(2)
	}
	res, err := run(eps, *database, *clients, *calls, *killPID, *killAt, *attempts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "scalebench:", err)
		os.Exit(1)
	}
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
	if len(res.Problems) > 0 {
		for _, p := range res.Problems {
			fmt.Fprintln(os.Stderr, "scalebench: check failed:", p)
		}
		os.Exit(1)
	}
}

// call is one createTicket call: its arguments are unique, so the checks
// can tell which call a stored ticket belongs to.
type call struct {
	client, n int
	ticket    string // the acknowledged ticket id, "" if none
}

func (c *call) subject() string { return fmt.Sprintf("scale c%03d n%05d", c.client, c.n) }

func run(eps []string, database string, clients, total, killPID int, killAt float64, attempts int) (*result, error) {
	res := &result{Replicas: len(eps), Clients: clients, Calls: total, Problems: []string{}}
	all := make([]*call, total)
	for i := range all {
		all[i] = &call{client: i % clients, n: i / clients}
	}
	var acked atomic.Int64
	var killOnce sync.Once
	kill := func() {
		if killPID > 0 && float64(acked.Load()) >= killAt*float64(total) {
			killOnce.Do(func() {
				// os.Kill is SIGKILL: the replica gets no chance to finish
				// its calls or close its connections.
				if p, err := os.FindProcess(killPID); err == nil && p.Signal(os.Kill) == nil {
					res.Killed = true
				}
			})
		}
	}
	var wg sync.WaitGroup
	start := time.Now()
	for c := range clients {
		wg.Go(func() {
			cl := &client{eps: eps, next: c % len(eps), res: res, id: c}
			defer cl.close()
			for i := c; i < total; i += clients {
				kill()
				if id := cl.createTicket(all[i], attempts); id != "" {
					all[i].ticket = id
					acked.Add(1)
				}
			}
		})
	}
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	for _, c := range all {
		if c.ticket != "" {
			res.Acked++
		} else {
			res.Failed++
		}
	}
	res.CallsPerSec = float64(res.Acked) / res.Seconds
	return res, verify(database, all, res)
}

// httpClient keeps a connection per client to each replica; the default
// client keeps only two idle per host, and 50 clients would reconnect on
// nearly every call.
var httpClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}}

// client is one simulated MCP client: a session with one replica, moved to
// the next replica when a call fails.
type client struct {
	id   int
	eps  []string
	next int
	cs   *mcp.ClientSession
	res  *result
}

func (c *client) close() {
	if c.cs != nil {
		c.cs.Close()
	}
}

// createTicket makes the call, retrying on another replica after an error,
// with the same arguments and conversation, so that a retry of a call that
// was committed but not acknowledged returns the same ticket.
func (c *client) createTicket(k *call, attempts int) string {
	for try := range attempts {
		if try > 0 {
			atomic.AddInt64(&c.res.Retries, 1)
			time.Sleep(time.Duration(try) * 50 * time.Millisecond)
		}
		id, err := c.try(k)
		if err == nil {
			return id
		}
		atomic.AddInt64(&c.res.Errors, 1)
		c.close()
		c.cs = nil
		c.next = (c.next + 1) % len(c.eps)
	}
	return ""
}

func (c *client) try(k *call) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if c.cs == nil {
		cl := mcp.NewClient(&mcp.Implementation{Name: "scalebench", Version: "1"}, &mcp.ClientOptions{Logger: slog.New(slog.DiscardHandler)})
		cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint: c.eps[c.next], HTTPClient: httpClient, MaxRetries: -1,
			// The replicas are stateless: there is no stream to open.
			DisableStandaloneSSE: true,
		}, nil)
		if err != nil {
			return "", err
		}
		c.cs = cs
		atomic.AddInt64(&c.res.Reconnects, 1)
	}
	r, err := c.cs.CallTool(ctx, &mcp.CallToolParams{
		Meta:      mcp.Meta{mcpserver.MetaSession: fmt.Sprintf("scalebench-client-%d", c.id)},
		Name:      "createTicket",
		Arguments: map[string]string{"subject": k.subject(), "description": "scale test: replicas sharing PostgreSQL"},
	})
	if err != nil {
		return "", err
	}
	if r.IsError {
		msg := ""
		if len(r.Content) > 0 {
			if t, ok := r.Content[0].(*mcp.TextContent); ok {
				msg = t.Text
			}
		}
		return "", errors.New(msg)
	}
	var tk struct {
		TicketID string `json:"ticketId"`
		Subject  string `json:"subject"`
	}
	b, _ := json.Marshal(r.StructuredContent)
	if err := json.Unmarshal(b, &tk); err != nil || tk.TicketID == "" || tk.Subject != k.subject() {
		return "", fmt.Errorf("unexpected result %s", b)
	}
	return tk.TicketID, nil
}

// verify checks the database against the calls and fills res.Stored and
// res.Problems.
func verify(database string, all []*call, res *result) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.OpenURL(ctx, database, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	rows, err := st.DB.QueryContext(ctx, `SELECT t.id, t.subject, (SELECT COUNT(*) FROM support_idempotency i WHERE i.ticket_id = t.id)
		FROM support_tickets t WHERE t.subject LIKE 'scale c%'`)
	if err != nil {
		return err
	}
	defer rows.Close()
	bySubject := map[string][]string{}
	ids := map[string]int{}
	noKey := 0
	for rows.Next() {
		var id, subject string
		var keys int
		if err := rows.Scan(&id, &subject, &keys); err != nil {
			return err
		}
		res.Stored++
		bySubject[subject] = append(bySubject[subject], id)
		ids[id]++
		if keys != 1 {
			noKey++
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	problem := func(format string, args ...any) { res.Problems = append(res.Problems, fmt.Sprintf(format, args...)) }
	for id, n := range ids {
		if n > 1 {
			problem("ticket id %s stored %d times", id, n)
		}
	}
	if noKey > 0 {
		problem("%d tickets without exactly one idempotency row (half-written calls)", noKey)
	}
	made := map[string]bool{}
	for _, c := range all {
		s := c.subject()
		made[s] = true
		got := bySubject[s]
		switch {
		case len(got) > 1:
			problem("call %s stored %d tickets %v (a retry was not idempotent)", s, len(got), got)
		case c.ticket != "" && len(got) == 0:
			problem("acknowledged ticket %s of call %s is not in the database", c.ticket, s)
		case c.ticket != "" && got[0] != c.ticket:
			problem("call %s was acknowledged with %s but the database holds %s", s, c.ticket, got[0])
		}
	}
	for s := range bySubject {
		if !made[s] {
			problem("the database holds a ticket %q that no call made", s)
		}
	}
	var dupSeq int
	if err := st.DB.QueryRowContext(ctx, `SELECT COUNT(*) - COUNT(DISTINCT seq) FROM support_tickets`).Scan(&dupSeq); err != nil {
		return err
	}
	if dupSeq != 0 {
		problem("%d ticket numbers used twice", dupSeq)
	}
	return nil
}
