package offline_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNewUsersDocuments asks the questions a new user asked after
// `agentapp kb ingest kbdocs` (testdata/kbdocs: an HR and an IT readme
// next to the demo FAQ). The search ranked the right chunk first, and the
// answer used to be "not found" for 加班费怎么算？ and 年假有几天？: the
// question's character pairs across 怎么 and 几 (费怎, 么算, 有几, 几天)
// counted as topics no sentence has. Questions about nothing in the
// documents must still get "not found".
func TestNewUsersDocuments(t *testing.T) {
	k := demoKB(t)
	for _, name := range []string{"hr/readme.md", "it/readme.md"} {
		data, err := os.ReadFile(filepath.Join("testdata", "kbdocs", name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := k.Ingest(context.Background(), name, data); err != nil {
			t.Fatalf("ingest %s: %v", name, err)
		}
	}
	const notFound = "抱歉，知识库里没有找到相关信息。"
	for _, tt := range []struct{ question, fact string }{
		{"加班费怎么算？", "工作日加班按本人小时工资的 1.5 倍支付加班工资"},
		{"VPN 多久断开？", "VPN 连接闲置 30 分钟会自动断线"},
		{"年假有几天？", "每年享有 5 天带薪年假"},
		{"打印机在哪里？", "打印机在茶水间旁边"},
		{"公司有班车吗？", ""},
		{"火星上有几座城市？", ""},
	} {
		t.Run(tt.question, func(t *testing.T) {
			_, hits, answer := askDemo(t, k.SearchTool(), tt.question)
			if tt.fact == "" {
				if answer != notFound {
					t.Errorf("answer %q, want %q", answer, notFound)
				}
				return
			}
			if !strings.HasPrefix(answer, "根据知识库：") || !strings.Contains(answer, tt.fact) {
				t.Errorf("answer %q, want it to quote %q", answer, tt.fact)
			}
			cs := cited(t, answer, hits)
			if len(cs) == 0 || !strings.Contains(cs[0].Text, tt.fact) {
				t.Errorf("answer %q: its first citation is not the chunk that says %q", answer, tt.fact)
			}
			// Only the document that answers is cited: a word the
			// question shares with another one (VPN, in the laptop FAQ)
			// does not bring that one in.
			for _, c := range cs {
				if c.DocID != cs[0].DocID {
					t.Errorf("answer %q also cites %s", answer, c.DocID)
				}
			}
			if first, _, _ := strings.Cut(answer, "["); !strings.Contains(first, tt.fact) {
				t.Errorf("answer %q: want its first sentence to say %q", answer, tt.fact)
			}
		})
	}
}
