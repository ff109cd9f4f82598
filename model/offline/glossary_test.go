package offline

import (
	"strings"
	"testing"
)

func TestGlossaryIsWellFormed(t *testing.T) {
	owner := map[string]string{}
	for _, e := range glossary {
		if len(e.en) == 0 {
			t.Errorf("entry %q has no English phrase", e.zh)
		}
		if len(e.zh) == 0 && !e.weak {
			t.Errorf("entry %q has no Chinese term, so it must be weak", e.en)
		}
		for _, p := range e.en {
			if p != strings.ToLower(p) || len(latinWords(p)) == 0 || len(latinWords(p)) > 4 {
				t.Errorf("phrase %q: want one to four lower-case words", p)
			}
			key := strings.Join(latinWords(p), " ")
			if o, dup := owner[key]; dup {
				t.Errorf("phrase %q is in the glossary twice (entries %q and %q)", p, o, e.en[0])
			}
			owner[key] = e.en[0]
		}
		for _, z := range e.zh {
			// A term made only of stop bigrams would match every sentence.
			if !hasCJK(z) || len(tokens(z)) == 0 || runeLen(z) < 2 {
				t.Errorf("Chinese term %q of %q must be two or more CJK characters that are not stop words", z, e.en[0])
			}
		}
	}
}

func TestSearchQuery(t *testing.T) {
	tests := []struct{ msg, want string }{
		{"How long does a refund take?", "How long does a refund take? 退款 退回"},
		{"What is the hotel allowance for business trips?", "What is the hotel allowance for business trips? 住宿 酒店 标准间 出差 差旅"},
		// Phrases win over their words, plurals are folded, case does not matter.
		{"ANNUAL LEAVE days", "ANNUAL LEAVE days 年假"},
		{"sick leave  and\nsick pay", "sick leave and sick pay 病假 病假工资"},
		// Nothing the glossary knows, or only how the question is asked:
		// the question as typed.
		{"What is the capital of France?", "What is the capital of France?"},
		{"How long is the Great Wall?", "How long is the Great Wall?"},
		{"What is the exchange rate?", "What is the exchange rate?"},
		// Chinese is searched as typed.
		{"出差住宿标准是多少？", "出差住宿标准是多少？"},
		{"refund 退款多久到账", "refund 退款多久到账"},
	}
	for _, tt := range tests {
		if got := searchQuery(tt.msg); got != tt.want {
			t.Errorf("searchQuery(%q) = %q, want %q", tt.msg, got, tt.want)
		}
	}
	// A long question is cut, the Chinese terms are kept, and the query stays
	// within the search tool's limit.
	long := strings.Repeat("word ", 200) + "refund"
	got := searchQuery("refund " + long)
	if runeLen(got) > maxQueryRunes || !strings.HasSuffix(got, "… 退款 退回") {
		t.Errorf("long question: %d runes, ends %q", runeLen(got), got[len(got)-40:])
	}
}

// hotelChunk is a hit whose section says something about a password and a
// hotel, the way the demo FAQ does.
var hotelChunk = []hit{{No: 1, Text: "## 丢失与归还（Lost devices）\n\n设备丢失或被盗的，IT 部门会远程锁定设备并重置相关账号密码。\n" +
	"## 住宿标准（Hotel allowance per night）\n\n- 一线城市：每晚 600 元；\n两名同性别员工同行时，原则上合住一间标准间。"}}

func TestEnglishAnswersNeedEveryTopic(t *testing.T) {
	tests := []struct {
		question string
		want     string // the sentence quoted first, "" for none
	}{
		{"What is the hotel allowance?", "一线城市：每晚 600 元；"},
		{"Do I have to share a room?", "两名同性别员工同行时，原则上合住一间标准间。"},
		{"What happens if my laptop is stolen?", "设备丢失或被盗的，IT 部门会远程锁定设备并重置相关账号密码。"},
		// One topic of two is a weak hit.
		{"What is the wifi password?", ""},
		{"Can you recommend a good hotel in Paris?", ""},
		// How a question is asked is no topic: "how long" meets 工作日 and
		// "how much" meets 标准 everywhere.
		{"How long is it?", ""},
		{"How much is the standard?", ""},
	}
	for _, tt := range tests {
		picks := bestSentences(tt.question, hotelChunk)
		got := ""
		if len(picks) > 0 {
			got = picks[0].sentence
		}
		if got != tt.want {
			t.Errorf("%q: first pick %q, want %q (picks %+v)", tt.question, got, tt.want, picks)
		}
	}
}

func TestStopWordsAreDroppedBeforeFolding(t *testing.T) {
	// "does" once became the content word "doe", and "this" became "thi".
	got := tokens("Does this take long?")
	for _, bad := range []string{"doe", "does", "thi", "this"} {
		if got[bad] {
			t.Errorf("tokens kept %q: %v", bad, got)
		}
	}
}
