package offline_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentapp/agentapp/agent"
	"github.com/agentapp/agentapp/kb"
	"github.com/agentapp/agentapp/model"
	"github.com/agentapp/agentapp/model/offline"
	"github.com/agentapp/agentapp/store"
)

// demoKB opens a fresh knowledge base holding the embedded demo FAQ, the
// one a new user's first chat searches.
func demoKB(t *testing.T) *kb.KB {
	t.Helper()
	st, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	k, err := kb.Open(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.SeedDemo(context.Background()); err != nil {
		t.Fatal(err)
	}
	return k
}

// demoHit is a search hit as the model saw it.
type demoHit struct {
	No    int    `json:"no"`
	DocID string `json:"docId"`
	Text  string `json:"text"`
}

// section is the heading a hit's chunk starts with, without the "#"s.
func (h demoHit) section() string {
	text := strings.TrimSpace(strings.TrimPrefix(h.Text, kb.FenceOpen))
	first, _, _ := strings.Cut(text, "\n")
	return strings.TrimSpace(strings.TrimLeft(first, "# "))
}

// askDemo asks one question through the real loop with the real search
// tool and returns the search query, the hits and the answer.
func askDemo(t *testing.T, tool *agent.Tool, question string) (string, []demoHit, string) {
	t.Helper()
	res, err := agent.Run(context.Background(), agent.Options{
		Model:    offline.New(offline.DemoTools),
		Messages: []model.Message{{Role: model.RoleUser, Content: question}},
		Tools:    agent.MustToolSet(tool),
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	var query string
	var hits []demoHit
	for _, m := range res.Messages {
		for _, c := range m.ToolCalls {
			var a struct{ Query string }
			if err := json.Unmarshal(c.Arguments, &a); err != nil {
				t.Fatalf("call arguments %s: %v", c.Arguments, err)
			}
			query = a.Query
		}
		if m.Role == model.RoleTool {
			var out struct{ Hits []demoHit }
			if err := json.Unmarshal([]byte(m.Content), &out); err != nil {
				t.Fatalf("search output is not JSON: %v\n%s", err, m.Content)
			}
			hits = out.Hits
		}
	}
	if query == "" {
		t.Fatalf("%q: the model did not search the knowledge base; answer %q", question, res.Text)
	}
	return query, hits, res.Text
}

var citation = regexp.MustCompile(`\[(\d+)\]`)

// cited returns the hits an answer cites, in the order of the citations.
func cited(t *testing.T, answer string, hits []demoHit) []demoHit {
	t.Helper()
	var out []demoHit
	for _, m := range citation.FindAllStringSubmatch(answer, -1) {
		no, _ := strconv.Atoi(m[1])
		found := false
		for _, h := range hits {
			if h.No == no {
				out = append(out, h)
				found = true
			}
		}
		if !found {
			t.Errorf("the answer cites [%d], which is not a hit: %q", no, answer)
		}
	}
	return out
}

const dontKnow = "I don't know: I found nothing about that in the knowledge base."

// TestEnglishQuestionsFindTheChineseFAQ asks the demo FAQ, which is written
// in Chinese, in English: each question must be answered from the right
// document and section, quoted with citations, in an English frame.
func TestEnglishQuestionsFindTheChineseFAQ(t *testing.T) {
	k := demoKB(t)
	tests := []struct {
		question string
		term     string // a Chinese term the query must carry
		doc      string // the document every citation comes from
		section  string // the section of the first citation
		fact     string // a piece of the answer
	}{
		{"How long does a refund take?", "退款", "returns.md-", "退款时效（When the refund arrives）", "3 到 7 个工作日到账"},
		{"What is the hotel allowance for business trips?", "住宿", "travel.md-", "住宿标准（Hotel allowance per night）", "每晚 600 元"},
		{"How do I return an item?", "退货", "returns.md-", "如何申请（How to request a return）", "申请售后"},
		{"How many days of annual leave do I get?", "年假", "leave.md-", "年假天数（Annual leave days）", "每年 5 天"},
		{"How much is the meal allowance?", "伙食", "travel.md-", "伙食补助（Meal allowance）", "100 元"},
		{"What should I do if my laptop is stolen?", "被盗", "it-equipment.md-", "丢失与归还（Lost devices and returning equipment）", "24 小时内"},
		{"Can I return underwear?", "贴身衣物", "returns.md-", "7 天无理由退货（7-day no-reason return）", "贴身衣物"},
		{"How much sick pay do I get?", "病假工资", "leave.md-", "病假（Sick leave and sick pay）", "80%"},
		{"Can I carry over unused vacation days?", "结转", "leave.md-", "年假的申请与结转（Requesting and carrying over annual leave）", "3 月 31 日前"},
		{"Is my laptop under warranty?", "保修", "it-equipment.md-", "故障报修（Repairs）", "保修期内"},
		{"What class can I fly on a business trip?", "飞机", "travel.md-", "交通标准（Transport: train and flight class）", "经济舱"},
		{"How much can I spend on a hotel in Chengdu?", "成都", "travel.md-", "住宿标准（Hotel allowance per night）", "每晚 450 元"},
	}
	for _, tt := range tests {
		t.Run(tt.question, func(t *testing.T) {
			query, hits, answer := askDemo(t, k.SearchTool(), tt.question)
			if !strings.HasPrefix(query, tt.question+" ") || !strings.Contains(query, tt.term) {
				t.Errorf("query %q: want the question as typed, then Chinese terms with %s", query, tt.term)
			}
			if !strings.HasPrefix(answer, "According to the knowledge base (quoted in Chinese): ") {
				t.Errorf("answer %q: want the English frame", answer)
			}
			if !strings.Contains(answer, tt.fact) {
				t.Errorf("answer %q: want it to say %q", answer, tt.fact)
			}
			cs := cited(t, answer, hits)
			if len(cs) == 0 {
				t.Fatalf("answer %q cites nothing", answer)
			}
			if got := cs[0].section(); got != tt.section {
				t.Errorf("first citation is from section %q, want %q\nanswer %q", got, tt.section, answer)
			}
			for _, c := range cs {
				if !strings.HasPrefix(c.DocID, tt.doc) {
					t.Errorf("citation [%d] is from %s, want %s…\nanswer %q", c.No, c.DocID, tt.doc, answer)
				}
			}
		})
	}
}

// TestUnrelatedEnglishQuestionsStillGetIDontKnow keeps the glossary honest:
// a question about something the FAQ does not cover gets "I don't know",
// also when it uses a word the glossary knows (hotel, password, travel,
// insurance, shipping) and the search returns hits for it.
func TestUnrelatedEnglishQuestionsStillGetIDontKnow(t *testing.T) {
	k := demoKB(t)
	for _, q := range []string{
		"What is the capital of France?",
		"Who won the World Cup in 2018?",
		"How do I bake sourdough bread?",
		"What is the exchange rate of the euro?",
		"How long is the Great Wall of China?",
		// Glossary words, but not what the FAQ is about.
		"What is the wifi password?",
		"Can you recommend a good hotel in Paris?",
		"What is the best travel insurance?",
		// The FAQ says when an unshipped order is refunded, not how long
		// shipping takes.
		"What are your shipping times?",
	} {
		t.Run(q, func(t *testing.T) {
			_, _, answer := askDemo(t, k.SearchTool(), q)
			if answer != dontKnow {
				t.Errorf("answer %q, want %q", answer, dontKnow)
			}
		})
	}
}

// TestChineseQuestionsUnchanged checks that Chinese questions are searched
// as typed and still find their sections.
func TestChineseQuestionsUnchanged(t *testing.T) {
	k := demoKB(t)
	tests := []struct{ question, section, fact string }{
		{"出差住宿标准是多少？", "住宿标准（Hotel allowance per night）", "每晚 600 元"},
		{"退款多久到账？", "退款时效（When the refund arrives）", "个工作日到账"},
		{"伙食补助多少", "伙食补助（Meal allowance）", "100 元"},
	}
	for _, tt := range tests {
		t.Run(tt.question, func(t *testing.T) {
			query, hits, answer := askDemo(t, k.MCPSearchTool(), tt.question)
			if query != tt.question {
				t.Errorf("query %q, want the question as typed", query)
			}
			if !strings.HasPrefix(answer, "根据知识库：") || !strings.Contains(answer, tt.fact) {
				t.Errorf("answer %q, want a Chinese answer saying %q", answer, tt.fact)
			}
			if cs := cited(t, answer, hits); len(cs) == 0 || cs[0].section() != tt.section {
				t.Errorf("answer %q: want its first citation from %q", answer, tt.section)
			}
		})
	}
}
