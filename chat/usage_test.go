package chat

import (
	"bufio"
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/budget"
	"github.com/agentapp/agentapp/host"
)

// TestUsageJSONOutputs: -p with json and stream-json carries the turn's
// usage; the rule model reports none, so it is estimated, marked, and not
// zero.
func TestUsageJSONOutputs(t *testing.T) {
	for _, format := range []OutputFormat{OutputJSON, OutputStreamJSON} {
		t.Run(string(format), func(t *testing.T) {
			h := newHarness(t, &ruleModel{}, openTestStore(t), "")
			c, err := h.open(t)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.AskAs(context.Background(), "where is it? call:getOrderStatus", format); err != nil {
				t.Fatalf("%v\n%s", err, h.err.String())
			}
			text := h.out.String()
			var u *host.Usage
			if format == OutputJSON {
				var a Answer
				if err := json.Unmarshal([]byte(text), &a); err != nil {
					t.Fatalf("%v\n%s", err, text)
				}
				u = a.Usage
			} else {
				sc := bufio.NewScanner(strings.NewReader(text))
				for sc.Scan() {
					var ev Event
					if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
						t.Fatal(err)
					}
					if ev.Type == "done" {
						u = ev.Usage
					}
				}
			}
			if u == nil || !u.Estimated || u.InputTokens <= 0 || u.OutputTokens <= 0 || len(u.Calls) != 2 {
				t.Fatalf("usage %+v in\n%s; want two estimated calls", u, text)
			}
			if !regexp.MustCompile(`"estimated":\s*true`).MatchString(text) {
				t.Errorf("the output does not mark the usage estimated:\n%s", text)
			}
		})
	}
}

// TestUsageAndCompactCommands: /usage shows the last answer's and the
// session's tokens and the window; /compact folds the older turns (the
// next request carries the summary and the latest turn) and /usage then
// counts the fold.
func TestUsageAndCompactCommands(t *testing.T) {
	m := &ruleModel{}
	h := newHarness(t, m, openTestStore(t), "/usage\nfirst A-1001\nsecond A-1002\nthird A-1003\n/usage\n/compact\nfourth\n/usage\n/compact\n")
	h.host.Context = host.ContextOptions{Window: 50_000, Summarizer: budget.Extractive{}}
	h.run(t)
	out := h.out.String()
	for _, want := range []string{
		"No answer yet in this chat.",
		"Context window: 50000 tokens (rule-model).",
		"(estimated: the model reports no usage)",
		"Folded 4 messages into a summary of about",
		"the model keeps the latest turn (2 messages) verbatim",
		"Older turns were folded 1 time;",
		"Folded 2 messages into a summary",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The session's input grows with each answer.
	re := regexp.MustCompile(`Session \S+: (\d+) input \+ (\d+) output tokens in (\d+) model calls`)
	all := re.FindAllStringSubmatch(out, -1)
	if len(all) != 3 {
		t.Fatalf("%d session lines in\n%s", len(all), out)
	}
	if all[0][3] != "0" || all[1][3] != "3" || all[2][3] != "4" {
		t.Errorf("model calls %s, %s, %s; want 0, 3, 4", all[0][3], all[1][3], all[2][3])
	}
	if a, _ := strconv.Atoi(all[1][1]); a <= 0 {
		t.Errorf("session input %d after three answers", a)
	}
	last := m.requests[len(m.requests)-1]
	if len(last.Messages) != 3 || !strings.Contains(last.System, "- user: first A-1001") {
		t.Errorf("after /compact the model saw %d messages and system %q", len(last.Messages), last.System)
	}
}

// TestFoldIsShown: when older turns are folded to fit a small window, the
// REPL says so on stderr (nothing leaves the model's view silently).
func TestFoldIsShown(t *testing.T) {
	var in strings.Builder
	for i := range 30 {
		in.WriteString("question " + strconv.Itoa(i) + " about order A-" + strconv.Itoa(1000+i) + ", " + strings.Repeat("with some more words ", 8) + "\n")
	}
	h := newHarness(t, &ruleModel{}, openTestStore(t), in.String())
	h.host.Context = host.ContextOptions{Window: 1500, Summarizer: budget.Extractive{}}
	h.run(t)
	if !regexp.MustCompile(`\(\d+ older messages folded into a summary of about \d+ tokens to fit the context window of 1500; /usage shows more\)`).MatchString(h.err.String()) {
		t.Errorf("no fold line on stderr:\n%s", h.err.String())
	}
}
