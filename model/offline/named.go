package offline

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/agentapp/agentapp/model"
)

// maxNamedCalls bounds the tools one message can name and have called.
const maxNamedCalls = 4

// namedTools returns the offered tools that the user's message names, in
// the order the message names them. A name counts as a whole word only,
// and a name that is a plain word ("echo", "fail") only after a verb that
// asks for a tool ("use", "call", "run", "调用", "使用", "用"), so that the
// model does not call a tool because an everyday word happens to be its
// name; a name like read_graph or getOrderStatus counts anywhere. This is
// how a user of the offline demo reaches a connected server's tools
// ("use read_graph").
func namedTools(tools []model.ToolSpec, user string) []string {
	type hit struct {
		at   int
		name string
	}
	var hits []hit
	for _, t := range tools {
		if len(t.Name) < 3 {
			continue
		}
		for from := 0; from < len(user); {
			i := strings.Index(user[from:], t.Name)
			if i < 0 {
				break
			}
			i += from
			end := i + len(t.Name)
			from = end
			if !wordBoundary(user, i, end) || (!identifierLike(t.Name) && !askedFor(user[:i])) {
				continue
			}
			hits = append(hits, hit{i, t.Name})
			break
		}
	}
	for i := 1; i < len(hits); i++ { // insertion sort: few hits
		for j := i; j > 0 && hits[j].at < hits[j-1].at; j-- {
			hits[j], hits[j-1] = hits[j-1], hits[j]
		}
	}
	var names []string
	for _, h := range hits {
		if len(names) == maxNamedCalls {
			break
		}
		names = append(names, h.name)
	}
	return names
}

// wordBoundary reports whether s[i:end] is not part of a longer name.
func wordBoundary(s string, i, end int) bool {
	return (i == 0 || !nameByte(s[i-1])) && (end == len(s) || !nameByte(s[end]))
}

// nameByte reports whether b can be part of a tool name as messages write
// it (server:name and server/name included).
func nameByte(b byte) bool {
	return b == '_' || b == '-' || b == '.' || b == '/' || b == ':' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// identifierLike reports whether a tool name cannot be an everyday word:
// it has a separator, a digit or an inner capital.
func identifierLike(name string) bool {
	for i, r := range name {
		if r == '_' || r == '-' || r == '.' || unicode.IsDigit(r) || (i > 0 && unicode.IsUpper(r)) {
			return true
		}
	}
	return false
}

// askedFor reports whether the text before a name ends with a verb that
// asks for a tool.
func askedFor(before string) bool {
	before = strings.ToLower(strings.TrimRight(before, " \t\"'`“”"))
	for _, v := range []string{"use", "call", "run", "调用", "使用", "用"} {
		if strings.HasSuffix(before, v) {
			return true
		}
	}
	return false
}

// searchToolName is the host's tool search (toolsearch.SearchToolName; the
// model does not import the host's packages).
const searchToolName = "searchTools"

// askedName returns the tool name a message asks for after a verb ("use
// read_graph", "调用 read_graph"), when it is written like an identifier (a
// plain word after "use" is as likely English as a tool); "" when none.
func askedName(user string) string {
	lower := strings.ToLower(user)
	for _, v := range []string{"use", "call", "run", "调用", "使用", "用"} {
		for from := 0; from < len(lower); {
			i := strings.Index(lower[from:], v)
			if i < 0 {
				break
			}
			i += from
			from = i + len(v)
			if v[0] < 0x80 && !wordBoundary(lower, i, from) {
				continue
			}
			rest := strings.TrimLeft(user[from:], " \t\"'`“”")
			end := 0
			for end < len(rest) && nameByte(rest[end]) {
				end++
			}
			if name := strings.TrimRight(rest[:end], ".:-/"); len(name) >= 3 && identifierLike(name) {
				return name
			}
		}
	}
	return ""
}

// onlySearched reports whether every tool called since the user's message
// was the tool search.
func onlySearched(since []model.Message) bool {
	for _, m := range since {
		for _, c := range m.ToolCalls {
			if c.Name != searchToolName {
				return false
			}
		}
	}
	return true
}

// callNamed calls the tools the message names, all at once. A tool the
// model knows gets its usual arguments (the order number, the search
// query); any other gets the JSON object written in the message, if there
// is one, else no arguments.
func callNamed(t Tools, id string, names []string, user, orderID string) model.Message {
	msg := model.Message{Role: model.RoleAssistant}
	obj := jsonObjectIn(user)
	for i, name := range names {
		var args any = json.RawMessage(obj)
		switch kindOf(t, name) {
		case kindOrder:
			if orderID != "" {
				args = struct {
					OrderID string `json:"orderId"`
				}{orderID}
			}
		case kindKB:
			args = struct {
				Query string `json:"query"`
				K     int    `json:"k"`
			}{searchQuery(user), searchK}
		}
		c := call(fmt.Sprintf("%s-%d", id, i+1), name, args)
		msg.ToolCalls = append(msg.ToolCalls, c.ToolCalls...)
	}
	return msg
}

// jsonObjectIn returns the first JSON object written in s ("{...}"), or
// "{}" when there is none.
func jsonObjectIn(s string) string {
	i := strings.Index(s, "{")
	if i < 0 {
		return "{}"
	}
	dec := json.NewDecoder(strings.NewReader(s[i:]))
	var raw json.RawMessage
	if dec.Decode(&raw) != nil {
		return "{}"
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return "{}"
	}
	return string(raw)
}

// refusal returns the reason of a result that a guard refused: the call
// did not run, and the answer must say so rather than report success.
func refusal(content string) (string, bool) {
	var d struct {
		Denied bool   `json:"denied"`
		Reason string `json:"reason"`
	}
	if !strings.HasPrefix(strings.TrimSpace(content), "{") || json.Unmarshal([]byte(content), &d) != nil || !d.Denied {
		return "", false
	}
	return d.Reason, true
}

// refused says plainly that a call was not made.
func refused(l lang, r result, reason string) string {
	reason = strings.TrimRight(cut(oneLine(reason), 300), "。. ")
	return l.pick(fmt.Sprintf("没有调用 %s：这次调用被拒绝了（%s）。请求没有执行。", r.name, reason),
		fmt.Sprintf("I did not run %s: the call was refused (%s). Nothing was done.", r.name, reason))
}
