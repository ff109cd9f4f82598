// The operator console's live part: the conversations waiting for a person
// (oldest first) and those held, kept current by GET /operator/events; a
// held conversation's transcript, a box to write to the customer, and the
// hand-back with a note. Refunds, hand-off records and tickets below are
// re-read when events or a decision come, so there is no Refresh link.
// Every text from the server is set with textContent.
"use strict";

(() => {
  const $ = (sel, root = document) => root.querySelector(sel);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const fmt = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
  const when = (iso) => { const d = new Date(iso); return Number.isNaN(d.getTime()) || d.getFullYear() < 2000 ? "" : fmt.format(d); };
  const name = () => $("#op-name").value.trim() || "operator";

  async function call(path, body) {
    const r = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const out = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(out.error || String(r.status));
    return out;
  }

  function problem(msg) {
    const p = $("#console-problem");
    p.textContent = msg;
    p.hidden = !msg;
  }

  // page reads one state's conversations, a page at a time.
  async function page(state, after) {
    const q = new URLSearchParams({ state, limit: "50" });
    if (after) q.set("after", after);
    const r = await fetch(`/operator/conversations?${q}`);
    if (!r.ok) throw new Error((await r.json()).error);
    return r.json();
  }

  // transcript fills box with the session's last messages. Reads can
  // overlap (an event during a read): only the newest read's answer is
  // shown, so an older, shorter transcript never replaces a newer one.
  async function transcript(id, box) {
    const n = (box.reads = (box.reads || 0) + 1);
    const r = await fetch(`/api/sessions/${encodeURIComponent(id)}`);
    if (!r.ok) return;
    const s = await r.json();
    if (n !== box.reads) return;
    box.textContent = "";
    for (const m of s.messages.slice(-30)) {
      const who = m.role === "user" ? "客户 Customer" : m.role === "operator" ? `${m.operator}` : "助手 Assistant";
      const line = el("div", `line ${m.role}`);
      line.append(el("b", "", who + ": "), document.createTextNode(m.content));
      box.append(line);
    }
    box.scrollTop = box.scrollHeight;
  }

  function card(c) {
    const a = el("article", `card conv ${c.state}`);
    a.dataset.session = c.id;
    a.dataset.key = cardKey(c);
    const h = el("h3");
    h.append(el("span", "sid", c.id), " ", el("small", "", when(c.since)));
    a.append(h);
    if (c.state === "waiting") {
      const b = el("button", "take", "Take over / 接管");
      b.onclick = () => call(`/operator/sessions/${encodeURIComponent(c.id)}/takeover`, { name: name() }).then(refresh, (e) => problem(e.message));
      a.append(b);
      return a;
    }
    a.append(el("p", "meta", `held by / 接待人 ${c.operator}`));
    const log = el("div", "transcript");
    a.append(log);
    transcript(c.id, log);
    const f = el("form", "reply");
    const input = el("input");
    input.placeholder = "Message to the customer / 回复客户";
    input.maxLength = 4000;
    f.append(input, el("button", "send", "Send / 发送"));
    f.onsubmit = (e) => {
      e.preventDefault();
      const content = input.value.trim();
      if (!content) return;
      call(`/operator/sessions/${encodeURIComponent(c.id)}/messages`, { content, name: name() })
        .then(() => { input.value = ""; transcript(c.id, log); }, (err) => problem(err.message));
    };
    const back = el("form", "handback");
    const note = el("input");
    note.placeholder = "Note for the assistant / 给助手的备注";
    note.maxLength = 4000;
    back.append(note, el("button", "back", "Hand back / 交还助手"));
    back.onsubmit = (e) => {
      e.preventDefault();
      call(`/operator/sessions/${encodeURIComponent(c.id)}/handback`, { note: note.value.trim(), name: name() }).then(refresh, (err) => problem(err.message));
    };
    a.append(f, back);
    return a;
  }

  // cardKey is what a card shows that a refresh can change: a card whose
  // key is unchanged is kept as it is.
  const cardKey = (c) => `${c.state}|${c.operator || ""}|${c.since}`;

  // list fills a section with a state's first page, and a More button
  // for the next. Cards still current are kept, not rebuilt: rebuilding
  // a held card emptied its transcript until the new read came back, and
  // lost what the operator was typing in its boxes.
  async function list(state, root) {
    const first = await page(state);
    const kept = new Map();
    for (const a of root.querySelectorAll(":scope > article.conv")) kept.set(a.dataset.session + "\n" + a.dataset.key, a);
    const want = [];
    const add = (p, into) => {
      for (const c of p.conversations) {
        const k = c.id + "\n" + cardKey(c);
        into.push(kept.get(k) || card(c));
        kept.delete(k);
      }
      if (p.next) {
        const more = el("button", "more", "More / 更多");
        more.onclick = async () => {
          const next = [];
          add(await page(state, p.next), next);
          more.replaceWith(...next);
        };
        into.push(more);
      }
    };
    add(first, want);
    if (first.conversations.length === 0) want.push(el("p", "empty", state === "waiting" ? "No one is waiting. / 暂无等待。" : "None held. / 暂无接待中的对话。"));
    // Moving a node out and back blurs it: the children are replaced only
    // when the cards (not counting More and the empty note) changed.
    const cards = (nodes) => nodes.filter((n) => n.matches("article.conv"));
    const now = cards([...root.children]);
    const next = cards(want);
    if (now.length !== next.length || now.some((n, i) => n !== next[i]) || root.children.length !== want.length) {
      root.replaceChildren(...want);
    }
    return first.conversations.length;
  }

  // records re-reads the server-rendered sections (refunds, hand-offs,
  // tickets), unless the operator is typing in one.
  async function records() {
    if (document.activeElement && document.activeElement.closest("section.records")) return;
    const r = await fetch("/operator", { headers: { Accept: "text/html" } });
    if (!r.ok) return;
    const doc = new DOMParser().parseFromString(await r.text(), "text/html");
    for (const s of doc.querySelectorAll("section.records")) {
      const here = document.getElementById(s.id);
      if (here) here.replaceWith(document.importNode(s, true));
    }
    for (const t of document.querySelectorAll("section.records time[datetime]")) {
      const v = when(t.getAttribute("datetime"));
      if (v) t.textContent = v;
    }
  }

  let pending = null;
  function refresh() {
    clearTimeout(pending);
    pending = setTimeout(async () => {
      try {
        const [w, h] = await Promise.all([list("waiting", $("#waiting")), list("human", $("#held"))]);
        $("#waiting-count").textContent = String(w);
        $("#held-count").textContent = String(h);
        problem("");
      } catch (e) {
        problem(e.message);
      }
      records();
    }, 100);
  }

  document.addEventListener("DOMContentLoaded", () => {
    $("#op-name").value = localStorage.getItem("operatorName") || "";
    $("#op-name").onchange = () => localStorage.setItem("operatorName", $("#op-name").value.trim());
    refresh();
    const events = new EventSource("/operator/events");
    events.onmessage = refresh;
    for (const kind of ["state", "customer_message", "operator_joined", "operator_message", "operator_left"]) {
      events.addEventListener(kind, (e) => {
        const d = JSON.parse(e.data);
        if (kind === "customer_message" || kind === "operator_message") {
          const log = document.querySelector(`article.conv[data-session="${CSS.escape(d.session)}"] .transcript`);
          if (log) { transcript(d.session, log); return; }
        }
        refresh();
      });
    }
    // Refund decisions made elsewhere (another operator, another replica)
    // write no conversation event: the records are re-read every 5 s.
    setInterval(records, 5000);
  });
})();
