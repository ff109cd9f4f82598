// Command handofflat measures the hand-off's latencies against running
// `agentapp web` servers (issue 41): "转人工" to the operators' stream, a
// takeover to the customer's stream, operator messages to the customer's
// stream (p50/p99 over -n), a customer message while held to the
// operators' stream, and checks that after the hand-back the assistant
// answers and the transcript keeps the operator's messages. The customer
// talks to -base and the operator to -operator-base (another replica over
// the same PostgreSQL, or the same server).
//
//	go -C bench run ./cmd/handofflat -base http://127.0.0.1:8080
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"
)

type event struct {
	Kind     string `json:"kind"`
	Session  string `json:"session"`
	State    string `json:"state"`
	Operator string `json:"operator"`
	Content  string `json:"content"`
	at       time.Time
}

// follow reads a standing stream's events into a channel, each stamped
// when it was read.
func follow(url string) (<-chan event, func(), error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	ch := make(chan event, 1024)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var ev event
				if json.Unmarshal([]byte(data), &ev) == nil {
					ev.at = time.Now()
					ch <- ev
				}
			}
		}
	}()
	return ch, func() { resp.Body.Close() }, nil
}

// await returns the first event that match accepts, within 10 s.
func await(ch <-chan event, match func(event) bool) (event, error) {
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return event{}, fmt.Errorf("the stream ended")
			}
			if match(ev) {
				return ev, nil
			}
		case <-timeout:
			return event{}, fmt.Errorf("no matching event within 10s")
		}
	}
}

func post(url, body string) (string, error) {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("POST %s: %s %s", url, resp.Status, bytes.TrimSpace(b))
	}
	return string(b), nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func main() {
	base := flag.String("base", "http://127.0.0.1:8080", "the customer's agentapp web")
	opBase := flag.String("operator-base", "", "the operator's agentapp web (default: -base)")
	n := flag.Int("n", 100, "operator messages to time")
	flag.Parse()
	if *opBase == "" {
		*opBase = *base
	}
	if err := run(*base, *opBase, *n); err != nil {
		fmt.Fprintln(os.Stderr, "handofflat:", err)
		os.Exit(1)
	}
}

func run(base, opBase string, n int) error {
	out, err := post(base+"/api/sessions", "")
	if err != nil {
		return err
	}
	var info struct{ ID string }
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		return err
	}
	id := info.ID
	ops, closeOps, err := follow(opBase + "/operator/events")
	if err != nil {
		return err
	}
	defer closeOps()
	cust, closeCust, err := follow(base + "/api/sessions/" + id + "/events")
	if err != nil {
		return err
	}
	defer closeCust()
	msgURL := base + "/api/sessions/" + id + "/messages"
	opURL := opBase + "/operator/sessions/" + id + "/"

	t0 := time.Now()
	if _, err := post(msgURL, `{"content":"转人工"}`); err != nil {
		return err
	}
	ev, err := await(ops, func(e event) bool { return e.Session == id && e.State == "waiting" })
	if err != nil {
		return fmt.Errorf("转人工 on the operators' stream: %w", err)
	}
	fmt.Printf("转人工 (whole turn) → operators' stream: %s\n", ms(ev.at.Sub(t0)))

	t0 = time.Now()
	if _, err := post(opURL+"takeover", `{"name":"ana"}`); err != nil {
		return err
	}
	if ev, err = await(cust, func(e event) bool { return e.Kind == "operator_joined" }); err != nil {
		return fmt.Errorf("operator_joined: %w", err)
	}
	fmt.Printf("takeover → operator_joined on the customer's stream: %s\n", ms(ev.at.Sub(t0)))

	lat := make([]time.Duration, 0, n)
	for i := range n {
		content := fmt.Sprintf("operator message %d", i)
		t0 = time.Now()
		if _, err := post(opURL+"messages", fmt.Sprintf(`{"content":%q,"name":"ana"}`, content)); err != nil {
			return err
		}
		if ev, err = await(cust, func(e event) bool { return e.Kind == "operator_message" && e.Content == content }); err != nil {
			return fmt.Errorf("operator message %d: %w", i, err)
		}
		lat = append(lat, ev.at.Sub(t0))
	}
	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	fmt.Printf("operator message → operator_message, %d messages: p50 %s, p99 %s, max %s\n", n, ms(pct(0.5)), ms(pct(0.99)), ms(lat[len(lat)-1]))

	t0 = time.Now()
	body, err := post(msgURL, `{"content":"还在吗？"}`)
	if err != nil {
		return err
	}
	if !strings.Contains(body, "event: queued") || strings.Contains(body, "event: token") {
		return fmt.Errorf("a message while held was answered by the assistant: %s", body)
	}
	if ev, err = await(ops, func(e event) bool { return e.Kind == "customer_message" && e.Session == id }); err != nil {
		return fmt.Errorf("customer_message: %w", err)
	}
	fmt.Printf("customer message while held → operators' stream: %s (no assistant text)\n", ms(ev.at.Sub(t0)))

	if _, err := post(opURL+"handback", `{"note":"the customer was told A-1024 arrives tomorrow","name":"ana"}`); err != nil {
		return err
	}
	body, err = post(msgURL, `{"content":"订单 A-1024 到哪了？"}`)
	if err != nil {
		return err
	}
	if strings.Contains(body, "event: queued") || !strings.Contains(body, "event: done") {
		return fmt.Errorf("after the hand-back the assistant did not answer: %s", body)
	}
	fmt.Println("after the hand-back the assistant answers: yes")

	resp, err := http.Get(base + "/api/sessions/" + id)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var sess struct {
		Messages []struct{ Role string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&sess); err != nil {
		return err
	}
	kept := 0
	for _, m := range sess.Messages {
		if m.Role == "operator" {
			kept++
		}
	}
	fmt.Printf("the transcript keeps %d of %d operator messages\n", kept, n)
	return nil
}
