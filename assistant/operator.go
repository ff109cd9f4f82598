package assistant

import (
	"context"
	"encoding/json"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/agentapp/agentapp/store"
	"github.com/agentapp/agentapp/support"
)

// operatorList is how many hand-offs and tickets the operator view shows.
const operatorList = 200

// Operator is the operator view over the support queue: the page, the
// queue as JSON, resolving hand-offs and tickets, and the refund requests
// (operator_refunds.go). The web front end mounts its routes (pattern →
// handler) behind the operator token: web.Options.Operator.
func Operator(svc *support.Service, log *slog.Logger) map[string]http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	o := &operator{support: svc, log: log}
	return map[string]http.Handler{
		"GET /operator":                        http.HandlerFunc(o.operatorPage),
		"GET /operator/queue":                  http.HandlerFunc(o.operatorQueue),
		"POST /operator/handoffs/{id}/resolve": http.HandlerFunc(o.resolveHandoff),
		"POST /operator/tickets/{id}/resolve":  http.HandlerFunc(o.resolveTicket),
		"GET /operator/refunds":                http.HandlerFunc(o.operatorRefunds),
		"POST /operator/refunds/{id}/approve":  o.decideRefund(true),
		"POST /operator/refunds/{id}/decline":  o.decideRefund(false),
	}
}

// operator serves the operator view.
type operator struct {
	support *support.Service
	log     *slog.Logger
}

// Queue is the answer of GET /operator/queue: the newest first.
type Queue struct {
	Handoffs []support.QueuedHandoff `json:"handoffs"`
	Tickets  []support.QueuedTicket  `json:"tickets"`
}

func (s *operator) queue(r *http.Request) (Queue, error) {
	h, err := s.support.Handoffs(r.Context(), operatorList)
	if err != nil {
		return Queue{}, err
	}
	t, err := s.support.Tickets(r.Context(), operatorList)
	if err != nil {
		return Queue{}, err
	}
	return Queue{Handoffs: orEmpty(h), Tickets: orEmpty(t)}, nil
}

func (s *operator) operatorQueue(w http.ResponseWriter, r *http.Request) {
	q, err := s.queue(r)
	if err != nil {
		s.log.Error(err.Error())
		storeFailed(w, err, "the queue could not be read; try again", false)
		return
	}
	writeJSON(w, http.StatusOK, q)
}

// operatorView is what the operator page shows: the queue and the refund
// requests (operator_refunds.go), each with its times made readable.
type operatorView struct {
	Queue
	Refunds []refundRow
}

// refundRow is a refund request on the page. Its times are shown in the
// server's zone and carried as RFC 3339 in <time datetime>, which
// operator.js rewrites into the browser's own zone and locale.
type refundRow struct {
	support.QueuedRefund
	Pending                bool
	Created, Decided       string
	CreatedISO, DecidedISO string
}

func newRefundRow(q support.QueuedRefund) refundRow {
	row := refundRow{QueuedRefund: q, Pending: q.Status == support.RefundPending}
	row.Created, row.CreatedISO = readableTime(q.CreatedAt)
	row.Decided, row.DecidedISO = readableTime(q.DecidedAt)
	return row
}

// readableTime turns a stored RFC 3339 time into "2006-01-02 15:04:05 MST"
// in the server's zone, and back to RFC 3339 for the page's script; a
// value that does not parse is shown as it is.
func readableTime(stamp string) (readable, iso string) {
	t, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil {
		return stamp, ""
	}
	return t.In(time.Local).Format("2006-01-02 15:04:05 MST"), t.UTC().Format(time.RFC3339)
}

func (s *operator) operatorPage(w http.ResponseWriter, r *http.Request) {
	q, err := s.queue(r)
	if err != nil {
		s.log.Error(err.Error())
		storeFailed(w, err, "the queue could not be read; try again", true)
		return
	}
	refunds, err := s.support.Refunds(r.Context(), operatorList)
	if err != nil {
		s.log.Error(err.Error())
		storeFailed(w, err, "the refund requests could not be read; try again", true)
		return
	}
	view := operatorView{Queue: q, Refunds: make([]refundRow, 0, len(refunds))}
	for _, rf := range refunds {
		view.Refunds = append(view.Refunds, newRefundRow(rf))
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src data:; form-action 'self'; frame-ancestors 'none'")
	if err := operatorTemplate().Execute(w, view); err != nil {
		s.log.Warn("operator page: " + err.Error())
	}
}

func (s *operator) resolveHandoff(w http.ResponseWriter, r *http.Request) {
	s.resolve(w, r, s.support.ResolveHandoff)
}

func (s *operator) resolveTicket(w http.ResponseWriter, r *http.Request) {
	s.resolve(w, r, s.support.ResolveTicket)
}

// resolve marks a record resolved; a form post is sent back to the view,
// any other caller gets JSON.
func (s *operator) resolve(w http.ResponseWriter, r *http.Request, mark func(ctx context.Context, id string) error) {
	id := r.PathValue("id")
	if len(id) > 64 {
		writeError(w, http.StatusNotFound, "no such record")
		return
	}
	if err := mark(r.Context(), id); err != nil {
		if errors.Is(err, support.ErrNotFound) {
			writeError(w, http.StatusNotFound, err.Error())
			return
		}
		s.log.Error(err.Error())
		storeFailed(w, err, "it could not be marked resolved; try again", false)
		return
	}
	if r.Header.Get("Content-Type") == "application/x-www-form-urlencoded" {
		http.Redirect(w, r, "/operator", http.StatusSeeOther)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "resolved": true})
}

// operatorTemplate is parsed on first use: package web is linked into
// every agentapp command, and only the web server's operator page needs it.
var operatorTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("operator").Funcs(template.FuncMap{"when": when}).Parse(`<!doctype html>
<html lang="zh-CN"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>agentapp · operator</title>
<link rel="stylesheet" href="/static/app.css">
<link rel="icon" href="data:,">
<script src="/static/operator.js" defer></script>
</head><body class="operator">
<header><h1>Operator · 人工坐席</h1><a href="/operator">Refresh / 刷新</a></header>
<main>
<section><h2>Refunds · 退款申请 ({{len .Refunds}})</h2>
{{range .Refunds}}<article class="card refund{{if not .Pending}} resolved{{end}}" id="refund-{{.RefundID}}" data-status="{{.Status}}">
<h3>{{.RefundID}} <small><time datetime="{{.CreatedISO}}">{{.Created}}</time></small></h3>
<p><b>Order / 订单:</b> {{.OrderID}}</p>
<p><b>Reason / 原因:</b> {{.Reason}}</p>
<p class="meta">status {{.Status}} · caller {{.Caller}}</p>
{{if .Pending}}<form method="post" action="/operator/refunds/{{.RefundID}}/approve"><input name="note" maxlength="2000" placeholder="Note (optional) / 备注（可选）"> <button type="submit" class="approve">Approve / 批准</button></form>
<form method="post" action="/operator/refunds/{{.RefundID}}/decline"><input name="note" maxlength="2000" placeholder="Note (optional) / 备注（可选）"> <button type="submit" class="decline">Decline / 拒绝</button></form>
{{else}}<p class="done">{{if eq .Status "approved"}}✓{{else}}✗{{end}} {{.Status}} <time datetime="{{.DecidedISO}}">{{.Decided}}</time>{{if .Note}} · {{.Note}}{{end}}</p>{{end}}
</article>{{else}}<p class="empty">No refund requests. / 暂无退款申请。</p>{{end}}
</section>
<section><h2>Hand-offs · 转人工 ({{len .Handoffs}})</h2>
{{range .Handoffs}}<article class="card{{if .ResolvedAt}} resolved{{end}}" id="handoff-{{.TicketID}}">
<h3>{{.TicketID}} <small>{{when .CreatedAt}}</small></h3>
<p><b>Reason / 原因:</b> {{.Reason}}</p>
<details><summary>Transcript / 对话记录</summary><pre>{{.Transcript}}</pre></details>
<p class="meta">session {{.Session}}</p>
{{if .ResolvedAt}}<p class="done">✓ resolved {{when .ResolvedAt}}</p>{{else}}<form method="post" action="/operator/handoffs/{{.TicketID}}/resolve"><button type="submit">Mark resolved / 标记已解决</button></form>{{end}}
</article>{{else}}<p class="empty">No hand-offs. / 暂无转人工。</p>{{end}}
</section>
<section><h2>Tickets · 工单 ({{len .Tickets}})</h2>
{{range .Tickets}}<article class="card{{if .ResolvedAt}} resolved{{end}}" id="ticket-{{.TicketID}}">
<h3>{{.TicketID}} <small>{{when .CreatedAt}}</small></h3>
<p><b>{{.Subject}}</b></p><p>{{.Description}}</p>
<p class="meta">status {{.Status}} · session {{.Session}}</p>
{{if .ResolvedAt}}<p class="done">✓ resolved {{when .ResolvedAt}}</p>{{else}}<form method="post" action="/operator/tickets/{{.TicketID}}/resolve"><button type="submit">Mark resolved / 标记已解决</button></form>{{end}}
</article>{{else}}<p class="empty">No tickets. / 暂无工单。</p>{{end}}
</section>
</main></body></html>
`))
})

// when shows a stored RFC 3339 time (UTC, up to nanoseconds) readably, to
// the minute in UTC, in a <time> element whose datetime attribute keeps
// the exact instant; /static/operator.js rewrites it in the browser's time
// zone. A value that does not parse is shown as stored.
func when(stamp string) template.HTML {
	t, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil {
		return template.HTML(template.HTMLEscapeString(stamp))
	}
	exact := t.UTC().Format(time.RFC3339)
	return template.HTML(`<time datetime="` + exact + `" title="` + exact + `">` + t.UTC().Format("2006-01-02 15:04") + ` UTC</time>`)
}

// writeJSON and writeError answer as the web's API does.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

// storeFailed answers a failed read or write of the database as the web's
// API does: 503 with Retry-After and the one outage message when the
// database is unavailable, else 500 with msg (plain text when plain, for
// the page's forms).
func storeFailed(w http.ResponseWriter, err error, msg string, plain bool) {
	code := http.StatusInternalServerError
	if store.IsUnavailable(err) {
		code, msg = http.StatusServiceUnavailable, store.UnavailableMessage
		w.Header().Set("Retry-After", strconv.Itoa(int(store.RetryAfter.Seconds())))
	}
	if plain {
		http.Error(w, msg, code)
		return
	}
	writeError(w, code, msg)
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
