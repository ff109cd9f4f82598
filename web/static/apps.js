// MCP Apps views: a tool's interactive view, rendered beside its step.
// The view runs in two iframes: a proxy from the sandbox origin (another
// origin than this page's) and, inside it, the view's HTML without
// allow-same-origin. This file is the host's end of the JSON-RPC the view
// speaks over postMessage; every request it forwards is checked again by
// the server.
"use strict";

const apps = (() => {
  const PROTOCOL = "2026-01-26";
  const MAX_MESSAGE = 1 << 20; // characters of one message's JSON
  const RATE = 20; // messages per second a view may send on average…
  const BURST = 60; // …and at once
  const MAX_HEIGHT = 900;
  const MODES = ["inline", "fullscreen"]; // "pip" is answered with inline
  const RESIZE_DEBOUNCE = 250; // ms a container's size must hold before the view hears of it
  const MAX_EARLY_VIEWS = 16; // views an answer may open from partial input, before their calls start
  const texts = {
    zh: { view: "交互视图", viewFailed: "视图无法显示：", openLink: "视图想打开这个链接：", byView: "（视图请求）", close: "退出全屏", turnEnded: "回答在调用结束前中止" },
    en: { view: "Interactive view", viewFailed: "The view could not be shown: ", openLink: "The view wants to open this link:", byView: " (asked by the view)", close: "Exit full screen", turnEnded: "the answer ended before the call did" },
  };
  const tr = (key) => texts[lang][key];
  let config = null;
  const views = new Set();

  function sandboxOrigin() {
    config ||= fetch("/api/apps").then((r) => (r.ok ? r.json() : {})).then((c) => c.sandboxOrigin || "").catch(() => "");
    return config;
  }

  // dimensions is what the view's container offers: a fixed box in
  // full screen, a width and the tallest height allowed inline.
  function dimensions(v) {
    if (v.mode === "fullscreen") return { width: v.box.clientWidth, height: v.box.clientHeight };
    return { width: v.box.clientWidth, maxHeight: MAX_HEIGHT };
  }

  function hostContext(v) {
    return {
      theme: matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light",
      locale: lang === "zh" ? "zh-CN" : "en-US",
      timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      displayMode: v.mode,
      availableDisplayModes: MODES,
      containerDimensions: dimensions(v),
      platform: matchMedia("(pointer: coarse)").matches ? "mobile" : "web",
      deviceCapabilities: { touch: matchMedia("(pointer: coarse)").matches, hover: matchMedia("(hover: hover)").matches },
      toolInfo: { id: v.step.id, tool: { name: v.step.tool, inputSchema: { type: "object" } } },
    };
  }

  // One rendered view.
  class View {
    constructor(a, step) {
      this.a = a;
      this.step = step;
      this.box = el("div", "view");
      this.box.dataset.tool = step.tool;
      this.box.dataset.server = step.server;
      this.box.dataset.state = "loading";
      this.box.setAttribute("aria-label", tr("view"));
      a.box.insertBefore(this.box, a.text);
      this.tokens = BURST;
      this.last = performance.now();
      this.nextId = 1;
      this.pending = new Map();
      this.initialized = false;
      this.sentResult = false;
      this.mode = "inline";
    }

    async load(session) {
      this.session = session;
      this.origin = await sandboxOrigin();
      if (!this.origin) { this.box.remove(); return; }
      const r = await this.api("view", { uri: this.step.ui.resourceUri });
      if (!r.ok) { this.fail((await r.json().catch(() => ({}))).error || r.statusText); return; }
      this.resource = await r.json();
      const q = new URLSearchParams();
      const csp = this.resource.csp || {};
      for (const [key, list] of [["connect", csp.connectDomains], ["resource", csp.resourceDomains], ["frame", csp.frameDomains], ["base", csp.baseUriDomains]]) {
        for (const o of list || []) q.append(key, o);
      }
      const f = document.createElement("iframe");
      f.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
      f.setAttribute("referrerpolicy", "no-referrer");
      if (this.resource.allow) f.setAttribute("allow", this.resource.allow);
      f.title = tr("view") + " · " + this.step.tool;
      f.src = this.origin + "/proxy" + (q.size ? "?" + q : "");
      if (this.resource.prefersBorder === false) this.box.classList.add("borderless");
      this.frame = f;
      this.box.append(f);
      views.add(this);
      this.watchSize();
    }

    // watchSize tells the view its container's new size once it has held
    // for RESIZE_DEBOUNCE ms: at most one notification per pause, and
    // none when nothing the view was told changed.
    watchSize() {
      if (typeof ResizeObserver !== "function") return;
      this.observer = new ResizeObserver(() => {
        clearTimeout(this.resizeTimer);
        this.resizeTimer = setTimeout(() => this.contextChanged(), RESIZE_DEBOUNCE);
      });
      this.observer.observe(this.box);
    }

    // contextChanged sends the display mode and container size when
    // either differs from what the view was last told.
    contextChanged() {
      if (!this.initialized || !views.has(this)) return;
      const now = { displayMode: this.mode, containerDimensions: dimensions(this) };
      const key = JSON.stringify(now);
      if (key === this.toldContext) return;
      this.toldContext = key;
      this.notify("ui/notifications/host-context-changed", now);
    }

    // setMode puts the view inline or in full screen (its container fills
    // the page, with a button back to inline) and tells the view.
    setMode(mode) {
      if (!MODES.includes(mode)) mode = "inline";
      if (mode === this.mode) return;
      this.mode = mode;
      this.box.dataset.mode = mode;
      this.box.classList.toggle("fullscreen", mode === "fullscreen");
      if (mode === "fullscreen") {
        const close = el("button", "view-close", "✕ " + tr("close"));
        close.type = "button";
        close.onclick = () => this.setMode("inline");
        this.box.prepend(close);
        this.closeButton = close;
        this.onKey = (e) => { if (e.key === "Escape") this.setMode("inline"); };
        document.addEventListener("keydown", this.onKey);
      } else {
        this.closeButton?.remove();
        this.closeButton = null;
        document.removeEventListener("keydown", this.onKey);
      }
      clearTimeout(this.resizeTimer);
      this.contextChanged();
    }

    api(what, body) {
      return fetch(`/api/sessions/${encodeURIComponent(this.session)}/apps/${what}`, {
        method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ server: this.step.server, ...body }),
      });
    }

    fail(message) {
      this.box.dataset.state = "failed";
      this.box.textContent = tr("viewFailed") + message;
    }

    post(m) {
      if (this.frame && this.frame.contentWindow) this.frame.contentWindow.postMessage({ jsonrpc: "2.0", ...m }, this.origin);
    }

    reply(id, result) { this.post({ id, result }); }
    error(id, code, message) { this.post({ id, error: { code, message } }); }
    notify(method, params) { this.post({ method, params }); }

    request(method, params, ms) {
      const id = "host-" + this.nextId++;
      return new Promise((resolve) => {
        const timer = setTimeout(() => { this.pending.delete(id); resolve(null); }, ms);
        this.pending.set(id, (m) => { clearTimeout(timer); resolve(m); });
        this.post({ id, method, params });
      });
    }

    // allow takes a token of the view's bucket: a flood is answered with
    // errors, not forwarded.
    allow() {
      const now = performance.now();
      this.tokens = Math.min(BURST, this.tokens + ((now - this.last) / 1000) * RATE);
      this.last = now;
      if (this.tokens < 1) return false;
      this.tokens -= 1;
      return true;
    }

    // receive handles one message the proxy relayed from the view.
    receive(m, size) {
      if (!m || typeof m !== "object" || Array.isArray(m) || m.jsonrpc !== "2.0") return;
      const hasId = typeof m.id === "string" || (typeof m.id === "number" && Number.isFinite(m.id));
      if (m.method === "ui/notifications/sandbox-proxy-ready") {
        if (!this.sentHTML) {
          this.sentHTML = true;
          this.notify("ui/notifications/sandbox-resource-ready", { html: this.resource.html, allow: this.resource.allow || undefined, csp: this.resource.csp });
        }
        return;
      }
      if (!this.allow()) {
        if (hasId) this.error(m.id, -32000, "too many messages from this view; slow down");
        return;
      }
      if (size > MAX_MESSAGE) {
        if (hasId) this.error(m.id, -32600, `the message is over the ${MAX_MESSAGE}-character limit`);
        return;
      }
      if (typeof m.method !== "string") {
        // An answer to one of the host's requests.
        const done = hasId && this.pending.get(m.id);
        if (done) { this.pending.delete(m.id); done(m); }
        return;
      }
      if (m.params !== undefined && (typeof m.params !== "object" || m.params === null || Array.isArray(m.params))) {
        if (hasId) this.error(m.id, -32602, "params must be an object");
        return;
      }
      const p = m.params || {};
      if (!hasId) { this.notification(m.method, p); return; }
      const handler = this.handlers[m.method];
      if (!handler) { this.error(m.id, -32601, `method not found: ${String(m.method).slice(0, 100)}`); return; }
      Promise.resolve().then(() => handler.call(this, p)).then(
        (result) => this.reply(m.id, result),
        (e) => this.error(m.id, e.code || -32000, String(e.message || e)),
      );
    }

    notification(method, p) {
      switch (method) {
        case "ui/notifications/initialized":
          this.initialized = true;
          this.box.dataset.state = "ready";
          this.toldContext = JSON.stringify({ displayMode: this.mode, containerDimensions: dimensions(this) });
          this.sendTool();
          break;
        case "ui/notifications/size-changed":
          if (Number.isFinite(p.height) && p.height >= 0) this.frame.style.height = Math.min(MAX_HEIGHT, Math.max(40, Math.ceil(p.height))) + "px";
          break;
        case "ui/notifications/request-teardown":
          this.teardown();
          break;
        case "notifications/message":
          console.debug("view log", this.step.server, p.data);
          break;
      }
    }

    // sendTool gives the view its tool's input, then its result once the
    // step ended. While the model still writes the call (the view was
    // opened by a "partial" event), it gives the input so far instead.
    sendTool() {
      if (!this.initialized) return;
      if (this.step.state === "partial") {
        if (this.cancelled && !this.sentResult) {
          this.sentResult = true;
          this.notify("ui/notifications/tool-cancelled", { reason: this.cancelled });
        } else if (!this.cancelled && this.partialInput && this.sentPartial !== this.partialInput) {
          this.sentPartial = this.partialInput;
          this.notify("ui/notifications/tool-input-partial", { arguments: this.partialInput });
        }
        return;
      }
      if (!this.sentInput) {
        this.sentInput = true;
        const input = this.step.input && typeof this.step.input === "object" && !Array.isArray(this.step.input) ? this.step.input : {};
        this.notify("ui/notifications/tool-input", { arguments: input });
      }
      if (this.sentResult) return;
      if (this.step.ui.result) {
        this.sentResult = true;
        if (this.step.state === "error") this.notify("ui/notifications/tool-cancelled", { reason: this.step.error || "the call failed" });
        else this.notify("ui/notifications/tool-result", this.step.ui.result);
      } else if (this.cancelled) {
        this.sentResult = true;
        this.notify("ui/notifications/tool-cancelled", { reason: this.cancelled });
      }
    }

    // turnEnded cancels the view's call when the turn ended (failed, was
    // stopped or lost its stream) before the call's result came.
    turnEnded(reason) {
      if (this.sentResult || this.step.ui.result) return;
      this.cancelled = String(reason || tr("turnEnded")).slice(0, 500);
      this.sendTool();
    }

    update(step) {
      this.step = step;
      this.sendTool();
    }

    // partial takes the call's input as the model has written it so far;
    // once the call started (or was cancelled) it is stale and dropped.
    partial(input) {
      if (this.step.state !== "partial" || this.cancelled) return;
      this.partialInput = input;
      this.sendTool();
    }

    // teardown tells the view it goes away and waits (a second at most)
    // for its answer; the view stays reachable meanwhile, so that its
    // answer, and what it does to save its state, still arrive.
    async teardown() {
      if (this.closing || !views.has(this)) return;
      this.closing = true;
      this.forget();
      if (this.initialized) await this.request("ui/resource-teardown", {}, 1000);
      views.delete(this);
      this.box.remove();
    }

    // forget stops watching the page for the view.
    forget() {
      this.observer?.disconnect();
      clearTimeout(this.resizeTimer);
      if (this.onKey) document.removeEventListener("keydown", this.onKey);
    }
  }

  View.prototype.handlers = {
    "ui/initialize"(p) {
      if (typeof p.protocolVersion !== "string") throw Object.assign(new Error("protocolVersion is missing"), { code: -32602 });
      return {
        protocolVersion: PROTOCOL,
        hostInfo: { name: "agentapp web", version: "0.1.0" },
        hostCapabilities: {
          openLinks: {}, serverTools: {}, serverResources: {}, logging: {},
          updateModelContext: { text: {}, structuredContent: {} },
          message: { text: {} },
          sandbox: { csp: this.resource.csp },
        },
        hostContext: hostContext(this),
      };
    },
    ping() { return {}; },
    async "tools/call"(p) {
      if (typeof p.name !== "string" || !p.name) throw Object.assign(new Error("name the tool to call"), { code: -32602 });
      const r = await this.api("call", { name: p.name, arguments: p.arguments ?? {} });
      if (!r.ok) throw new Error((await r.json().catch(() => ({}))).error || r.statusText);
      let result = null, failure = null;
      await readEvents(r.body, (event, data) => {
        switch (event) {
          case "approval": showApproval(this.a, { ...data, byNote: data.by === "view" ? tr("byView") : "" }); break;
          case "result": result = data.result; break;
          case "error": failure = data.message; break;
        }
      });
      if (failure || !result) throw new Error(failure || "the call ended without a result");
      return result;
    },
    async "resources/read"(p) {
      if (typeof p.uri !== "string" || !p.uri) throw Object.assign(new Error("name the resource to read"), { code: -32602 });
      const r = await this.api("read", { uri: p.uri });
      if (!r.ok) throw new Error((await r.json().catch(() => ({}))).error || r.statusText);
      return r.json();
    },
    "ui/message"(p) {
      const content = Array.isArray(p.content) ? p.content : [];
      const text = content.filter((c) => c && c.type === "text" && typeof c.text === "string").map((c) => c.text).join("\n").trim();
      if (p.role !== "user" || !text || text.length > 8000 || busy) return { isError: true };
      send(text);
      return {};
    },
    async "ui/update-model-context"(p) {
      const r = await this.api("context", { content: Array.isArray(p.content) ? p.content : undefined, structuredContent: p.structuredContent });
      if (!r.ok) throw new Error((await r.json().catch(() => ({}))).error || r.statusText);
      return {};
    },
    "ui/open-link"(p) {
      let u;
      try { u = new URL(p.url); } catch { return { isError: true }; }
      if (u.protocol !== "https:" && u.protocol !== "http:") return { isError: true };
      if (!window.confirm(tr("openLink") + "\n" + u.href)) return { isError: true };
      window.open(u.href, "_blank", "noopener,noreferrer");
      return {};
    },
    "ui/request-display-mode"(p) {
      if (typeof p.mode !== "string" || !["inline", "fullscreen", "pip"].includes(p.mode)) {
        throw Object.assign(new Error('mode must be "inline", "fullscreen" or "pip"'), { code: -32602 });
      }
      this.setMode(p.mode === "fullscreen" ? "fullscreen" : "inline");
      return { mode: this.mode };
    },
  };

  // Messages reach the page from the proxies; each is matched to its view
  // by the window that sent it and the sandbox origin.
  window.addEventListener("message", (e) => {
    for (const v of views) {
      if (v.frame && e.source === v.frame.contentWindow) {
        if (e.origin !== v.origin) return;
        let size = 0;
        try { size = JSON.stringify(e.data).length; } catch { return; }
        v.receive(e.data, size);
        return;
      }
    }
  });

  // The page going away tears its views down: the views are told, without
  // waiting for their answers (the page cannot wait).
  window.addEventListener("pagehide", () => {
    for (const v of views) {
      v.forget();
      if (v.initialized) v.post({ id: "host-" + v.nextId++, method: "ui/resource-teardown", params: {} });
    }
    views.clear();
  });

  return {
    // step renders (or updates) the view of a step whose tool links one.
    step(a, s) {
      if (!s.ui || !s.ui.resourceUri || !sessionId) return;
      a.views ||= new Map();
      const v = a.views.get(s.id);
      if (v) { v.update(s); return; }
      const nv = new View(a, s);
      a.views.set(s.id, nv);
      nv.load(sessionId).catch((e) => nv.fail(e.message));
    },
    // partial opens the view of a call the model is still writing (a
    // "partial" event), or gives the open one the input so far. The view
    // is the one the call's steps use later. Input for a call that
    // started, was cancelled or belongs to an ended answer is dropped, as
    // is input that is not an object.
    partial(a, p) {
      if (!p || typeof p.id !== "string" || !p.id || typeof p.tool !== "string" || typeof p.server !== "string") return;
      if (!p.ui || typeof p.ui.resourceUri !== "string" || !p.ui.resourceUri.startsWith("ui://") || !sessionId || a.ended) return;
      if (!p.input || typeof p.input !== "object" || Array.isArray(p.input)) return;
      a.views ||= new Map();
      const v = a.views.get(p.id);
      if (v) { v.partial(p.input); return; }
      a.earlyViews = (a.earlyViews || 0) + 1;
      if (a.earlyViews > MAX_EARLY_VIEWS) return;
      const nv = new View(a, { id: p.id, step: p.step, tool: p.tool, server: p.server, ui: { resourceUri: p.ui.resourceUri }, state: "partial" });
      a.views.set(p.id, nv);
      nv.partial(p.input);
      nv.load(sessionId).catch((e) => nv.fail(e.message));
    },
    // turnEnded tells the views of answer a whose call had not ended that
    // it was cancelled: the turn failed, was stopped or lost its stream.
    turnEnded(a, reason) {
      a.ended = true;
      for (const v of a.views?.values() || []) v.turnEnded(reason);
    },
    // teardownAll ends every view (a new conversation, another session).
    teardownAll() { return Promise.all([...views].map((v) => v.teardown())); },
    // languageChanged tells the views the new locale.
    languageChanged() { for (const v of views) if (v.initialized) v.notify("ui/notifications/host-context-changed", hostContext(v)); },
  };
})();
