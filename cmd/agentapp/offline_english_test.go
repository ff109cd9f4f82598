package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChatOfflineEnglishQuestions is a new user's first English questions
// on a fresh data directory: the offline model searches the Chinese demo
// FAQ with the Chinese terms of the question and answers from the right
// section, with citations, and still says it does not know what the FAQ
// does not cover.
func TestChatOfflineEnglishQuestions(t *testing.T) {
	chatEnv(t)
	data := t.TempDir()
	tests := []struct {
		question string
		term     string // a Chinese term the search query must carry
		section  string // the section the answer comes from
		fact     string // a piece of the answer, "" for "I don't know"
	}{
		{"How long does a refund take?", "退款", "## 退款时效", "3 到 7 个工作日到账"},
		{"What is the hotel allowance for business trips?", "住宿", "## 住宿标准", "每晚 600 元"},
		{"How do I return an item?", "退货", "## 如何申请", "申请售后"},
		{"How many days of annual leave do I get?", "年假", "## 年假天数", "每年 5 天"},
		{"What is the capital of France?", "", "", ""},
		{"What is the wifi password?", "密码", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.question, func(t *testing.T) {
			out, errOut, code := runChatCLI(t, "", "chat", "--data-dir", data, "--model", "offline", "-p", tt.question, "--json")
			if code != 0 {
				t.Fatalf("exit %d\nstderr:\n%s", code, errOut)
			}
			var a struct {
				Answer string `json:"answer"`
				Steps  []struct {
					Tool  string `json:"tool"`
					Input struct {
						Query string `json:"query"`
					} `json:"input"`
					Output json.RawMessage `json:"output"`
				} `json:"steps"`
			}
			if err := json.Unmarshal([]byte(out), &a); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%s", err, out)
			}
			if len(a.Steps) != 1 || a.Steps[0].Tool != "searchKnowledgeBase" {
				t.Fatalf("steps = %+v, want one searchKnowledgeBase call", a.Steps)
			}
			q := a.Steps[0].Input.Query
			if !strings.HasPrefix(q, tt.question) || !strings.Contains(q, tt.term) {
				t.Errorf("query %q: want the question, then Chinese terms with %q", q, tt.term)
			}
			if tt.fact == "" {
				if a.Answer != "I don't know: I found nothing about that in the knowledge base." {
					t.Errorf("answer %q, want I don't know", a.Answer)
				}
				return
			}
			if !strings.HasPrefix(a.Answer, "According to the knowledge base (quoted in Chinese): ") || !strings.Contains(a.Answer, tt.fact) {
				t.Errorf("answer %q: want an English frame and %q", a.Answer, tt.fact)
			}
			// The answer cites the hit of the right section.
			var hits struct {
				Hits []struct {
					No   int    `json:"no"`
					Text string `json:"text"`
				} `json:"hits"`
			}
			if err := json.Unmarshal(a.Steps[0].Output, &hits); err != nil {
				t.Fatalf("search output is not JSON: %v", err)
			}
			for _, h := range hits.Hits {
				if strings.Contains(h.Text, tt.section) {
					if cite := fmt.Sprintf("[%d]", h.No); !strings.Contains(a.Answer, cite) {
						t.Errorf("answer %q does not cite %s, the hit with %q", a.Answer, cite, tt.section)
					}
					return
				}
			}
			t.Errorf("no hit holds %q: %s", tt.section, a.Steps[0].Output)
		})
	}
}

// TestChatSourcesListADocumentOnce: a question whose best hits are two
// chunks of one document. The answer cites both passages; the sources list
// the document once, with both numbers, so each [n] of the answer finds
// its entry (issue 29 point 5).
func TestChatSourcesListADocumentOnce(t *testing.T) {
	chatEnv(t)
	data := t.TempDir()
	doc := "# Pay policy\n\n## Weekdays\n\nOvertime pay on weekdays is 1.5 times the hourly wage. " +
		strings.Repeat("Staff records are kept by the people team and reviewed each quarter. ", 4) +
		"\n\n## Weekends\n\nOvertime pay on weekends is 2 times the hourly wage. " +
		strings.Repeat("Managers approve timesheets every Friday before payroll closes. ", 4) + "\n"
	file := filepath.Join(t.TempDir(), "pay.md")
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, err := runKBCLI(t, "kb", "ingest", "--data-dir", data, file); err != nil {
		t.Fatalf("ingest: %v\n%s", err, errOut)
	}
	out, errOut, code := runChatCLI(t, "", "chat", "--data-dir", data, "--model", "offline", "-p", "How is overtime pay calculated?", "--output-format", "json")
	var a struct {
		Answer  string `json:"answer"`
		Sources []struct {
			No    int    `json:"no"`
			DocID string `json:"docId"`
			Also  []int  `json:"also"`
		} `json:"sources"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &a) != nil {
		t.Fatalf("exit %d, stdout %q\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(a.Answer, "1.5 times") || !strings.Contains(a.Answer, "2 times") {
		t.Fatalf("the answer does not quote both passages: %q", a.Answer)
	}
	if len(a.Sources) != 1 || !strings.HasPrefix(a.Sources[0].DocID, "pay.md") || len(a.Sources[0].Also) != 1 {
		t.Fatalf("sources = %+v, want pay.md once with the other citation in also", a.Sources)
	}
	for _, n := range append([]int{a.Sources[0].No}, a.Sources[0].Also...) {
		if !strings.Contains(a.Answer, fmt.Sprintf("[%d]", n)) {
			t.Errorf("source number %d is not cited in %q", n, a.Answer)
		}
	}
}
