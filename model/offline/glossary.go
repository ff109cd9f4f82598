package offline

import (
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The demo knowledge base is written in Chinese (with English words only in
// some headings), so an English question finds little in it by its own
// words. A real model would translate the question before searching; the
// offline model does the same with a small bilingual glossary of the demo
// domain: the Chinese terms of the English words it recognises are added to
// the search query, and they count as those words when the answer is picked
// from the hits. Words the glossary does not know are searched as typed, so
// a question about anything else still finds nothing and gets "I don't
// know".

// entry is one glossary concept: English phrases that mean it (one to four
// words, matched after plural folding) and the Chinese terms the demo FAQ
// uses for it. A weak entry says how something is asked (how long, how
// much, how to) or is too general to show what the question is about (item,
// order, policy): it adds to a sentence's score, but a sentence never
// qualifies on weak entries alone.
type entry struct {
	en   []string
	zh   []string
	weak bool
}

// glossary is the demo domain's vocabulary, from kb/demo: returns and
// refunds, business travel and lodging, leave, IT equipment. A Chinese term
// counts as found in a sentence when all its character pairs are there, so
// a longer term is the more precise one: 发货时间 does not match 未发货.
var glossary = []entry{
	// Returns and refunds (returns.md).
	{en: []string{"refund", "refunded", "refunding", "money back"}, zh: []string{"退款", "退回"}},
	{en: []string{"return", "returned", "returning", "send back", "send it back", "sent back", "give back", "hand back", "hand in"},
		zh: []string{"退货", "寄回", "退换货", "申请售后", "归还", "交回"}},
	{en: []string{"exchange", "exchanged", "swap"}, zh: []string{"换货", "退换货"}},
	{en: []string{"no reason", "no questions asked", "change my mind", "changed my mind", "don't want", "do not want", "don't like", "unwanted"},
		zh: []string{"无理由"}},
	{en: []string{"tag", "label", "packaging", "package", "box", "accessory", "accessories", "free gift"}, zh: []string{"吊牌", "包装", "配件", "赠品"}},
	{en: []string{"customized", "customised", "custom made", "custom", "personalized", "personalised"}, zh: []string{"定制商品"}},
	{en: []string{"perishable", "fresh food", "underwear", "activation code", "software", "top up card", "prepaid card"},
		zh: []string{"鲜活易腐", "贴身衣物", "激活码", "数字类商品", "充值卡"}},
	{en: []string{"return shipping", "shipping back", "postage", "return postage", "who pays shipping"}, zh: []string{"运费"}},
	{en: []string{"shipping insurance", "insurance"}, zh: []string{"运费险"}},
	{en: []string{"shipping", "ship", "shipped", "dispatch", "dispatched", "delivery", "deliver", "courier", "logistics"},
		zh: []string{"配送", "物流", "发货时间", "发货时效"}},
	{en: []string{"tracking number", "tracking", "waybill"}, zh: []string{"快递单号"}},
	{en: []string{"defect", "defective", "faulty", "quality problem", "quality issue", "quality"}, zh: []string{"质量问题"}},
	{en: []string{"warranty", "guarantee", "under warranty"}, zh: []string{"保修"}},
	{en: []string{"repair", "repaired", "fix", "fixed", "broken", "break", "broke", "not working", "stopped working"}, zh: []string{"维修", "报修", "送修", "故障"}},
	{en: []string{"photo", "picture", "video", "proof"}, zh: []string{"照片", "视频"}},
	{en: []string{"cancel", "cancelled", "canceled", "cancellation", "cancelling", "canceling"}, zh: []string{"取消"}},
	{en: []string{"not shipped", "unshipped", "not yet shipped", "before shipping"}, zh: []string{"未发货"}},
	{en: []string{"received", "receive", "signed for", "delivered"}, zh: []string{"签收"}, weak: true},
	{en: []string{"wechat pay", "wechat", "weixin"}, zh: []string{"微信支付"}},
	{en: []string{"alipay"}, zh: []string{"支付宝"}},
	{en: []string{"bank card", "credit card", "debit card", "bank"}, zh: []string{"银行卡", "信用卡", "储蓄卡"}},
	{en: []string{"gift card", "store credit", "account balance", "balance"}, zh: []string{"礼品卡", "余额"}},
	{en: []string{"after sales"}, zh: []string{"售后", "申请售后"}},
	{en: []string{"cannot be returned", "can't be returned", "can not be returned", "non returnable", "not returnable", "cannot return", "can't return",
		"exception", "excluded", "not eligible"}, zh: []string{"不支持"}},
	{en: []string{"item", "product", "goods", "purchase", "purchased", "merchandise", "thing", "stuff", "something", "anything"},
		zh: []string{"商品"}, weak: true},
	{en: []string{"order"}, zh: []string{"订单"}, weak: true},

	// Business travel and lodging (travel.md).
	{en: []string{"hotel", "lodging", "accommodation", "accommodations", "room", "stay overnight"}, zh: []string{"住宿", "酒店", "标准间"}},
	{en: []string{"share a room", "share room", "sharing a room", "room share", "roommate"}, zh: []string{"合住"}},
	{en: []string{"business trip", "business travel", "work trip", "trip", "travel", "traveling", "travelling", "on the road"},
		zh: []string{"出差", "差旅"}},
	{en: []string{"tier 1", "first tier", "tier one", "tier 2", "second tier", "tier two", "tier", "city"},
		zh: []string{"一线城市", "二线城市", "城市级别"}, weak: true},
	{en: []string{"beijing", "peking"}, zh: []string{"北京"}},
	{en: []string{"shanghai"}, zh: []string{"上海"}},
	{en: []string{"guangzhou", "canton"}, zh: []string{"广州"}},
	{en: []string{"shenzhen"}, zh: []string{"深圳"}},
	{en: []string{"hangzhou"}, zh: []string{"杭州"}},
	{en: []string{"chengdu"}, zh: []string{"成都"}},
	{en: []string{"nanjing"}, zh: []string{"南京"}},
	{en: []string{"wuhan"}, zh: []string{"武汉"}},
	{en: []string{"xiamen"}, zh: []string{"厦门"}},
	{en: []string{"per night", "a night", "night", "nightly"}, zh: []string{"每晚"}, weak: true},
	{en: []string{"transport", "transportation", "commute", "getting around"}, zh: []string{"交通"}},
	{en: []string{"train", "high speed rail", "rail", "railway", "bullet train"}, zh: []string{"高铁", "动车", "二等座"}},
	{en: []string{"flight", "fly", "flying", "plane", "airplane", "air travel", "airfare", "economy class", "economy"}, zh: []string{"飞机", "经济舱"}},
	{en: []string{"sleeper", "overnight train", "berth"}, zh: []string{"卧铺"}},
	{en: []string{"subway", "metro", "underground"}, zh: []string{"地铁"}},
	{en: []string{"taxi", "cab", "ride hailing", "didi", "uber"}, zh: []string{"网约车"}},
	{en: []string{"bus"}, zh: []string{"公交"}},
	{en: []string{"meal allowance", "meal", "food", "per diem", "lunch", "dinner", "breakfast", "eat", "eating"},
		zh: []string{"伙食", "餐食"}},
	{en: []string{"reimbursement", "reimburse", "reimbursed", "expense", "expense claim", "expense report", "claim expenses"},
		zh: []string{"报销"}},
	{en: []string{"invoice", "receipt", "fapiao", "vat"}, zh: []string{"发票", "票据", "增值税"}},
	{en: []string{"book", "booking", "reserve", "reservation", "in advance", "advance"}, zh: []string{"预订", "提前"}, weak: true},
	{en: []string{"approval", "approve", "approved", "permission", "manager", "boss"}, zh: []string{"审批", "批准", "直属经理"}, weak: true},
	{en: []string{"who pays", "who pay", "pay for", "paid for", "pay", "paid", "cover the cost", "covers the cost", "bear the cost"},
		zh: []string{"承担", "赔付"}, weak: true},
	{en: []string{"salary", "wage", "wages", "paycheck", "payslip", "payroll"}, zh: []string{"工资"}},
	{en: []string{"trade show", "exhibition", "public holiday", "peak season"}, zh: []string{"展会", "节假日"}},

	// Leave (leave.md).
	{en: []string{"annual leave", "vacation", "vacation day", "paid leave", "paid time off", "pto", "holiday", "annual holiday"},
		zh: []string{"年假"}},
	{en: []string{"sick leave", "sick day", "sick", "ill", "illness", "unwell"}, zh: []string{"病假"}},
	{en: []string{"sick pay", "paid when sick", "paid sick leave"}, zh: []string{"病假工资"}},
	{en: []string{"leave", "time off", "day off", "days off", "absence", "absent"}, zh: []string{"请假", "假期", "休假"}},
	{en: []string{"carry over", "carried over", "carryover", "roll over", "rollover", "unused", "left over", "leftover"},
		zh: []string{"结转", "未休"}},
	{en: []string{"marriage", "wedding", "getting married", "marriage leave"}, zh: []string{"婚假"}},
	{en: []string{"maternity", "maternity leave"}, zh: []string{"产假"}},
	{en: []string{"paternity", "paternity leave"}, zh: []string{"陪产假"}},
	{en: []string{"bereavement", "funeral", "compassionate leave"}, zh: []string{"丧假"}},
	{en: []string{"doctor's note", "doctor note", "sick note", "medical certificate", "medical note", "diagnosis"},
		zh: []string{"诊断证明", "病假条"}},
	{en: []string{"hospital", "hospitalized", "hospitalised"}, zh: []string{"医院", "住院"}},
	{en: []string{"years of service", "seniority", "years of work", "work experience", "years worked"}, zh: []string{"工作年限", "工龄"}},
	{en: []string{"half day", "half a day"}, zh: []string{"半天"}},
	{en: []string{"new hire", "new employee", "new starter", "newcomer", "onboarding", "joining", "first day"},
		zh: []string{"新入职", "入职", "新员工"}},

	// IT equipment (it-equipment.md).
	{en: []string{"laptop", "notebook", "computer", "pc", "macbook", "equipment", "device", "hardware"}, zh: []string{"电脑", "设备"}},
	{en: []string{"replace", "replaced", "replacement", "upgrade", "upgraded", "new one"}, zh: []string{"更换", "升级", "新机"}},
	{en: []string{"lost", "lose", "losing", "stolen", "theft", "missing", "steal"}, zh: []string{"丢失", "被盗"}},
	{en: []string{"password"}, zh: []string{"密码"}},
	{en: []string{"account", "login", "log in", "email", "mailbox"}, zh: []string{"账号", "邮箱"}},
	{en: []string{"memory", "ram", "ssd", "storage", "disk", "specs", "spec", "specification", "configuration", "config"},
		zh: []string{"内存", "固态硬盘", "配置"}},
	{en: []string{"helpdesk", "help desk", "service desk", "it support", "it ticket", "it service desk"}, zh: []string{"服务台"}},
	{en: []string{"loaner", "spare laptop", "spare", "backup laptop", "temporary laptop"}, zh: []string{"备用机"}},
	{en: []string{"backup", "back up", "wipe", "wiped", "erase", "erased"}, zh: []string{"备份", "数据擦除"}},
	{en: []string{"resign", "resignation", "quit", "quitting", "leave the company", "leaving the company", "offboarding", "last day", "last working day"},
		zh: []string{"离职", "最后工作日"}},

	// How the question is asked.
	{en: []string{"how long", "how soon", "how many days", "how fast", "how quickly", "time limit", "deadline", "within", "time"},
		zh: []string{"多久", "时效", "时限", "工作日", "到账"}, weak: true},
	{en: []string{"how much", "how many", "allowance", "limit", "cap", "maximum", "max", "standard", "budget", "rate", "cost", "price", "fee", "amount"},
		zh: []string{"标准", "上限", "补助", "费用"}, weak: true},
	{en: []string{"how do i", "how can i", "how to", "process", "procedure", "step", "apply", "applying", "application", "request", "requesting"},
		zh: []string{"流程"}, weak: true},
	{en: []string{"employee", "staff", "worker", "colleague", "people"}, zh: []string{"员工"}, weak: true},
	{en: []string{"document", "paperwork", "certificate", "evidence"}, zh: []string{"证明", "材料"}, weak: true},
	{en: []string{"day", "working day", "business day", "workday"}, zh: []string{"工作日"}, weak: true},
	// Words about rules in general: 政策 and 规定 are in most documents.
	{en: []string{"policy", "rule", "regulation", "requirement", "condition"}, weak: true},

	// Phrases that only look like the domain: their words are searched as
	// typed and never match the Chinese text.
	{en: []string{"exchange rate", "interest rate", "stock exchange", "chat room", "living room", "time zone", "book a table"}, weak: true},
}

// phrase is a glossary phrase cut into folded words, with its entry.
type phrase struct {
	words []string
	entry int
}

// phrases indexes the glossary by the first folded word of each phrase,
// longest phrases first, so that "business trip" wins over "trip". It is
// built on first use: the package is linked into every agentapp command,
// and most of them (serve among them) never ask the offline model.
var phrases = sync.OnceValue(func() map[string][]phrase {
	out := map[string][]phrase{}
	for i, e := range glossary {
		for _, p := range e.en {
			ws := latinWords(p)
			for j := range ws {
				ws[j] = stem(ws[j])
			}
			out[ws[0]] = append(out[ws[0]], phrase{words: ws, entry: i})
		}
	}
	for _, ps := range out {
		sort.SliceStable(ps, func(i, j int) bool { return len(ps[i].words) > len(ps[j].words) })
	}
	return out
})

// latinWords cuts s into lower-case words of letters and digits, in order
// and with the stop words that tokens drops: phrases such as "how long" and
// "how do i" are made of them.
func latinWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// concept is one thing a question asks about: a content word of the
// question, or a glossary entry it uses. It is found in a sentence when all
// the tokens of one of its forms are there.
type concept struct {
	forms []map[string]bool
	// zh are the Chinese search terms of a glossary concept.
	zh   []string
	weak bool
}

// found reports whether the concept is in a sentence's tokens.
func (c concept) found(st map[string]bool) bool {
	for _, f := range c.forms {
		if len(f) > 0 && overlap(f, st) == len(f) {
			return true
		}
	}
	return false
}

// concepts returns what a question asks about. A Chinese question's
// concepts are its tokens (CJK bigrams and words). An English question's
// are the glossary entries it uses, each with its English phrases and
// Chinese terms as forms, and its other content words as they are.
func concepts(question string) []concept {
	if langOf(question) == chinese {
		toks := tokens(unscaffold(question))
		long := false
		for t := range toks {
			long = long || !isLoneHan(t)
		}
		var out []concept
		for t := range toks {
			// A character left alone by the cut (算 of 怎么算) says
			// little; it stays only when nothing else is left.
			if long && isLoneHan(t) {
				continue
			}
			out = append(out, concept{forms: []map[string]bool{{t: true}}})
		}
		return out
	}
	words := latinWords(question)
	stems := make([]string, len(words))
	for i, w := range words {
		stems[i] = stem(w)
	}
	var out []concept
	seenEntry, seenWord := map[int]bool{}, map[string]bool{}
	for i := 0; i < len(words); {
		if e, n := lookup(stems[i:]); n > 0 {
			if !seenEntry[e] {
				seenEntry[e] = true
				out = append(out, entryConcept(e))
			}
			i += n
			continue
		}
		w, s := words[i], stems[i]
		i++
		// Stop words, and single letters left by apostrophes ("what's").
		if isStopToken(w) || isStopToken(s) || (utf8.RuneCountInString(w) == 1 && !unicode.IsDigit([]rune(w)[0])) || seenWord[s] {
			continue
		}
		seenWord[s] = true
		out = append(out, concept{forms: []map[string]bool{{s: true}}})
	}
	return out
}

// questionWords are the words of a Chinese question that ask rather than
// name what is asked about. unscaffold cuts the question at them, so that
// the character pairs tokens makes do not straddle them: 加班费怎么算 is
// about 加班 and 班费, not 费怎 and 么算, pairs no answer contains, which
// made a question look like it had more topics than any sentence could
// match. Only words that are never part of a content word are cut at (有
// and 是 are: 有效, 是否).
var questionWords = []string{
	"为什么", "有没有", "是不是", "能不能", "可不可以", "怎么样",
	"怎么", "怎样", "如何", "多久", "多少", "多长", "什么", "哪里", "哪儿", "哪些", "哪个", "是否", "能否", "请问",
	"吗", "呢", "吧", "几",
}

// unscaffold replaces the question words of a Chinese question by spaces.
func unscaffold(q string) string {
	for _, w := range questionWords {
		q = strings.ReplaceAll(q, w, " ")
	}
	return q
}

// isLoneHan reports a token that is a single CJK character.
func isLoneHan(t string) bool {
	r, n := utf8.DecodeRuneInString(t)
	return n == len(t) && isCJK(r)
}

// lookup finds the longest glossary phrase at the start of the folded
// words and returns its entry and its length in words (0 when none).
func lookup(stems []string) (int, int) {
	for _, p := range phrases()[stems[0]] {
		if len(p.words) <= len(stems) && slices.Equal(p.words, stems[:len(p.words)]) {
			return p.entry, len(p.words)
		}
	}
	return 0, 0
}

// entryConcept is the concept of a glossary entry: every English phrase
// and Chinese term of it is a form.
func entryConcept(e int) concept {
	c := concept{zh: glossary[e].zh, weak: glossary[e].weak}
	for _, p := range glossary[e].en {
		if f := tokens(p); len(f) > 0 {
			c.forms = append(c.forms, f)
		}
	}
	for _, z := range glossary[e].zh {
		c.forms = append(c.forms, tokens(z))
	}
	return c
}

// maxQueryTerms bounds the Chinese terms added to a search query.
const maxQueryTerms = 16

// searchQuery is the query the model sends to the knowledge-base search
// for the user's message: the message on one line and, for an English
// message, the Chinese terms of the topic concepts it uses ("How long does
// a refund take? 退款 退回"). The terms of weak concepts are left out: they
// are in most documents and would only crowd the hits.
func searchQuery(user string) string {
	q := oneLine(user)
	if langOf(q) == chinese {
		return cut(q, maxQueryRunes)
	}
	var terms []string
	for _, c := range concepts(q) {
		if c.weak {
			continue
		}
		for _, z := range c.zh {
			if !slices.Contains(terms, z) && len(terms) < maxQueryTerms {
				terms = append(terms, z)
			}
		}
	}
	if len(terms) == 0 {
		return cut(q, maxQueryRunes)
	}
	suffix := " " + strings.Join(terms, " ")
	return cut(q, maxQueryRunes-runeLen(suffix)) + suffix
}
