// The context budget on the page: where older turns were folded into a
// summary for the model (the transcript stays whole), what each answer and
// the whole session cost in tokens, and /compact. Every text from the
// server is set with textContent, never parsed as HTML.
"use strict";

const budget = (() => {
  const texts = {
    zh: {
      fold: "较早的对话已为模型压缩成摘要（{n} 条消息，约 {t} tokens → 约 {s} tokens）；完整记录仍保留在这里",
      foldNoTokens: "较早的对话已为模型压缩成摘要（{n} 条消息 → 约 {s} tokens）；完整记录仍保留在这里",
      showSummary: "查看摘要", hideSummary: "收起摘要",
      turn: "{e}输入 {in} · 输出 {out} tokens", session: "本会话 {e}{total} tokens",
      sessionTitle: "输入 {in} · 输出 {out} tokens，{calls} 次模型调用",
      estimated: "≈", nothing: "没有可压缩的较早对话：最新一轮总是原样保留。", compactFailed: "压缩失败：",
      noSession: "还没有对话可压缩。",
      left: "剩余 {tokens} tokens", leftCost: "剩余费用 {cost}", leftBoth: "剩余 {tokens} tokens · 费用 {cost}", leftTitle: "本会话的预算（由服务设置）：",
      tokensCap: "{tokens} tokens", costCap: "费用 {cost}",
    },
    en: {
      fold: "Earlier turns were summarized for the model ({n} messages, ~{t} tokens → ~{s} tokens); the full transcript stays here",
      foldNoTokens: "Earlier turns were summarized for the model ({n} messages → ~{s} tokens); the full transcript stays here",
      showSummary: "Show summary", hideSummary: "Hide summary",
      turn: "{e}in {in} · out {out} tokens", session: "Session: {e}{total} tokens",
      sessionTitle: "in {in} · out {out} tokens, {calls} model calls",
      estimated: "≈", nothing: "Nothing earlier to compact: the latest turn always stays as it is.", compactFailed: "Compacting failed: ",
      noSession: "There is no conversation to compact yet.",
      left: "{tokens} tokens left", leftCost: "cost {cost} left", leftBoth: "Left {tokens} tokens, {cost}", leftTitle: "This session's budget (set by the service): ",
      tokensCap: "{tokens} tokens", costCap: "cost {cost}",
    },
  };
  const num = (n) => Number(n || 0).toLocaleString(lang === "zh" ? "zh-CN" : "en-US");
  // A cost keeps its small digits: a session may cost a fraction of a cent.
  const money = (n) => Number(n || 0).toLocaleString(lang === "zh" ? "zh-CN" : "en-US", { minimumFractionDigits: 2, maximumFractionDigits: n >= 1 ? 2 : 4 });
  const tr = (key, args = {}) => texts[lang][key].replace(/\{(\w+)\}/g, (_, k) => (k === "e" ? (args.e ? texts[lang].estimated : "") : k === "cost" ? money(args[k]) : num(args[k])));

  // The fold so far: the summary is cumulative, so one mark shows all.
  let fold = null; // {messages, tokens, summaryTokens, summary}
  // The session's totals: input, output, calls, estimated.
  let total = { in: 0, out: 0, calls: 0, estimated: false };
  // What the session may still use, when the service has caps:
  // {tokens: {cap, left}, cost: {cap, left}}; null without caps.
  let left = null;

  function renderMark(mark) {
    const f = mark.fold;
    const text = mark.querySelector(".fold-text");
    text.textContent = "✂ " + tr(f.tokens > 0 ? "fold" : "foldNoTokens", { n: f.messages, t: f.tokens, s: f.summaryTokens });
    const open = !mark.querySelector(".fold-summary").hidden;
    mark.querySelector(".fold-toggle").textContent = tr(open ? "hideSummary" : "showSummary");
  }

  // mark places the one fold mark before the element before (null: at
  // the end of the log).
  function mark(before) {
    document.querySelectorAll("#log .fold-mark").forEach((e) => e.remove());
    const box = el("div", "fold-mark");
    box.fold = { ...fold };
    const toggle = el("button", "fold-toggle");
    toggle.type = "button";
    const summary = el("pre", "fold-summary", fold.summary || "");
    summary.hidden = true;
    toggle.onclick = () => { summary.hidden = !summary.hidden; renderMark(box); };
    box.append(el("span", "fold-text"), " ", toggle, summary);
    renderMark(box);
    $("#log").insertBefore(box, before);
  }

  // users returns the user messages shown, oldest first.
  const users = () => [...document.querySelectorAll("#log .msg.user")];

  // add counts a fold into the cumulative one and marks it before the
  // user message that starts the verbatim part: keptTurns questions
  // before the latest.
  function add(messages, tokens, summaryTokens, summary, keptTurns) {
    fold = {
      messages: (fold?.messages || 0) + messages,
      // An unknown earlier size makes the sum unknown too.
      tokens: fold && !(fold.tokens > 0) ? 0 : (fold?.tokens || 0) + tokens,
      summaryTokens, summary,
    };
    const u = users();
    mark(u[u.length - 1 - keptTurns] || u[0] || null);
  }

  function renderTotal() {
    const e = $("#usage-total");
    if (!e) return;
    if (total.calls === 0) { e.textContent = ""; e.title = ""; renderLeft(); return; }
    e.textContent = tr("session", { e: total.estimated, total: total.in + total.out });
    e.title = tr("sessionTitle", { in: total.in, out: total.out, calls: total.calls });
    renderLeft();
  }

  // renderLeft shows the budget left after the totals; the line never
  // wraps (the header keeps its height), the full caps are in its title.
  function renderLeft() {
    const e = $("#budget-left");
    if (!e) return;
    const caps = [];
    if (left?.tokens) caps.push(tr("tokensCap", { tokens: left.tokens.cap }));
    if (left?.cost) caps.push(tr("costCap", { cost: left.cost.cap }));
    const key = left?.tokens ? (left?.cost ? "leftBoth" : "left") : (left?.cost ? "leftCost" : "");
    e.textContent = key ? tr(key, { tokens: left.tokens?.left, cost: left.cost?.left }) : "";
    e.title = caps.length ? tr("leftTitle") + caps.join(", ") : "";
  }

  function setLeft(b) { left = b || null; renderLeft(); }

  function setTotal(u) {
    total = { in: u?.inputTokens || 0, out: u?.outputTokens || 0, calls: u?.calls || 0, estimated: (u?.estimatedCalls || 0) > 0 };
    renderTotal();
  }

  function renderUsage(div) {
    div.textContent = tr("turn", { e: div.usage.estimated, in: div.usage.inputTokens, out: div.usage.outputTokens });
  }

  // note shows a quiet line at the end of the log: the text of key, and
  // detail after it (the server's words, not translated).
  function note(key, detail = "") {
    const div = el("div", "note", tr(key) + detail);
    div.dataset.key = key;
    div.dataset.detail = detail;
    $("#log").append(div);
    scrollDown();
  }

  return {
    // fold is the "fold" event of the running turn.
    fold(ev) { add(ev.messages, ev.tokens, ev.summaryTokens, ev.summary, ev.keptTurns || 0); },

    // turnUsage shows the turn's tokens under answer a and adds them to
    // the session's totals.
    turnUsage(a, u) {
      if (!u || !(u.inputTokens || u.outputTokens)) return;
      const div = el("div", "usage");
      div.usage = u;
      renderUsage(div);
      a.box.append(div);
      total.in += u.inputTokens || 0;
      total.out += u.outputTokens || 0;
      total.calls += (u.calls || []).length || 1;
      total.estimated ||= !!u.estimated;
      renderTotal();
    },

    // restored shows a reloaded session's fold and totals: entries are
    // the messages' elements in order.
    restored(s, entries) {
      setTotal(s.usage);
      setLeft(s.budget);
      fold = null;
      if (!s.fold) return;
      fold = { messages: s.fold.messages, tokens: s.fold.tokens, summaryTokens: s.fold.summaryTokens, summary: s.fold.summary };
      mark(entries[s.fold.before] || null);
    },

    reset() { fold = null; left = null; setTotal(null); },

    // left is the budget left of the "done" event (nothing without caps).
    left(b) { setLeft(b); },

    // compact folds all but the latest turn now (the chat's /compact).
    async compact() {
      if (!sessionId) { note("noSession"); return; }
      const r = await fetch(`/api/sessions/${encodeURIComponent(sessionId)}/compact`, { method: "POST" });
      const out = await r.json().catch(() => ({ error: r.statusText }));
      if (!r.ok) { note("compactFailed", String(out.error || r.status)); return; }
      setTotal(out.usage);
      if (!out.folded) { note("nothing"); return; }
      add(out.folded, out.tokens, out.summaryTokens, out.summary, 0);
    },

    languageChanged() {
      document.querySelectorAll("#log .fold-mark").forEach(renderMark);
      document.querySelectorAll("#log .usage").forEach(renderUsage);
      document.querySelectorAll("#log .note").forEach((e) => { e.textContent = tr(e.dataset.key) + e.dataset.detail; });
      renderTotal();
    },
  };
})();
