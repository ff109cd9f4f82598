// The people in the conversation: when an operator takes it over, the
// customer's standing stream (GET /api/sessions/{id}/events) brings their
// arrival, their messages and their leaving, shown as a person in the
// conversation. EventSource resumes with Last-Event-ID after a drop, so
// what the operator wrote meanwhile arrives then. Texts are set with
// textContent only.
"use strict";

const people = (() => {
  const text = {
    zh: {
      operator: "人工客服", joined: "人工客服 {name} 已加入对话", left: "人工客服 {name} 已离开，助手继续为您服务",
      waiting: "正在为您转接人工客服，请稍候…", queued: "已发送给人工客服 {name}",
    },
    en: {
      operator: "Agent", joined: "{name} (a person) joined the conversation", left: "{name} left; the assistant is back",
      waiting: "Connecting you with a person, please wait…", queued: "Sent to {name}",
    },
  };
  const say = (key, name = "") => text[lang][key].replace("{name}", name);
  let source = null;

  // A note in the conversation, re-worded when the language changes.
  function note(key, name) {
    // Not class "note": budget.js re-words those by its own keys.
    const n = el("div", "people-note", say(key, name));
    n.dataset.key = key;
    n.dataset.name = name || "";
    $("#log").append(n);
    scrollDown();
    return n;
  }

  function message(name, content) {
    const box = el("div", "msg operator");
    const who = el("div", "who", `${say("operator")} · ${name}`);
    who.dataset.name = name;
    box.append(who, el("div", "text", content));
    $("#log").append(box);
    scrollDown();
  }

  // follow opens the session's standing stream after event after (the
  // transcript's newest; 0 for a new session), closing the previous one.
  function follow(id, after) {
    if (source) source.close();
    source = new EventSource(`/api/sessions/${encodeURIComponent(id)}/events?after=${encodeURIComponent(after || 0)}`);
    const on = (kind, fn) => source.addEventListener(kind, (e) => fn(JSON.parse(e.data)));
    on("operator_joined", (d) => note("joined", d.operator));
    on("operator_message", (d) => message(d.operator, d.content));
    on("operator_left", (d) => note("left", d.operator));
    on("state", (d) => { if (d.state === "waiting") note("waiting"); });
  }

  // queued: the message went to the operator holding the conversation;
  // the answer's box says so instead of an answer.
  function queued(a, d) {
    a.box.classList.add("queued");
    a.text.textContent = say("queued", d.operator || say("operator"));
    a.text.dataset.queued = d.operator || "";
  }

  function languageChanged() {
    document.querySelectorAll(".people-note").forEach((n) => { n.textContent = say(n.dataset.key, n.dataset.name); });
    document.querySelectorAll(".msg.operator .who").forEach((w) => { w.textContent = `${say("operator")} · ${w.dataset.name}`; });
    document.querySelectorAll("[data-queued]").forEach((q) => { q.textContent = say("queued", q.dataset.queued || say("operator")); });
  }

  return { follow, message, queued, languageChanged };
})();
