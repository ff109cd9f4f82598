// The chat page: plain JavaScript, no library. Every text from the server
// is set with textContent, never parsed as HTML.
"use strict";

const messages = {
  zh: {
    title: "客服助手", new: "新对话", compact: "压缩", send: "发送", placeholder: "输入问题，例如：订单 A-1024 到哪了？",
    sources: "来源", approve: "需要您的确认：调用", allow: "允许一次", allowSession: "本次对话中都允许", allowProject: "在此项目中始终允许", deny: "拒绝",
    allowed: "已允许", allowedSession: "已允许（本次对话中不再询问）", allowedProject: "已允许（此项目中不再询问）", denied: "已拒绝", timeout: "超时未确认，已拒绝", error: "出错了：",
    hookFailed: "钩子出错（本轮继续）：",
    thinking: "思考中…", welcome: "您好！我可以查询订单、创建售后工单、转人工，并回答公司制度问题。",
  },
  en: {
    title: "Customer service", new: "New chat", compact: "Compact", send: "Send", placeholder: "Ask, e.g. where is order A-1024?",
    sources: "Sources", approve: "Your approval is needed to call", allow: "Allow once", allowSession: "Always this session", allowProject: "Always for this project", deny: "Deny",
    allowed: "Allowed", allowedSession: "Allowed for the rest of this session", allowedProject: "Allowed in this project from now on", denied: "Denied", timeout: "No answer in time: denied", error: "Error: ",
    hookFailed: "A hook failed (the turn went on): ",
    thinking: "Thinking…", welcome: "Hello! I can look up orders, open after-sales tickets, hand you over to a person and answer policy questions.",
  },
};

// The language is the one chosen last on this page, else the browser's.
let lang = localStorage.getItem("lang") || ((navigator.language || "zh").toLowerCase().startsWith("zh") ? "zh" : "en");
let sessionId = null;
let busy = false;

const $ = (sel) => document.querySelector(sel);
const t = (key) => messages[lang][key];

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function applyLang() {
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  document.querySelectorAll("[data-i18n]").forEach((e) => { e.textContent = t(e.dataset.i18n); });
  document.querySelectorAll("[data-i18n-placeholder]").forEach((e) => { e.placeholder = t(e.dataset.i18nPlaceholder); });
  $("#lang").textContent = lang === "zh" ? "EN" : "中文";
  document.querySelectorAll(".welcome").forEach((e) => { e.textContent = t("welcome"); });
  budget.languageChanged(); // budget.js
  people.languageChanged(); // people.js
}

function scrollDown() { window.scrollTo(0, document.body.scrollHeight); }

function addUser(text) {
  $("#log").append(el("div", "msg user", text));
  scrollDown();
}

// An assistant message: its tool lines, its text, its sources.
function addAssistant() {
  const box = el("div", "msg assistant");
  const steps = el("ul", "steps");
  const text = el("div", "text");
  box.append(steps, text);
  $("#log").append(box);
  scrollDown();
  return { box, steps, text, stepEls: new Map() };
}

function showStep(a, s) {
  let li = a.stepEls.get(s.id);
  if (!li) {
    li = el("li", "step");
    li.dataset.tool = s.tool;
    a.stepEls.set(s.id, li);
    a.steps.append(li);
  }
  li.dataset.state = s.state;
  li.textContent = "";
  li.append(el("span", "tool", s.tool), el("span", "server", " · " + (s.server || "?")));
  if (s.error) li.title = s.error;
  if (s.cut) li.append(el("span", "cut", " ✂ " + s.cut.notice));
  apps.step(a, s); // apps.js: the tool's view, if it links one
}

// A task's status on its step's line, until the step ends (showStep
// redraws the line).
function showStatus(a, s) {
  const li = a.stepEls.get(s.id);
  if (!li) return;
  let span = li.querySelector(".status");
  if (!span) {
    span = el("span", "status");
    li.append(span);
  }
  span.textContent = " · " + s.status + (s.message ? ": " + s.message : "");
}

function showSources(a, sources) {
  if (!sources || sources.length === 0) return;
  const ol = el("ul", "sources");
  ol.append(el("li", "head", t("sources")));
  for (const s of sources) ol.append(el("li", "source", `[${[s.no, ...(s.also || [])].join("][")}] ${s.title} (${s.docId})`));
  a.box.append(ol);
}

function showApproval(a, ev) {
  let card = a.box.querySelector(`[data-approval="${CSS.escape(ev.id)}"]`);
  if (!card) {
    card = el("div", "approval");
    card.dataset.approval = ev.id;
    // ev.by is a note of its own (apps.js), not part of the server's name.
    card.append(el("div", "question", `${t("approve")} ${ev.tool}${ev.server ? ` (${ev.server})` : ""}${ev.byNote || ""}`), el("code", "", ev.preview));
    const buttons = el("div", "choices");
    const add = (cls, label, approved, remember) => {
      const b = el("button", cls, t(label));
      b.type = "button";
      b.onclick = () => answer(card, ev.id, approved, remember);
      buttons.append(b);
    };
    add("allow", "allow", true, "");
    const remember = ev.remember || [];
    if (remember.includes("session")) add("allow always", "allowSession", true, "session");
    if (remember.includes("project")) add("allow always", "allowProject", true, "project");
    add("deny", "deny", false, "");
    card.append(buttons);
    a.box.insertBefore(card, a.text);
  }
  if (ev.decision !== "pending") decided(card, ev.decision, ev.remembered);
  scrollDown();
}

// remembered is "session" or "project" when an Allow holds beyond this
// call; the label says so.
function decided(card, decision, remembered) {
  card.querySelectorAll(".choices").forEach((b) => b.remove());
  const key = decision === "allowed" && remembered ? decision + remembered[0].toUpperCase() + remembered.slice(1) : decision;
  let d = card.querySelector(".decision");
  if (!d) { d = el("span", "decision"); card.append(d); }
  d.textContent = t(key) || decision;
  card.dataset.decision = decision;
}

async function answer(card, id, approved, remember) {
  card.querySelectorAll("button").forEach((b) => { b.disabled = true; });
  const body = remember ? { approved, remember } : { approved };
  const r = await fetch(`/api/sessions/${encodeURIComponent(sessionId)}/approvals/${encodeURIComponent(id)}`, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
  if (r.ok) decided(card, approved ? "allowed" : "denied", remember);
}

// showHookFailure adds a quiet line to answer a: a hook failed without
// blocking. The server's words stay as they are, set as text.
function showHookFailure(a, message) {
  const div = el("div", "hook-note");
  div.append(el("span", "", t("hookFailed")), el("span", "", message));
  div.firstChild.dataset.i18n = "hookFailed";
  a.box.append(div);
  scrollDown();
}

function showError(a, message) {
  a.box.classList.add("error");
  a.text.textContent = t("error") + message;
}

async function newSession() {
  const r = await fetch("/api/sessions", { method: "POST" });
  if (!r.ok) throw new Error((await r.json()).error);
  sessionId = (await r.json()).id;
  people.follow(sessionId, 0);
}

// Reads a text/event-stream body and calls on(event, data) per event.
async function readEvents(body, on) {
  const reader = body.getReader();
  const dec = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      let event = "message", data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) event = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      on(event, JSON.parse(data));
    }
  }
}

async function send(text) {
  busy = true;
  $("#send").disabled = true;
  addUser(text);
  const a = addAssistant();
  a.text.textContent = t("thinking");
  let streamed = "";
  let failure = "";
  try {
    if (!sessionId) await newSession();
    let r = await post(text);
    if (r.status === 404) { await newSession(); r = await post(text); }
    if (!r.ok) { showError(a, (await r.json()).error); return; }
    await readEvents(r.body, (event, data) => {
      switch (event) {
        case "step": showStep(a, data); break;
        case "partial": apps.partial(a, data); break; // apps.js: a view's input while the model writes it
        case "status": showStatus(a, data); break;
        case "token": streamed += data.text; a.text.textContent = streamed; scrollDown(); break;
        case "approval": showApproval(a, data); break;
        case "queued": people.queued(a, data); break; // an operator holds the conversation
        case "fold": budget.fold(data); break;
        case "hook": showHookFailure(a, data.message); break;
        case "done": if (data.queued) { a.box.dataset.done = "1"; break; } a.text.textContent = data.answer; showSources(a, data.sources); budget.turnUsage(a, data.usage); budget.left(data.budget); a.box.dataset.done = "1"; break;
        case "error": failure = data.message; showError(a, data.message); break;
      }
    });
  } catch (e) {
    failure = e.message;
    showError(a, e.message);
  } finally {
    // A call still running when the turn ended (failed, stopped, stream
    // lost) was cancelled: its view is told so.
    apps.turnEnded(a, failure);
    busy = false;
    $("#send").disabled = false;
    scrollDown();
  }
}

function post(text) {
  return fetch(`/api/sessions/${encodeURIComponent(sessionId)}/messages`, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ content: text }),
  });
}

async function restore() {
  const r = await fetch("/api/sessions/current");
  // 204: no conversation yet (a first visit); it starts with the first message.
  if (r.status !== 200) { $("#log").append(el("div", "msg assistant welcome", t("welcome"))); return; }
  const s = await r.json();
  sessionId = s.id;
  // The greeting opens every conversation, a restored one too.
  $("#log").append(el("div", "msg assistant welcome", t("welcome")));
  people.follow(sessionId, s.events);
  const entries = [];
  for (const m of s.messages) {
    if (m.role === "user") { addUser(m.content); entries.push($("#log").lastElementChild); continue; }
    if (m.role === "operator") { people.message(m.operator, m.content); entries.push($("#log").lastElementChild); continue; }
    const a = addAssistant();
    entries.push(a.box);
    for (const st of m.steps || []) showStep(a, st);
    a.text.textContent = m.content;
    showSources(a, m.sources);
    // The answer's token line as it was drawn live; restored sets the
    // session's totals from the server after.
    budget.turnUsage(a, m.usage);
    a.box.dataset.done = "1";
  }
  budget.restored(s, entries);
}

document.addEventListener("DOMContentLoaded", () => {
  applyLang();
  $("#lang").onclick = () => { lang = lang === "zh" ? "en" : "zh"; localStorage.setItem("lang", lang); applyLang(); apps.languageChanged(); };
  $("#new").onclick = async () => { await apps.teardownAll(); await newSession(); budget.reset(); $("#log").textContent = ""; $("#log").append(el("div", "msg assistant welcome", t("welcome"))); };
  $("#ask").onsubmit = (e) => {
    e.preventDefault();
    const text = $("#input").value.trim();
    if (!text || busy) return;
    $("#input").value = "";
    if (text === "/compact") { compact(); return; } // as in the terminal chat
    send(text);
  };
  $("#input").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); $("#ask").requestSubmit(); }
  });
  $("#compact").onclick = () => { if (!busy) compact(); };
  restore();
});

// compact runs /compact with the send button held, like a turn.
async function compact() {
  busy = true;
  $("#send").disabled = true;
  try {
    await budget.compact();
  } finally {
    busy = false;
    $("#send").disabled = false;
  }
}
