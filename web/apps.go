package web

// MCP Apps: a tool's view (a ui:// HTML resource of its server) rendered
// beside its step. The page never runs a view itself: it loads a proxy
// from the sandbox origin (another origin than the page's, so a view can
// reach neither the page's DOM, nor its cookies, nor the API), and the
// proxy runs the view in an inner iframe without allow-same-origin, under
// a Content-Security-Policy built here from the resource's _meta.ui.csp.
// The page relays the view's JSON-RPC to the endpoints below, which check
// every request again: a page's script is not a guard.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/agentapp/agentapp/host"
	"github.com/agentapp/agentapp/internal/redact"
	"github.com/agentapp/agentapp/mcpclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits of the views' requests.
const (
	// maxViewHTML bounds a view's HTML (the official examples bundle
	// their scripts into one file of a few hundred kilobytes).
	maxViewHTML = 5 << 20
	// maxAppBody bounds the body of a view's tools/call or model context.
	maxAppBody = 256 << 10
	// maxAppResult bounds what a view's tools/call or resources/read
	// returns to it.
	maxAppResult = 5 << 20
	// maxModelContextRunes bounds the context a view keeps for the model.
	maxModelContextRunes = 8000
	// maxCSPSources bounds each list of origins a view's CSP names.
	maxCSPSources = 32
	// maxAppContexts bounds the sessions with a view's context waiting.
	maxAppContexts = 10000
)

// DefaultAppRate limits a session's requests from views (tools/call,
// resources/read, model context): enough for a view that polls, not a
// flood.
var DefaultAppRate = Rate{PerMinute: 120, Burst: 20}

// StepUI says that a step's tool links a view: the page renders it with
// the step's input and output.
type StepUI struct {
	ResourceURI string `json:"resourceUri"`
	// Result is the CallToolResult the view receives, once the step
	// ended: rebuilt from the output stored with the step, so that a
	// reload shows the view as it was.
	Result map[string]any `json:"result,omitempty"`
}

// PartialEvent is the data of a "partial" event: the model is still
// writing a call to a tool that links a view, and Input is what it wrote
// so far, made a valid JSON object. The page shows the view at the first
// one and passes each on as ui/notifications/tool-input-partial; the
// call's "step" events, sharing its ID, follow.
type PartialEvent struct {
	ID     string          `json:"id"`
	Step   int             `json:"step"`
	Tool   string          `json:"tool"`
	Server string          `json:"server"`
	Input  json.RawMessage `json:"input"`
	UI     *StepUI         `json:"ui"`
}

// partial sends a host.EventToolInputPartial on as a "partial" event, when
// the tool links a view and views are on.
func (t *turn) partial(ev host.Event) {
	if t.emit == nil {
		return
	}
	if ui := t.s.stepUI(ev.Server, ev.Call.Name); ui != nil {
		t.emit("partial", PartialEvent{ID: ev.Call.ID, Step: ev.Step, Tool: ev.Call.Name, Server: ev.Server, Input: ev.Call.Arguments, UI: ui})
	}
}

// withUI sets se.UI when the step's tool links a view, with its result
// when the step has ended.
func (s *Server) withUI(se *StepEvent) {
	se.UI = s.stepUI(se.Server, se.Tool)
	if se.UI == nil {
		return
	}
	switch se.State {
	case "ok", "denied":
		se.UI.Result = resultOfOutput(se.Output)
	case "error":
		se.UI.Result = toolResult(nil, errors.New(se.Error))
	}
}

// stepUI is the view of the tool a step called, when views are on.
func (s *Server) stepUI(server, tool string) *StepUI {
	if s.opts.SandboxOrigin == "" || server == "" {
		return nil
	}
	if u, ok := s.h.ToolUIOf(server, tool); ok && u.ResourceURI != "" {
		return &StepUI{ResourceURI: u.ResourceURI}
	}
	return nil
}

// ViewCSP is a view's _meta.ui.csp: the origins it may reach, each list
// checked by cspSources.
type ViewCSP struct {
	ConnectDomains  []string `json:"connectDomains"`
	ResourceDomains []string `json:"resourceDomains"`
	FrameDomains    []string `json:"frameDomains"`
	BaseURIDomains  []string `json:"baseUriDomains"`
}

// View is the answer of POST .../apps/view: what the page gives the
// sandbox proxy.
type View struct {
	HTML string  `json:"html"`
	CSP  ViewCSP `json:"csp"`
	// Allow is the iframe "allow" attribute of the permissions the view
	// asked for (camera, microphone, geolocation, clipboard-write).
	Allow         string `json:"allow"`
	PrefersBorder *bool  `json:"prefersBorder,omitempty"`
	Domain        string `json:"domain,omitempty"`
}

// AppsInfo is the answer of GET /api/apps.
type AppsInfo struct {
	// SandboxOrigin is where the page loads the views' proxy from; empty
	// when views are off.
	SandboxOrigin string `json:"sandboxOrigin"`
}

func (s *Server) registerApps(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/apps", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, AppsInfo{SandboxOrigin: s.opts.SandboxOrigin})
	})
	mux.HandleFunc("POST /api/sessions/{id}/apps/view", s.appView)
	mux.HandleFunc("POST /api/sessions/{id}/apps/read", s.appRead)
	mux.HandleFunc("POST /api/sessions/{id}/apps/call", s.appCall)
	mux.HandleFunc("POST /api/sessions/{id}/apps/context", s.postAppContext)
}

// AppRequest is the body of the apps endpoints: the server whose view
// asks, and the request's own fields.
type AppRequest struct {
	Server string `json:"server"`
	// URI is the resource of apps/view and apps/read.
	URI string `json:"uri,omitempty"`
	// Name and Arguments are the tool call of apps/call.
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Content and StructuredContent are the model context of apps/context.
	Content           []map[string]any `json:"content,omitempty"`
	StructuredContent map[string]any   `json:"structuredContent,omitempty"`
}

// appGate checks what every apps request needs: views on, a session the
// server issued and knows, the rate (lim, by key), a readable body naming
// a server. It answers the refusal itself.
func (s *Server) appGate(w http.ResponseWriter, r *http.Request, in *AppRequest) (string, bool) {
	return s.appGateLimited(w, r, in, s.appLim, "")
}

// appGateLimited is appGate with another limiter: loading a view counts
// against the client address's rate, not the session's views' rate, so
// that a reload showing many views does not run out of it. An empty key
// means the session.
func (s *Server) appGateLimited(w http.ResponseWriter, r *http.Request, in *AppRequest, lim *limiter, key string) (string, bool) {
	if s.opts.SandboxOrigin == "" {
		writeError(w, http.StatusNotFound, "views are off on this server (no sandbox origin)")
		return "", false
	}
	id := r.PathValue("id")
	if !validSessionID(id) {
		writeError(w, http.StatusNotFound, "no such session; POST /api/sessions starts one")
		return "", false
	}
	if key == "" {
		key = id
	}
	if limited(w, lim, key, "from this session's views", writeError) {
		return "", false
	}
	if !readJSON(w, r, maxAppBody, in, writeError) {
		return "", false
	}
	if in.Server == "" || len(in.Server) > 200 {
		writeError(w, http.StatusBadRequest, `name the MCP server whose view asks: {"server": "name", ...}`)
		return "", false
	}
	if ok, err := s.sessions.Exists(r.Context(), id); err != nil || !ok {
		if err != nil {
			s.log.Error(err.Error())
		}
		writeError(w, http.StatusNotFound, "no such session; POST /api/sessions starts one")
		return "", false
	}
	return id, true
}

func (s *Server) appView(w http.ResponseWriter, r *http.Request) {
	var in AppRequest
	if _, ok := s.appGateLimited(w, r, &in, s.addrLim, clientAddr(r)); !ok {
		return
	}
	if !strings.HasPrefix(in.URI, "ui://") || len(in.URI) > 2048 {
		writeError(w, http.StatusBadRequest, `a view is a ui:// resource; send {"server": ..., "uri": "ui://..."}`)
		return
	}
	res, err := s.h.ReadForApp(r.Context(), in.Server, in.URI)
	if err != nil {
		s.appFailed(w, "the view could not be read", err)
		return
	}
	v, err := viewOf(res, in.URI)
	if err != nil {
		writeError(w, http.StatusBadGateway, fmt.Sprintf("MCP server %q: %v", in.Server, err))
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// viewOf picks the view's HTML out of a resources/read result and reads
// its _meta.ui.
func viewOf(res *mcp.ReadResourceResult, uri string) (*View, error) {
	for _, c := range res.Contents {
		if c == nil || (c.URI != "" && c.URI != uri) {
			continue
		}
		if !isAppMIME(c.MIMEType) {
			return nil, fmt.Errorf("resource %s is %q, not a view (%s)", uri, c.MIMEType, mcpclient.AppMIMEType)
		}
		html := c.Text
		if html == "" && len(c.Blob) > 0 {
			html = string(c.Blob)
		}
		if len(html) > maxViewHTML {
			return nil, fmt.Errorf("the view %s is %d bytes, over the %d-byte limit", uri, len(html), maxViewHTML)
		}
		if !utf8.ValidString(html) || strings.TrimSpace(html) == "" {
			return nil, fmt.Errorf("the view %s is not UTF-8 HTML text", uri)
		}
		v := &View{HTML: html}
		ui, _ := c.Meta["ui"].(map[string]any)
		if err := readViewMeta(ui, v); err != nil {
			return nil, fmt.Errorf("the view %s: %w", uri, err)
		}
		return v, nil
	}
	return nil, fmt.Errorf("resource %s was not in the server's answer", uri)
}

func isAppMIME(m string) bool {
	return strings.EqualFold(strings.ReplaceAll(m, " ", ""), mcpclient.AppMIMEType)
}

// readViewMeta reads a resource's _meta.ui into v: a CSP origin that is
// not one (a keyword, a wildcard alone, anything with a quote or a
// semicolon) refuses the view, since dropping it silently could break it
// and passing it could loosen the policy.
func readViewMeta(ui map[string]any, v *View) error {
	v.CSP = ViewCSP{ConnectDomains: []string{}, ResourceDomains: []string{}, FrameDomains: []string{}, BaseURIDomains: []string{}}
	if ui == nil {
		return nil
	}
	if csp, ok := ui["csp"].(map[string]any); ok {
		for key, dst := range map[string]*[]string{"connectDomains": &v.CSP.ConnectDomains, "resourceDomains": &v.CSP.ResourceDomains, "frameDomains": &v.CSP.FrameDomains, "baseUriDomains": &v.CSP.BaseURIDomains} {
			list, _ := csp[key].([]any)
			var names []string
			for _, e := range list {
				str, _ := e.(string)
				names = append(names, str)
			}
			srcs, err := cspSources(names)
			if err != nil {
				return fmt.Errorf("_meta.ui.csp.%s: %w", key, err)
			}
			*dst = srcs
		}
	}
	if perms, ok := ui["permissions"].(map[string]any); ok {
		var allow []string
		for _, p := range []struct{ key, feature string }{{"camera", "camera"}, {"microphone", "microphone"}, {"geolocation", "geolocation"}, {"clipboardWrite", "clipboard-write"}} {
			if _, ok := perms[p.key]; ok {
				allow = append(allow, p.feature)
			}
		}
		v.Allow = strings.Join(allow, "; ")
	}
	if b, ok := ui["prefersBorder"].(bool); ok {
		v.PrefersBorder = &b
	}
	if d, ok := ui["domain"].(string); ok && len(d) <= 253 {
		v.Domain = d
	}
	return nil
}

// cspSourceRE is an origin a CSP may name: scheme, host (a leading "*."
// allowed) and port, nothing else.
var cspSourceRE = regexp.MustCompile(`^(https?|wss?)://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:[0-9]{1,5})?/?$`)

// cspSources checks a list of origins for a view's CSP.
func cspSources(list []string) ([]string, error) {
	if len(list) > maxCSPSources {
		return nil, fmt.Errorf("%d origins, over the limit of %d", len(list), maxCSPSources)
	}
	out := []string{}
	for _, src := range list {
		if !cspSourceRE.MatchString(src) {
			return nil, fmt.Errorf("%q is not an origin such as https://api.example.com", src)
		}
		out = append(out, strings.TrimSuffix(src, "/"))
	}
	return out, nil
}

// viewPolicy is the Content-Security-Policy of a view (and of the proxy
// that runs it, whose policy the view's srcdoc document inherits). With
// no origins declared it is the extension's restrictive default: inline
// script and style, data: images and media, and no network at all.
func viewPolicy(c ViewCSP) string {
	with := func(base string, extra []string) string {
		parts := append([]string{base}, extra...)
		return strings.TrimSpace(strings.Join(parts, " "))
	}
	orNone := func(list []string) string {
		if len(list) == 0 {
			return "'none'"
		}
		return strings.Join(list, " ")
	}
	return strings.Join([]string{
		"default-src 'none'",
		with("script-src 'unsafe-inline'", c.ResourceDomains),
		with("style-src 'unsafe-inline'", c.ResourceDomains),
		with("img-src data: blob:", c.ResourceDomains),
		with("font-src data:", c.ResourceDomains),
		with("media-src data: blob:", c.ResourceDomains),
		"connect-src " + orNone(c.ConnectDomains),
		"frame-src " + orNone(c.FrameDomains),
		"base-uri " + orNone(c.BaseURIDomains),
		"form-action 'none'",
		// CSP Level 3's directive against WebRTC, which connect-src does
		// not cover: a browser that knows it blocks peer connections.
		"webrtc 'block'",
	}, "; ")
}

// SandboxHandler serves the views' proxy: serve it on the sandbox origin
// (Options.SandboxOrigin), never on the page's. GET /proxy takes the
// view's origins as query parameters (connect, resource, frame, base,
// each repeatable) and answers the proxy page under the policy they make.
// The sandbox origin holds nothing: no cookies of its own, no API.
func (s *Server) SandboxHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /proxy", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		var c ViewCSP
		for key, dst := range map[string]*[]string{"connect": &c.ConnectDomains, "resource": &c.ResourceDomains, "frame": &c.FrameDomains, "base": &c.BaseURIDomains} {
			srcs, err := cspSources(q[key])
			if err != nil {
				http.Error(w, fmt.Sprintf("query parameter %s: %v", key, err), http.StatusBadRequest)
				return
			}
			*dst = srcs
		}
		policy := viewPolicy(c)
		h := w.Header()
		h.Set("Content-Security-Policy", policy)
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		h.Set("Referrer-Policy", "no-referrer")
		_, _ = w.Write([]byte(strings.Replace(proxyPage, "{{POLICY}}", htmlAttr(policy), 1)))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "this origin serves only the views' sandbox proxy (/proxy)", http.StatusNotFound)
	})
	return mux
}

// htmlAttr escapes s for a double-quoted HTML attribute.
func htmlAttr(s string) string {
	return strings.NewReplacer("&", "&amp;", `"`, "&quot;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// proxyPage relays JSON-RPC between the page (its parent) and the view
// (its inner iframe) and nothing else. The view gets the policy twice:
// inherited from this document, and as a meta element, so that it holds
// even where a browser would not pass it on to a srcdoc document.
const proxyPage = `<!doctype html>
<html><head><meta charset="utf-8">
<style>html,body{margin:0;padding:0;height:100%;overflow:hidden;background:transparent}iframe{border:0;width:100%;height:100%;display:block}</style>
</head><body><script>
(() => {
  "use strict";
  const policy = "{{POLICY}}";
  let inner = null;
  const allowed = /^(camera|microphone|geolocation|clipboard-write)(; (camera|microphone|geolocation|clipboard-write))*$/;
  const meta = () => '<meta http-equiv="Content-Security-Policy" content="' + policy.replace(/&/g, "&amp;").replace(/"/g, "&quot;") + '">';
  // WebRTC sends UDP where it likes, and no CSP of connect-src covers it:
  // before the view's own code runs, its window (and, as the view reaches
  // them, its nested frames' windows) lose the WebRTC constructors. A best
  // effort: a browser that knows CSP's webrtc directive blocks it anyway.
  const noRTC = '<script>(() => { "use strict";' +
    'const names = ["RTCPeerConnection", "webkitRTCPeerConnection", "mozRTCPeerConnection", "RTCDataChannel", "RTCIceCandidate", "RTCSessionDescription", "RTCRtpSender", "RTCRtpReceiver", "RTCRtpTransceiver"];' +
    'const strip = (w) => { for (const n of names) { try { Object.defineProperty(w, n, { value: undefined, writable: false, configurable: false }); } catch (e) {} } return w; };' +
    'strip(window);' +
    'for (const [proto, key] of [[HTMLIFrameElement.prototype, "contentWindow"], [HTMLIFrameElement.prototype, "contentDocument"], [HTMLObjectElement.prototype, "contentWindow"]]) {' +
    '  const d = Object.getOwnPropertyDescriptor(proto, key); if (!d || !d.get) continue;' +
    '  Object.defineProperty(proto, key, { configurable: false, get() { const v = d.get.call(this); if (v) { try { strip(v.defaultView || v); } catch (e) {} } return v; } });' +
    '}' +
    '})();<\/script>'; // "<\/": a plain end tag would end this script
  window.addEventListener("message", (e) => {
    const m = e.data;
    if (e.source === window.parent) {
      if (!m || typeof m !== "object" || m.jsonrpc !== "2.0") return;
      if (m.method === "ui/notifications/sandbox-resource-ready") {
        const p = m.params || {};
        if (inner || typeof p.html !== "string") return;
        inner = document.createElement("iframe");
        inner.setAttribute("sandbox", "allow-scripts allow-forms");
        if (typeof p.allow === "string" && allowed.test(p.allow)) inner.setAttribute("allow", p.allow);
        inner.srcdoc = meta() + noRTC + p.html;
        document.body.append(inner);
        return;
      }
      if (inner && inner.contentWindow) inner.contentWindow.postMessage(m, "*");
    } else if (inner && e.source === inner.contentWindow) {
      window.parent.postMessage(m, "*");
    }
  });
  window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, "*");
})();
</script></body></html>
`

func (s *Server) appRead(w http.ResponseWriter, r *http.Request) {
	var in AppRequest
	if _, ok := s.appGate(w, r, &in); !ok {
		return
	}
	if in.URI == "" || len(in.URI) > 2048 {
		writeError(w, http.StatusBadRequest, `name the resource: {"server": ..., "uri": "..."}`)
		return
	}
	res, err := s.h.ReadForApp(r.Context(), in.Server, in.URI)
	if err != nil {
		s.appFailed(w, "the resource could not be read", err)
		return
	}
	b, err := json.Marshal(res)
	if err != nil || len(b) > maxAppResult {
		writeError(w, http.StatusBadGateway, fmt.Sprintf("the resource %s is over the %d-byte limit of what a view may read", in.URI, maxAppResult))
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}

// appFailed answers a refused or failed view request.
func (s *Server) appFailed(w http.ResponseWriter, what string, err error) {
	if host.IsAppCallError(err) {
		writeError(w, http.StatusForbidden, err.Error())
		return
	}
	writeError(w, http.StatusBadGateway, what+": "+redact.Secrets(err.Error()))
}

// AppResultEvent is the data of the "result" event of apps/call: the
// CallToolResult the view receives.
type AppResultEvent struct {
	Result map[string]any `json:"result"`
}

// appCall runs a view's tools/call. The answer is an event stream like a
// message's: an approval the guards ask for shows on the page (its event
// says a view asked), then a "result" event, or an "error" event when the
// call was refused before it reached the server.
func (s *Server) appCall(w http.ResponseWriter, r *http.Request) {
	var in AppRequest
	id, ok := s.appGate(w, r, &in)
	if !ok {
		return
	}
	if in.Name == "" || len(in.Name) > 128 {
		writeError(w, http.StatusBadRequest, `name the tool: {"server": ..., "name": "tool", "arguments": {...}}`)
		return
	}
	if len(in.Arguments) > 0 && string(in.Arguments) != "null" && (in.Arguments[0] != '{') {
		writeError(w, http.StatusBadRequest, "the arguments must be a JSON object")
		return
	}
	if string(in.Arguments) == "null" {
		in.Arguments = nil
	}
	if u, ok := s.h.ToolUIOf(in.Server, in.Name); !ok || !u.ForApp() {
		// Refused before any stream opens: the same words the host gives.
		_, err := s.h.CallFromApp(r.Context(), in.Server, in.Name, in.Arguments, nil)
		s.appFailed(w, "the call failed", err)
		return
	}
	if !s.startTurn(w, writeError) {
		return
	}
	defer s.releaseStream()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(s.hardStop, cancel)
	defer stop()
	ev := s.openStream(w, cancel)
	defer ev.close()
	t := &turn{s: s, session: id, client: clientAddr(r), api: "app", emit: ev.send}
	callCtx, callCancel := context.WithTimeout(ctx, s.h.TurnTimeout())
	defer callCancel()
	out, err := s.h.CallFromApp(callCtx, in.Server, in.Name, in.Arguments, &confirmer{s: s, t: t})
	if err != nil && host.IsAppCallError(err) {
		ev.send("error", ErrorEvent{Message: err.Error()})
		return
	}
	res := toolResult(out, err)
	if b, _ := json.Marshal(res); len(b) > maxAppResult {
		res = toolResult(nil, fmt.Errorf("the result is over the %d-byte limit of what a view may receive", maxAppResult))
	}
	ev.send("result", AppResultEvent{Result: res})
}

// toolResult builds the CallToolResult a view receives from the output the
// model would see: its text, and as structuredContent the object it is,
// when it is one. A guard's refusal and a failure are errors.
func toolResult(out any, err error) map[string]any {
	text := func(s string) []any { return []any{map[string]any{"type": "text", "text": s}} }
	if err != nil {
		return map[string]any{"isError": true, "content": text(redact.Secrets(err.Error()))}
	}
	var raw []byte
	switch v := out.(type) {
	case json.RawMessage:
		raw = v
	case string:
		raw = []byte(v)
	default:
		raw, _ = json.Marshal(v)
	}
	return resultOfOutput(string(raw))
}

// resultOfOutput is toolResult of a stored output (a step's, in the
// history).
func resultOfOutput(output string) map[string]any {
	res := map[string]any{"content": []any{map[string]any{"type": "text", "text": output}}}
	if isDenial(output) {
		res["isError"] = true
		return res
	}
	var obj map[string]any
	if strings.HasPrefix(strings.TrimSpace(output), "{") && json.Unmarshal([]byte(output), &obj) == nil {
		res["structuredContent"] = obj
	}
	return res
}

// postAppContext keeps what a view wants the model to know, for the
// session's next message (ui/update-model-context): each update replaces
// the last. The host scans and fences it with that message
// (takeAppContext).
func (s *Server) postAppContext(w http.ResponseWriter, r *http.Request) {
	var in AppRequest
	id, ok := s.appGate(w, r, &in)
	if !ok {
		return
	}
	var parts []string
	for _, c := range in.Content {
		if c["type"] == "text" {
			if t, ok := c["text"].(string); ok {
				parts = append(parts, t)
			}
		}
	}
	if in.StructuredContent != nil {
		b, _ := json.Marshal(in.StructuredContent)
		parts = append(parts, string(b))
	}
	text := strings.TrimSpace(strings.Join(parts, "\n"))
	if n := utf8.RuneCountInString(text); n > maxModelContextRunes {
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the model context is %d characters, over the limit of %d", n, maxModelContextRunes))
		return
	}
	s.mu.Lock()
	switch {
	case text == "":
		delete(s.appContexts, id)
	case len(s.appContexts) >= maxAppContexts && s.appContexts[id].text == "":
		s.mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, "too many sessions hold a view's context; try again later")
		return
	default:
		s.appContexts[id] = appContext{server: in.Server, text: text}
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{})
}

// appContext is what a view asked the model to know, from its server.
type appContext struct{ server, text string }

// takeAppContext returns, and forgets, the view context waiting for the
// session's next message, as an attachment of that message: the host
// fences it in the user's message and scans it whatever the input guard's
// setting, since it comes from a third-party server and the user never
// saw it.
func (s *Server) takeAppContext(id string) []host.Attachment {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.appContexts[id]
	if !ok {
		return nil
	}
	delete(s.appContexts, id)
	return []host.Attachment{{Label: fmt.Sprintf("Context reported by the interactive view of MCP server %q", c.server), Text: c.text, Scan: true}}
}

// ErrNoSandbox is returned by CheckSandboxOrigin for an origin views
// cannot use.
var ErrNoSandbox = errors.New("no sandbox origin")

// CheckSandboxOrigin checks an origin for Options.SandboxOrigin: http or
// https, a host, an optional port, no path.
func CheckSandboxOrigin(origin string) error {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return fmt.Errorf("%w: %q is not an origin such as https://sandbox.example.com", ErrNoSandbox, origin)
	}
	return nil
}
