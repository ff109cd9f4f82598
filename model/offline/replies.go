package offline

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentapp/agentapp/model"
)

// duty is one of the four things the assistant does.
type duty int

const (
	dutyOrder duty = iota
	dutyTicket
	dutyHuman
	dutyKB
)

// label names a duty in a sentence like "I can: …".
func (d duty) label(l lang) string {
	switch d {
	case dutyOrder:
		return l.pick("查询订单状态", "look up an order's status")
	case dutyTicket:
		return l.pick("创建售后工单", "open an after-sales ticket")
	case dutyHuman:
		return l.pick("转接人工客服", "hand you over to a human agent")
	}
	return l.pick("解答知识库里的问题", "answer questions from the company knowledge base")
}

// tool names the tool a duty needs, for messages about a missing one.
func (d duty) tool(t Tools) string {
	switch d {
	case dutyOrder:
		return t.Order
	case dutyTicket:
		return t.Ticket
	case dutyHuman:
		return t.Handoff
	}
	return t.Search
}

// available lists the duties the offered tools support, in the usual order.
func available(t Tools, tools []model.ToolSpec) []duty {
	var out []duty
	if findTool(tools, t.Order) != "" {
		out = append(out, dutyOrder)
	}
	if findTool(tools, t.Ticket) != "" {
		out = append(out, dutyTicket)
	}
	if findTool(tools, t.Handoff) != "" {
		out = append(out, dutyHuman)
	}
	if findTool(tools, t.Search, t.SearchRemote) != "" {
		out = append(out, dutyKB)
	}
	return out
}

// intro introduces the assistant and its four duties.
func intro(l lang) string {
	return l.pick(
		"您好！我是客服助手（离线演示模式）。我可以：查询订单状态（例如“订单 A-1024 到哪了？”）；创建售后工单（投诉、退款、报修）；转接人工客服；解答公司知识库里的问题（例如“出差住宿标准是多少？”）。",
		"Hi! I'm the customer-service assistant (offline demo mode). I can look up an order's status (e.g. \"where is order A-1024?\"), open an after-sales ticket (complaints, refunds, repairs), hand you over to a human agent, and answer questions from the company knowledge base (e.g. \"what is the lodging allowance on business trips?\").")
}

// canDo says what the assistant can do with the offered tools.
func canDo(l lang, t Tools, tools []model.ToolSpec) string {
	ds := available(t, tools)
	if len(ds) == 0 {
		return l.pick("当前没有连接可用的工具，我只能介绍自己能做什么。",
			"No suitable tools are connected right now, so I can only tell you what I would do.")
	}
	labels := make([]string, len(ds))
	for i, d := range ds {
		labels[i] = d.label(l)
	}
	return l.pick("我目前可以："+strings.Join(labels, "、")+"。",
		"Here I can "+strings.Join(labels, ", ")+".")
}

// missingTool answers a request whose tool is not offered.
func missingTool(l lang, t Tools, d duty, tools []model.ToolSpec) string {
	return l.pick(
		fmt.Sprintf("抱歉，这里没有 %s 工具，所以我无法%s。", d.tool(t), d.label(l)),
		fmt.Sprintf("Sorry, the %s tool is not available here, so I can't %s.", d.tool(t), d.label(l)),
	) + l.pick("", " ") + canDo(l, t, tools)
}

// noHandoff answers a request for a person when escalateToHuman is not
// offered (MCP is session-less, so our server never publishes it).
func noHandoff(l lang, t Tools, tools []model.ToolSpec) string {
	return l.pick("抱歉，这里无法转接人工客服。", "Sorry, a human hand-off is not available here.") +
		l.pick("", " ") + canDo(l, t, tools)
}

// answer composes the final answer from the tool results for the user's
// message, one paragraph per result.
func answer(l lang, user string, results []result) string {
	if len(results) == 0 {
		return l.pick("抱歉，工具没有返回结果，请稍后再试。", "Sorry, the tool returned no result; please try again later.")
	}
	parts := make([]string, 0, len(results))
	for _, r := range results {
		parts = append(parts, answerOne(l, user, r))
	}
	return strings.Join(parts, "\n")
}

func answerOne(l lang, user string, r result) string {
	if reason, ok := refusal(r.content); ok {
		return refused(l, r, reason)
	}
	if msg, ok := toolError(r.content); ok {
		return failed(l, r, msg)
	}
	switch r.kind {
	case kindOrder:
		return orderAnswer(l, r)
	case kindTicket:
		return ticketAnswer(l, r, false)
	case kindHuman:
		return ticketAnswer(l, r, true)
	case kindKB:
		return kbAnswer(l, user, r.content)
	}
	return l.pick(fmt.Sprintf("工具 %s 返回：%s", r.name, cut(oneLine(r.content), 300)),
		fmt.Sprintf("The tool %s returned: %s", r.name, cut(oneLine(r.content), 300)))
}

// toolError returns the message of an error result: the loop shows a failed
// call to the model as {"error": "..."}.
func toolError(content string) (string, bool) {
	var v struct {
		Error *string `json:"error"`
	}
	if json.Unmarshal([]byte(content), &v) != nil || v.Error == nil {
		return "", false
	}
	return *v.Error, true
}

// failed says plainly which step went wrong and why.
func failed(l lang, r result, msg string) string {
	var zh, en string
	switch r.kind {
	case kindOrder:
		zh, en = "查询订单", "looking up the order"
	case kindTicket:
		zh, en = "创建工单", "creating the ticket"
	case kindHuman:
		zh, en = "转接人工客服", "handing over to a human agent"
	case kindKB:
		zh, en = "搜索知识库", "searching the knowledge base"
	default:
		zh, en = "调用工具 "+r.name, "calling the tool "+r.name
	}
	msg = strings.TrimRight(cut(oneLine(msg), 300), "。.!！ ")
	if msg == "" {
		msg = l.pick("未知错误", "unknown error")
	}
	return l.pick(fmt.Sprintf("抱歉，%s时出错了：%s。请稍后再试，或换个说法。", zh, msg),
		fmt.Sprintf("Sorry, something went wrong while %s: %s. Please try again later or rephrase.", en, msg))
}

// orderAnswer reports an order's status from {orderId, status, eta} or
// {orderId, found: false, message}.
func orderAnswer(l lang, r result) string {
	var o struct {
		OrderID string `json:"orderId"`
		Status  string `json:"status"`
		ETA     string `json:"eta"`
		Found   *bool  `json:"found"`
	}
	if err := json.Unmarshal([]byte(r.content), &o); err != nil || (o.Status == "" && o.Found == nil) {
		return l.pick("订单查询结果："+cut(oneLine(r.content), 300),
			"The order lookup returned: "+cut(oneLine(r.content), 300))
	}
	id := o.OrderID
	if id == "" {
		id, _ = r.args["orderId"].(string)
	}
	if o.Found != nil && !*o.Found {
		return l.pick(fmt.Sprintf("没有找到订单 %s，请核对订单号后再试。", id),
			fmt.Sprintf("I couldn't find order %s. Please check the order number and try again.", id))
	}
	if l == chinese {
		s := fmt.Sprintf("订单 %s 的状态：%s", id, o.Status)
		if o.ETA != "" {
			s += "，预计 " + o.ETA
		}
		return s + "。"
	}
	s := fmt.Sprintf("The status of order %s is %s", id, withGloss(o.Status))
	if o.ETA != "" {
		s += "; expected: " + withGloss(o.ETA)
	}
	return s + "."
}

// withGloss adds an English gloss to the demo's Chinese order values, which
// the domain stores in Chinese; other values are shown as they are.
func withGloss(s string) string {
	var en string
	switch s {
	case "已发货":
		en = "shipped"
	case "仓库打包中":
		en = "being packed at the warehouse"
	case "已签收":
		en = "delivered and signed for"
	case "运输中":
		en = "in transit"
	case "派送中":
		en = "out for delivery"
	case "待发货":
		en = "waiting to ship"
	case "已取消":
		en = "cancelled"
	case "明天 18:00 前送达":
		en = "delivery by 18:00 tomorrow"
	case "后天发货":
		en = "ships the day after tomorrow"
	case "已送达，无需等待":
		en = "already delivered"
	default:
		return s
	}
	return s + " (" + en + ")"
}

// ticketAnswer quotes the id of a new ticket or of a hand-off pack.
func ticketAnswer(l lang, r result, handoff bool) string {
	var t struct {
		TicketID string `json:"ticketId"`
		Status   string `json:"status"`
	}
	_ = json.Unmarshal([]byte(r.content), &t)
	if t.TicketID == "" {
		return l.pick("请求已提交，但系统没有返回单号："+cut(oneLine(r.content), 300),
			"The request went through, but no ticket id came back: "+cut(oneLine(r.content), 300))
	}
	if handoff {
		return l.pick(fmt.Sprintf("已为您转接人工客服，交接单号 %s。人工客服会查看我们的对话记录，并尽快联系您。", t.TicketID),
			fmt.Sprintf("I've handed this conversation over to a human agent; your hand-off ticket is %s. They will read our conversation and contact you soon.", t.TicketID))
	}
	status := ""
	if t.Status != "" {
		status = l.pick("（状态："+t.Status+"）", " (status: "+t.Status+")")
	}
	return l.pick(fmt.Sprintf("已为您创建售后工单，工单号 %s%s。我们的同事会尽快跟进。", t.TicketID, status),
		fmt.Sprintf("I've opened after-sales ticket %s for you%s. Our team will follow up soon.", t.TicketID, status))
}
