package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// The hostile modes play servers that attack the client, each in one way,
// with a hand-written JSON-RPC responder so that what goes on the wire is
// exactly what the mode means to send. Every mode answers initialize (with
// the tools, resources and prompts capabilities) and, unless it says
// otherwise, lists one tool, echo, and one resource, test://hello.
var hostileModes = map[string]func(method string, p rawParams) (result string, answer bool){
	// hang-tools never answers tools/list.
	"hang-tools": func(method string, p rawParams) (string, bool) {
		return plainAnswer(method, p, "tools/list")
	},
	// hang-resources lists its tools but never answers resources/list,
	// resources/read or tools/call.
	"hang-resources": func(method string, p rawParams) (string, bool) {
		return plainAnswer(method, p, "resources/list", "resources/read", "tools/call")
	},
	// endless-pages answers every list with a small page and a new cursor.
	"endless-pages": func(method string, p rawParams) (string, bool) {
		return pagedAnswer(method, p, func(page int) string { return "page" + strconv.Itoa(page+1) }, 3, 0)
	},
	// repeat-cursor answers every list with the same cursor.
	"repeat-cursor": func(method string, p rawParams) (string, bool) {
		return pagedAnswer(method, p, func(int) string { return "again" }, 3, 0)
	},
	// huge-pages answers every list with a page of about -page-bytes bytes
	// and a new cursor.
	"huge-pages": func(method string, p rawParams) (string, bool) {
		return pagedAnswer(method, p, func(page int) string { return "page" + strconv.Itoa(page+1) }, 1, pageBytes)
	},
	// giant-schema offers echo and giant, whose input schema is about
	// 2.9 MB (an enum of 150,000 values).
	"giant-schema": func(method string, p rawParams) (string, bool) {
		if method != "tools/list" {
			return plainAnswer(method, p)
		}
		var b strings.Builder
		b.WriteString(`{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"giant","description":"Research a topic.","inputSchema":{"type":"object","properties":{"topic":{"type":"string","enum":[`)
		for i := range 150_000 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"topic-%06d"`, i)
		}
		b.WriteString(`]}},"required":["topic"]}}]}`)
		return b.String(), true
	},
	// bad-names offers tools whose names no model provider accepts.
	"bad-names": func(method string, p rawParams) (string, bool) {
		if method != "tools/list" {
			return plainAnswer(method, p)
		}
		var tools []string
		for _, n := range BadToolNames {
			b, _ := json.Marshal(n)
			tools = append(tools, `{"name":`+string(b)+`,"description":"bad \u001b[31mname\u001b[0m","inputSchema":{"type":"object"}}`)
		}
		return `{"tools":[` + strings.Join(tools, ",") + `]}`, true
	},
}

// BadToolNames are the names bad-names mode offers, in order.
var BadToolNames = []string{
	"ok",
	"new\nline",
	"esc\x1b[31mred",
	"with space",
	"ünïcødé",
	"",
	strings.Repeat("long", 17), // 68 characters
	"dup",
	"dup",
	"a.b",
	"a b",
}

// pageBytes is the size of a page in huge-pages mode; onlyList, when set,
// is the one list method the paging modes are hostile in (the others
// answer one plain page).
var (
	pageBytes int
	onlyList  string
)

type rawParams struct {
	Cursor string `json:"cursor"`
	Name   string `json:"name"`
	URI    string `json:"uri"`
}

// plainAnswer answers the methods every hostile mode knows, except those
// in hang, which it never answers.
func plainAnswer(method string, p rawParams, hang ...string) (string, bool) {
	for _, h := range hang {
		if method == h {
			return "", false
		}
	}
	switch method {
	case "initialize":
		return `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"resources":{},"prompts":{}},"serverInfo":{"name":"hostile \u001b[31m","version":"1"}}`, true
	case "tools/list":
		return `{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`, true
	case "tools/call":
		b, _ := json.Marshal("called " + p.Name)
		return `{"content":[{"type":"text","text":` + string(b) + `}]}`, true
	case "resources/list":
		return `{"resources":[{"uri":"test://hello","name":"hello"}]}`, true
	case "resources/templates/list":
		return `{"resourceTemplates":[]}`, true
	case "prompts/list":
		return `{"prompts":[]}`, true
	case "resources/read":
		b, _ := json.Marshal(p.URI)
		return `{"contents":[{"uri":` + string(b) + `,"text":"hello resource"}]}`, true
	case "ping":
		return `{}`, true
	}
	return "", true // answered with "method not found"
}

// pagedAnswer answers the four list methods with pages of n items (each
// padded to about size/n bytes when size > 0) whose nextCursor is
// next(page), where page counts from 1.
func pagedAnswer(method string, p rawParams, next func(page int) string, n, size int) (string, bool) {
	if onlyList != "" && method != onlyList {
		return plainAnswer(method, p)
	}
	field, item := "", ""
	switch method {
	case "tools/list":
		field, item = "tools", `{"name":"t%d_%d","description":"%s","inputSchema":{"type":"object"}}`
	case "resources/list":
		field, item = "resources", `{"uri":"test://r%d/%d","name":"r","description":"%s"}`
	case "resources/templates/list":
		field, item = "resourceTemplates", `{"uriTemplate":"test://t%d/{%d}","name":"t","description":"%s"}`
	case "prompts/list":
		field, item = "prompts", `{"name":"p%d_%d","description":"%s"}`
	default:
		return plainAnswer(method, p)
	}
	page := 1
	if c, ok := strings.CutPrefix(p.Cursor, "page"); ok {
		page, _ = strconv.Atoi(c)
	}
	pad := ""
	if size > 0 {
		pad = strings.Repeat("x", size/n)
	}
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(item, page, i, pad)
	}
	cur, _ := json.Marshal(next(page))
	return `{"` + field + `":[` + strings.Join(items, ",") + `],"nextCursor":` + string(cur) + `}`, true
}

// hostile runs the responder of mode, answering each request with
// answer's result, "method not found" for an empty one, and nothing at
// all when answer says so. Before it reads anything it writes floodOut
// non-JSON lines on stdout and floodErr lines on stderr, each holding
// terminal escape sequences.
func hostile(answer func(string, rawParams) (string, bool), floodOut, floodErr int) {
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	var mu sync.Mutex
	errw := bufio.NewWriterSize(os.Stderr, 64<<10)
	for i := range floodErr {
		fmt.Fprintf(errw, "\x1b[2J\x1b[31mstderr flood line %d\x1b]0;pwned\x07\n", i)
	}
	errw.Flush()
	for i := range floodOut {
		fmt.Fprintf(out, "\x1b[31mstdout flood line %d\n", i)
	}
	out.Flush()
	send := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		out.WriteString(s + "\n")
		out.Flush()
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	for in.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params rawParams       `json:"params"`
		}
		if err := json.Unmarshal(in.Bytes(), &msg); err != nil || msg.ID == nil {
			continue // notifications
		}
		res, ok := answer(msg.Method, msg.Params)
		switch {
		case !ok:
			fmt.Fprintf(os.Stderr, "testserver: not answering %s\n", msg.Method)
		case res == "":
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, msg.ID))
		default:
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, msg.ID, res))
		}
	}
}
