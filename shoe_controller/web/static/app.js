// Dealer display: renders the State document pushed over server-sent events (/api/stream).
// Plain JavaScript, no build step, nothing loaded from the internet (the dealer PC may be offline).
// Text from the server (bet names from a profile, card codes, reasons) is never parsed as HTML:
// it goes in with textContent, or through esc() inside the SVG markup of the roads.
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
const SUITS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
const COLORS = { B: "#e5383b", P: "#2f7de1", T: "#2fb344", red: "#e5383b", blue: "#2f7de1" };
const STALE_MS = 12000;  // the server pings every 5 s; silence this long means a dead link
const PANEL_IDLE_MS = 120000;  // the supervisor panel locks itself after two idle minutes

let lastMessageAt = 0;
let source = null;

function connect() {
  source = new EventSource("/api/stream");
  source.addEventListener("state", (e) => {
    lastMessageAt = Date.now();
    setOffline(false);
    render(JSON.parse(e.data));
  });
  source.addEventListener("ping", () => { lastMessageAt = Date.now(); setOffline(false); });
  source.onerror = () => setOffline(true);  // EventSource reconnects by itself
}

function setOffline(offline) { $("#offline").hidden = !offline; }
setInterval(() => { if (lastMessageAt && Date.now() - lastMessageAt > STALE_MS) setOffline(true); }, 1000);

// ------------------------------------------------------------------ rendering
function render(s) {
  document.body.dataset.version = s.version;
  const v = s.view;
  $('[data-testid="profile"]').textContent = s.profile;
  $('[data-testid="shoe"]').textContent = s.stats.shoe || "-";
  $('[data-testid="round-number"]').textContent = v.round || "-";
  $('[data-testid="cards-left"]').textContent = s.stats.cards_left ?? "-";
  $('[data-testid="exit"]').textContent = v.exit_locked ? "exit locked" : "exit open";

  const prompt = $("#prompt");
  prompt.textContent = v.prompt;
  prompt.className = "prompt level-" + v.level + (v.prompt.length > 20 ? " long" : "");
  const error = v.latched.length ? v.latched[0] : null;
  $("#detail").textContent = error ? "" : v.detail;
  $("#error").hidden = !error;
  if (error) {
    $('[data-testid="error-remedy"]').textContent = error.remedy;
    const more = v.latched.length > 1 ? ` (+${v.latched.length - 1} more)` : "";
    $('[data-testid="error-detail"]').textContent = (error.detail || "") + more;
  }
  renderRound(s.round, s.previous_round, v);
  renderStats(s.stats);
  renderRoads(s.roads);
  renderOdds(s.odds);
  renderRecall(s.recall);
  renderSupervisorLog(s.supervisor_log);
}

function cardElement(code, third) {
  const suit = code.slice(-1), rank = code.slice(0, -1);
  const card = el("div", { className: "card" + (suit === "H" || suit === "D" ? " red" : "") + (third ? " third" : "") },
    el("span", { className: "rank", textContent: rank === "T" ? "10" : rank }),
    el("span", { className: "suit", textContent: SUITS[suit] || suit }));
  card.dataset.card = code;
  return card;
}

function renderHand(name, hand, due) {
  const box = $(`[data-testid="${name}-cards"]`);
  const codes = hand ? hand.cards : [];
  if (box.dataset.cards !== codes.join(" ")) {
    box.replaceChildren(...codes.map((c, i) => cardElement(c, i === 2)));
    box.dataset.cards = codes.join(" ");
  }
  $(`[data-testid="${name}-total"]`).textContent = hand && hand.total !== null ? hand.total : "";
  $(`[data-testid="${name}-hand"]`).classList.toggle("due", due === name);
}

function resultText(r) {
  const natural = r.natural ? " (natural)" : "";
  if (r.outcome === "tie") return `Tie ${r.player_total} to ${r.banker_total}${natural}`;
  if (r.outcome === "player") return `Player wins ${r.player_total} to ${r.banker_total}${natural}`;
  return `Banker wins ${r.banker_total} to ${r.player_total}${natural}`;
}

function renderRound(round, previous, view) {
  renderHand("player", round && round.player, view.due);
  renderHand("banker", round && round.banker, view.due);
  const banner = $("#banner");
  // Until the next round's first card, the last round's result (or void) stays on screen.
  let shown = round, last = false;
  if (previous && (!round || (!round.cards.length && !round.result && !round.void))) {
    shown = previous; last = true;
  }
  if (shown && shown.void) {
    banner.hidden = false; banner.className = "banner void" + (last ? " last" : "");
    banner.textContent = `Round ${shown.round} voided`;
  } else if (shown && shown.result) {
    banner.hidden = false; banner.className = "banner " + shown.result.outcome + (last ? " last" : "");
    banner.textContent = (last ? "Last: " : "") + resultText(shown.result);
  } else {
    banner.hidden = true; banner.textContent = "";
  }
}

function renderStats(st) {
  const set = (id, text) => { $(`[data-testid="${id}"]`).textContent = text; };
  set("stat-rounds", st.rounds); set("stat-banker", st.banker); set("stat-player", st.player);
  set("stat-tie", st.tie); set("stat-naturals", st.naturals);
  set("stat-pairs", `${st.player_pairs} / ${st.banker_pairs}`);
}

// Roads are drawn as SVG; each board shows its last columns when the shoe outgrows it.
function board(svg, cells, size, cols, rows, draw) {
  const maxCol = cells.reduce((m, c) => Math.max(m, c.col), -1);
  const offset = Math.max(0, maxCol + 1 - cols);
  const w = cols * size, h = rows * size;
  let out = "";
  for (let i = 0; i <= cols; i++) out += `<line x1="${i * size}" y1="0" x2="${i * size}" y2="${h}" stroke="#d0d0c8"/>`;
  for (let j = 0; j <= rows; j++) out += `<line x1="0" y1="${j * size}" x2="${w}" y2="${j * size}" stroke="#d0d0c8"/>`;
  for (const c of cells) {
    if (c.col < offset) continue;
    const cx = (num(c.col) - offset + 0.5) * size, cy = (num(c.row) + 0.5) * size;
    out += `<g data-col="${num(c.col)}" data-row="${num(c.row)}" data-value="${esc(c.value)}">${draw(c, cx, cy, size / 2 - 1.5)}</g>`;
  }
  svg.setAttribute("width", w); svg.setAttribute("height", h);
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  svg.dataset.count = cells.length;
  svg.innerHTML = out;
}

// Colours come from COLORS only (an unknown value draws grey), text through esc().
const color = (value) => COLORS[value] || "#888";
const drawBead = (c, x, y, r) => {
  let g = `<circle cx="${x}" cy="${y}" r="${r}" fill="${color(c.value)}"/>` +
    `<text x="${x}" y="${y + r * 0.4}" font-size="${r * 1.1}" text-anchor="middle" fill="#fff" font-weight="bold">${esc(c.value)}</text>`;
  if (c.banker_pair) g += `<circle cx="${x - r * 0.7}" cy="${y - r * 0.7}" r="${r * 0.28}" fill="${COLORS.B}" stroke="#fff"/>`;
  if (c.player_pair) g += `<circle cx="${x + r * 0.7}" cy="${y + r * 0.7}" r="${r * 0.28}" fill="${COLORS.P}" stroke="#fff"/>`;
  return g;
};
const drawBig = (c, x, y, r) => {
  let g = `<circle cx="${x}" cy="${y}" r="${r - 1}" fill="none" stroke="${color(c.value)}" stroke-width="3"/>`;
  if (c.ties) {
    g += `<line x1="${x - r}" y1="${y + r}" x2="${x + r}" y2="${y - r}" stroke="${COLORS.T}" stroke-width="3"/>`;
    if (c.ties > 1) g += `<text x="${x}" y="${y + r * 0.4}" font-size="${r * 1.1}" text-anchor="middle" fill="${COLORS.T}" font-weight="bold">${num(c.ties)}</text>`;
  }
  return g;
};
const drawEye = (c, x, y, r) => `<circle cx="${x}" cy="${y}" r="${r - 0.5}" fill="none" stroke="${color(c.value)}" stroke-width="2"/>`;
const drawSmall = (c, x, y, r) => `<circle cx="${x}" cy="${y}" r="${r}" fill="${color(c.value)}"/>`;
const drawRoach = (c, x, y, r) => `<line x1="${x - r}" y1="${y + r}" x2="${x + r}" y2="${y - r}" stroke="${color(c.value)}" stroke-width="2.5"/>`;

function renderRoads(roads) {
  const rows = roads.rows;
  const big = roads.big_road;
  let cells = big.cells;
  if (!cells.length && big.leading_ties) {  // only ties so far: mark them where the road starts
    cells = [{ col: 0, row: 0, value: "T", ties: big.leading_ties }];
  }
  board($("#big-road"), cells, 21, 30, rows, (c, x, y, r) => c.value === "T"
    ? `<line x1="${x - r}" y1="${y + r}" x2="${x + r}" y2="${y - r}" stroke="${COLORS.T}" stroke-width="3"/>` : drawBig(c, x, y, r));
  $('[data-testid="leading-ties"]').textContent = big.leading_ties ? `(${big.leading_ties} tie(s) before the first result)` : "";
  board($("#big_eye_boy"), roads.big_eye_boy, 10, 20, rows, drawEye);
  board($("#small_road"), roads.small_road, 10, 20, rows, drawSmall);
  board($("#cockroach_pig"), roads.cockroach_pig, 10, 20, rows, drawRoach);
  board($("#bead-plate"), roads.bead_plate, 26, 12, rows, drawBead);
}

function pct(x) { return (x * 100).toFixed(3) + "%"; }

function renderOdds(odds) {
  const body = $('[data-testid="odds"] tbody');
  if (!odds) { body.replaceChildren(); $('[data-testid="odds-asof"]').textContent = ""; return; }
  $('[data-testid="odds-asof"]').textContent = odds.error
    ? odds.error : `after round ${odds.after_round}, ${odds.cards_left} cards left`;
  body.replaceChildren(...odds.bets.map((b) => {
    const tr = el("tr", { className: b.player_edge ? "player-edge" : "" },
      el("td", { textContent: b.bet + (b.player_edge ? " \u2014 PLAYER EDGE" : "") }),
      el("td", { className: "edge", textContent: pct(b.house_edge) }));
    tr.dataset.bet = b.bet;
    return tr;
  }));
}

function renderRecall(recall) {
  const list = $('[data-testid="recall"]');
  list.replaceChildren(...recall.slice().reverse().map((r) => {
    const hands = `P ${r.player.cards.join(" ")} (${r.player.total ?? "-"})  B ${r.banker.cards.join(" ")} (${r.banker.total ?? "-"})`;
    const outcome = r.void ? "void" : String(r.result.outcome);
    const li = el("li", { value: r.round }, hands + " ",
      el("b", { className: "o-" + outcome, textContent: outcome.toUpperCase() }),
      r.irregularities.length ? " " : null,
      r.irregularities.length ? el("i", { textContent: r.irregularities.join(", ") }) : null);
    return li;
  }));
}

function renderSupervisorLog(entries) {
  $("#sup-log").replaceChildren(...entries.slice().reverse().map((e) => {
    const li = document.createElement("li");
    li.textContent = `${e.supervisor}: ${e.type}${e.kind ? " " + e.kind : ""}${e.reason ? " (" + e.reason + ")" : ""}`;
    return li;
  }));
}

// ------------------------------------------------------------------ supervisor panel
// The PIN is kept in this page's memory only while the panel is unlocked; the server checks
// it again for every action and the table journals each action with the supervisor's id.
let credentials = null;
let idleTimer = null;

// The panel's main message says what the table decided: green done, red refused or failed,
// amber queued (handed over, not yet journalled).
function message(text, kind) {
  const box = $("#panel-message");
  box.textContent = text;
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
  idleTimer = setTimeout(() => { lockPanel(); message("Locked after two idle minutes", true); }, PANEL_IDLE_MS);
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
    return [`${label}: queued, not yet journalled. The table applies it in order; it is lost if the controller stops first.`, "warn"];
  }
  if (!outcome.accepted) {
    return [`${label} refused by the table: ${outcome.message} (journalled as tried by ${who})`, false];
  }
  return [`${label}: done (journalled as ${who})` + (outcome.message ? `: ${outcome.message}` : ""), true];
}

$("#open-panel").addEventListener("click", () => { $("#panel").hidden = false; touchPanel(); });
$("#close-panel").addEventListener("click", () => { $("#panel").hidden = true; });
$("#lock").addEventListener("click", () => { lockPanel(); message("Locked", true); });

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
    message(err.message, false);
  }
});

for (const button of document.querySelectorAll(".act")) {
  button.addEventListener("click", async () => {
    if (!credentials) return;
    const action = button.dataset.action;
    if (action === "end_shoe" && !confirm("End this shoe now?")) return;
    touchPanel();
    const body = { ...credentials, action, reason: $("#reason").value, card: $("#card").value.trim().toUpperCase() || null };
    message("Sending...", "pending");
    try {
      const answer = await post("/api/supervisor/action", body, [409]);
      message(...outcomeMessage(button.textContent, credentials.supervisor, answer.data));
    } catch (err) {
      message(err.message, false);
    }
  });
}

connect();
