// What every dealer display shares (the card table's app.js, the wheel table's wheel.js): the
// state pushed over server-sent events (/api/stream), the screen that says it is not live,
// big text that fits its box, and the supervisor panel (PIN, actions, what the table decided).
// Plain JavaScript, no build step, nothing loaded from the internet (the dealer PC may be offline).
// Text from the server is never parsed as HTML: it goes in with textContent, or through esc().
"use strict";

const $ = (sel) => document.querySelector(sel);
const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const esc = (value) => String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]);
const num = (value) => (Number.isFinite(Number(value)) ? Number(value) : 0);

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props || {});
  node.append(...children.filter((c) => c !== null && c !== undefined && c !== ""));
  return node;
}
const STALE_MS = 12000;  // the server pings every 5 s; silence this long means a dead link
const PANEL_IDLE_MS = 120000;  // the supervisor panel locks itself after two idle minutes

let lastMessageAt = 0;
let source = null;

// `render` gets each State document the server pushes.
function connect(render) {
  source = new EventSource("/api/stream");
  source.addEventListener("state", (e) => {
    lastMessageAt = Date.now();
    setOffline(false);
    render(JSON.parse(e.data));
  });
  source.addEventListener("ping", () => { lastMessageAt = Date.now(); setOffline(false); });
  source.onerror = () => setOffline(true);  // EventSource reconnects by itself
}

// Disconnected: the whole screen says so (a stale prompt must not be dealt from).
function setOffline(offline) {
  const box = $("#offline");
  if (offline && box.hidden) {
    $('[data-testid="offline-since"]').textContent = lastMessageAt
      ? `(last update at ${new Date(lastMessageAt).toLocaleTimeString()})` : "";
  }
  box.hidden = !offline;
  document.body.classList.toggle("offline-now", offline);
}
setInterval(() => { if (lastMessageAt && Date.now() - lastMessageAt > STALE_MS) setOffline(true); }, 1000);

// ------------------------------------------------------------------ big text that fits
// A prompt is shown in phrases: a line break is allowed between them (after a colon, before a
// bracket) and between words, never inside "7 to 4"; the text takes the largest size at which
// it fits its box without breaking a word.
const KEEP_TOGETHER = /(\d+) to (\d+)/gi;
function phrases(text) {
  const parts = String(text).split(/(?<=:)\s+|\s+(?=\()/);
  return parts.map((part) => part.replace(KEEP_TOGETHER, "$1\u00a0to\u00a0$2"));
}

function setPhrases(node, text) {
  const children = [];
  phrases(text).forEach((part, i) => {
    if (i) children.push(" ");
    children.push(el("span", { className: "phrase", textContent: part }));
  });
  node.replaceChildren(...children);
  node.dataset.text = text;
}

function fitText(node, largest, smallest, oneLineSmallest = 48) {
  const fits = () => node.scrollHeight <= node.clientHeight + 1 && node.scrollWidth <= node.clientWidth + 1;
  // First each phrase on one line, if that is still big; else words wrap inside phrases.
  node.classList.add("nowrap");
  for (let size = largest; size >= oneLineSmallest; size -= 2) {
    node.style.fontSize = size + "px";
    if (fits()) return size;
  }
  node.classList.remove("nowrap");
  for (let size = largest; size >= smallest; size -= 2) {
    node.style.fontSize = size + "px";
    if (fits()) return size;
  }
  return smallest;
}


const words = (id) => String(id).replace(/_/g, " ");


// ------------------------------------------------------------------ supervisor panel
// The PIN is kept in this page's memory only while the panel is unlocked; the server checks
// it again for every action and the table journals each action with the supervisor's id.
let credentials = null;
let idleTimer = null;

// The panel's main message says what the table decided: green done, red refused or failed,
// amber queued (handed over, not yet journalled); the headline says it in words too.
// ``content``: a string, or { headline, why, who } for an action's outcome.
function message(content, kind) {
  const box = $("#panel-message");
  if (typeof content === "string") {
    box.textContent = content;
  } else {
    box.replaceChildren(...[
      el("span", { className: "headline", textContent: content.headline }),
      content.why ? " " : null, content.why ? el("span", { className: "why", textContent: content.why }) : null,
      content.who ? " " : null, content.who ? el("span", { className: "who-did", textContent: content.who }) : null,
    ].filter((part) => part !== null));
  }
  box.className = "panel-message " + (kind === true ? "good" : kind === false ? "bad" : kind);
  box.dataset.kind = kind === true ? "good" : kind === false ? "bad" : kind;
}

function lockPanel() {
  credentials = null;
  $("#actions").hidden = true;
  $("#login").hidden = false;
  $("#sup-pin").value = "";
}

function touchPanel() {
  clearTimeout(idleTimer);
  idleTimer = setTimeout(() => { lockPanel(); message("Panel locked after two idle minutes", "pending"); }, PANEL_IDLE_MS);
}

// Resolves to { status, data } for the answers the caller handles (2xx and those in `handled`),
// throws an Error carrying the server's reason for any other.
async function post(path, body, handled = []) {
  const response = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  let data = {};
  try { data = await response.json(); } catch (e) { /* no body */ }
  if (!response.ok && !handled.includes(response.status)) {
    const detail = typeof data.detail === "string" ? data.detail : `refused (${response.status})`;
    throw new Error(detail);
  }
  return { status: response.status, data };
}

function outcomeMessage(label, who, outcome) {
  if (outcome.status === "queued") {
    return [{ headline: `QUEUED: ${label}`, why: "Not yet journalled: the table applies it in order; it is lost if the controller stops first." }, "warn"];
  }
  if (!outcome.accepted) {
    return [{ headline: `REFUSED: ${label}`, why: `The table refused it: ${outcome.message}`, who: `Journalled as tried by ${who}.` }, false];
  }
  return [{ headline: `DONE: ${label}`, why: outcome.message || "", who: `Journalled as done by ${who}.` }, true];
}

// The panel's frame is every display's: a page holds only <div id="panel"><div class="panel-box">
// with its own actions in <div id="actions"> (buttons of class "act") and what follows them;
// the head, the login form, who is logged in and the message box are put in here (constant
// markup: nothing from the server).
function mountPanel() {
  $("#panel .panel-box").insertAdjacentHTML("afterbegin", `
    <div class="panel-head"><b>Supervisor</b>
      <button id="close-panel" data-testid="close-panel">Close</button></div>
    <form id="login" data-testid="login" autocomplete="off">
      <label>Supervisor id <input id="sup-id" name="supervisor" data-testid="sup-id" required></label>
      <label>PIN <input id="sup-pin" name="pin" type="password" autocomplete="off" inputmode="numeric" data-testid="sup-pin" required></label>
      <button type="submit" data-testid="unlock">Unlock</button>
    </form>`);
  const actions = $("#actions");
  actions.insertAdjacentHTML("afterbegin", `
    <div class="who"><span>Unlocked for <b id="who" data-testid="who"></b></span>
      <button id="lock" data-testid="lock">Lock</button></div>`);
  actions.insertAdjacentHTML("afterend",
    '<div id="panel-message" class="panel-message" data-testid="panel-message" role="status"></div>');
}
mountPanel();

$("#open-panel").addEventListener("click", () => { $("#panel").hidden = false; touchPanel(); });
$("#close-panel").addEventListener("click", () => { $("#panel").hidden = true; });
$("#lock").addEventListener("click", () => { lockPanel(); message("Panel locked", "pending"); });

$("#login").addEventListener("submit", async (e) => {
  e.preventDefault();
  const body = { supervisor: $("#sup-id").value.trim(), pin: $("#sup-pin").value };
  message("Checking...", "pending");
  try {
    await post("/api/supervisor/login", body);
    credentials = body;
    $("#who").textContent = body.supervisor;
    $("#login").hidden = true;
    $("#actions").hidden = false;
    message("Unlocked", true);
    touchPanel();
  } catch (err) {
    lockPanel();
    message({ headline: "NOT UNLOCKED", why: err.message }, false);
  }
});

// The action buttons (class "act", data-action): `confirmFor` maps an action to the question
// asked before it is sent; `fields(action)` gives the body's other fields (reason, card).
function startActions({ confirmFor = {}, fields = () => ({}) } = {}) {
  for (const button of document.querySelectorAll(".act")) {
    button.addEventListener("click", async () => {
      if (!credentials) return;
      const action = button.dataset.action;
      if (confirmFor[action] && !confirm(confirmFor[action])) return;
      touchPanel();
      const body = { ...credentials, action, ...fields(action) };
      message("Sending...", "pending");
      try {
        const answer = await post("/api/supervisor/action", body, [409]);
        message(...outcomeMessage(button.textContent, credentials.supervisor, answer.data));
      } catch (err) {
        message({ headline: `NOT DONE: ${button.textContent}`, why: err.message }, false);
      }
    });
  }
}
