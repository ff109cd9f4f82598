package offline

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// intent is what the user's message asks for.
type intent int

const (
	intentIntro intent = iota
	intentHuman
	intentTicket
	intentOrder
	intentSearch
)

// classify decides what a user message asks for, and the order number when
// there is one. Precedence: an explicit request for a person wins (the user
// asked not to talk to a bot), then a ticket (a complaint about an order
// should be recorded, not just answered with its status), then an order
// number, then a bare greeting, and everything else is a question for the
// knowledge base.
func classify(msg string) (intent, string) {
	text := strings.TrimSpace(msg)
	if text == "" {
		return intentIntro, ""
	}
	lower := strings.ToLower(text)
	orderID := findOrderID(text)
	switch {
	case wantsHuman(lower):
		return intentHuman, orderID
	case wantsTicket(lower):
		return intentTicket, orderID
	case orderID != "":
		return intentOrder, orderID
	case isGreeting(lower):
		return intentIntro, ""
	}
	return intentSearch, ""
}

// orderIDPattern finds order-number candidates; findOrderID checks what
// surrounds them, which RE2 cannot. It is compiled on first use, since
// most agentapp commands never run the offline model.
var orderIDPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)[a-z]{1,4}-[0-9]{4,12}`)
})

// findOrderID returns the first order number in s, upper-cased: one to four
// letters, a dash and four to twelve digits, not glued to other letters,
// digits or dashes (so a ticket id like TK-20250101-0001 is not one).
func findOrderID(s string) string {
	for _, loc := range orderIDPattern().FindAllStringIndex(s, -1) {
		if loc[0] > 0 && isIDChar(rune(s[loc[0]-1])) {
			continue
		}
		if loc[1] < len(s) && isIDChar(rune(s[loc[1]])) {
			continue
		}
		return strings.ToUpper(s[loc[0]:loc[1]])
	}
	return ""
}

func isIDChar(r rune) bool {
	return r == '-' || r == '_' || (r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)))
}

// containsAny reports whether lower contains one of the phrases. Phrases in
// Latin letters must stand as whole words ("human" matches, "inhuman" does
// not); CJK phrases match anywhere.
func containsAny(lower string, phrases ...string) bool {
	for _, p := range phrases {
		if hasPhrase(lower, p) {
			return true
		}
	}
	return false
}

func hasPhrase(lower, p string) bool {
	if hasCJK(p) {
		return strings.Contains(lower, p)
	}
	for from := 0; ; {
		i := strings.Index(lower[from:], p)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(p)
		// Only a phrase edge that is itself a word character needs a boundary:
		// "?" matches right after "refund".
		leftOK := i == 0 || !isWordByte(lower[i-1]) || !isWordByte(p[0])
		rightOK := end == len(lower) || !isWordByte(lower[end]) || !isWordByte(p[len(p)-1])
		if leftOK && rightOK {
			return true
		}
		from = i + 1
	}
}

func isWordByte(b byte) bool {
	return b == '\'' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9'
}

// wantsHuman reports a request to talk to a person. "人工智能" (artificial
// intelligence) and "per person" are not such requests.
func wantsHuman(lower string) bool {
	zh := strings.ReplaceAll(lower, "人工智能", "")
	if containsAny(zh, "转人工", "人工", "真人", "客服人员", "人类客服") {
		return true
	}
	if containsAny(lower, "human", "humans", "representative", "real person", "live person", "a person",
		"live agent", "human agent", "real agent", "an agent", "operator", "someone real") {
		return true
	}
	return containsAny(lower, "agent", "person", "someone") &&
		containsAny(lower, "talk to", "speak to", "speak with", "talk with", "connect me", "transfer me", "put me through")
}

// wantsTicket reports a request to open an after-sales ticket. Complaint and
// repair words always count. Refund and return words count when the user
// asks for one ("我要退款", "I want a refund") or just states the problem, but
// not when they ask about the policy ("退款多久到账？", "how do returns
// work?"), which the knowledge base answers better.
func wantsTicket(lower string) bool {
	if containsAny(lower, "工单", "投诉", "售后", "报修", "坏了", "损坏", "破损", "质量问题", "故障", "维修",
		"ticket", "complaint", "complain", "broken", "damaged", "defective", "faulty", "repair",
		"not working", "doesn't work", "does not work") {
		return true
	}
	if !containsAny(lower, "退款", "退货", "换货", "退钱", "refund", "refunds", "return", "returns", "exchange", "money back") {
		return false
	}
	switch {
	case containsAny(lower, "政策", "规定", "规则", "流程", "了解", "知道", "想问", "请问",
		"policy", "policies", "rules", "know", "explain"):
		return false
	case containsAny(lower, "我要", "我想", "帮我", "请帮", "申请", "要求", "给我", "麻烦",
		"i want", "i'd like", "i would like", "i need", "help me", "open a", "create a", "file a",
		"my money", "my order", "request a"):
		return true
	}
	return !containsAny(lower, "怎么", "如何", "多久", "几天", "条件", "什么", "吗",
		"how", "what", "when", "can i", "?", "？")
}

// isGreeting reports a message that is only a greeting or asks what the
// assistant can do.
func isGreeting(lower string) bool {
	var b strings.Builder
	for _, r := range lower {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	switch strings.TrimRight(b.String(), "啊呀呢哈") {
	case "", "hi", "hello", "hey", "hiya", "hithere", "hellothere", "goodmorning", "goodafternoon",
		"goodevening", "help", "whoareyou", "whatcanyoudo", "你好", "您好", "嗨", "哈喽", "在吗",
		"在不在", "早上好", "下午好", "晚上好", "帮助", "你是谁", "你能做什么", "你可以做什么", "你会什么":
		return true
	}
	return false
}
