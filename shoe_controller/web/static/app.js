// Dealer display: renders the State document pushed over server-sent events (/api/stream).
// Plain JavaScript, no build step, nothing loaded from the internet (the dealer PC may be offline).
"use strict";

const $ = (sel) => document.querySelector(sel);
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
  const el = document.createElement("div");
  const suit = code.slice(-1), rank = code.slice(0, -1);
  el.className = "card" + (suit === "H" || suit === "D" ? " red" : "") + (third ? " third" : "");
  el.dataset.card = code;
  el.innerHTML = `<span class="rank">${rank === "T" ? "10" : rank}</span><span class="suit">${SUITS[suit] || suit}</span>`;
  return el;
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
    const cx = (c.col - offset + 0.5) * size, cy = (c.row + 0.5) * size;
    out += `<g data-col="${c.col}" data-row="${c.row}" data-value="${c.value}">${draw(c, cx, cy, size / 2 - 1.5)}</g>`;
  }
  svg.setAttribute("width", w); svg.setAttribute("height", h);
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  svg.dataset.count = cells.length;
  svg.innerHTML = out;
}

const drawBead = (c, x, y, r) => {
  let g = `<circle cx="${x}" cy="${y}" r="${r}" fill="${COLORS[c.value]}"/>` +
    `<text x="${x}" y="${y + r * 0.4}" font-size="${r * 1.1}" text-anchor="middle" fill="#fff" font-weight="bold">${c.value}</text>`;
  if (c.banker_pair) g += `<circle cx="${x - r * 0.7}" cy="${y - r * 0.7}" r="${r * 0.28}" fill="${COLORS.B}" stroke="#fff"/>`;
  if (c.player_pair) g += `<circle cx="${x + r * 0.7}" cy="${y + r * 0.7}" r="${r * 0.28}" fill="${COLORS.P}" stroke="#fff"/>`;
  return g;
};
const drawBig = (c, x, y, r) => {
  let g = `<circle cx="${x}" cy="${y}" r="${r - 1}" fill="none" stroke="${COLORS[c.value]}" stroke-width="3"/>`;
  if (c.ties) {
    g += `<line x1="${x - r}" y1="${y + r}" x2="${x + r}" y2="${y - r}" stroke="${COLORS.T}" stroke-width="3"/>`;
    if (c.ties > 1) g += `<text x="${x}" y="${y + r * 0.4}" font-size="${r * 1.1}" text-anchor="middle" fill="${COLORS.T}" font-weight="bold">${c.ties}</text>`;
  }
  return g;
};
const drawEye = (c, x, y, r) => `<circle cx="${x}" cy="${y}" r="${r - 0.5}" fill="none" stroke="${COLORS[c.value]}" stroke-width="2"/>`;
const drawSmall = (c, x, y, r) => `<circle cx="${x}" cy="${y}" r="${r}" fill="${COLORS[c.value]}"/>`;
const drawRoach = (c, x, y, r) => `<line x1="${x - r}" y1="${y + r}" x2="${x + r}" y2="${y - r}" stroke="${COLORS[c.value]}" stroke-width="2.5"/>`;

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
  if (!odds) { body.innerHTML = ""; $('[data-testid="odds-asof"]').textContent = ""; return; }
  $('[data-testid="odds-asof"]').textContent = odds.error
    ? odds.error : `after round ${odds.after_round}, ${odds.cards_left} cards left`;
  body.replaceChildren(...odds.bets.map((b) => {
    const tr = document.createElement("tr");
    tr.dataset.bet = b.bet;
    if (b.player_edge) tr.className = "player-edge";
    tr.innerHTML = `<td>${b.bet}${b.player_edge ? " \u2014 PLAYER EDGE" : ""}</td><td class="edge">${pct(b.house_edge)}</td>`;
    return tr;
  }));
}

function renderRecall(recall) {
  const list = $('[data-testid="recall"]');
  list.replaceChildren(...recall.slice().reverse().map((r) => {
    const li = document.createElement("li");
    li.value = r.round;
    const hands = `P ${r.player.cards.join(" ")} (${r.player.total ?? "-"})  B ${r.banker.cards.join(" ")} (${r.banker.total ?? "-"})`;
    const what = r.void ? "VOID" : r.result.outcome.toUpperCase();
    li.innerHTML = `${hands} <b class="o-${r.void ? "void" : r.result.outcome}">${what}</b>` +
      (r.irregularities.length ? ` <i>${r.irregularities.join(", ")}</i>` : "");
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

function message(text, good) {
  const el = $("#panel-message");
  el.textContent = text;
  el.className = "panel-message " + (good ? "good" : "bad");
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

async function post(path, body) {
  const response = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  let data = {};
  try { data = await response.json(); } catch (e) { /* no body */ }
  if (!response.ok) {
    const detail = typeof data.detail === "string" ? data.detail : `refused (${response.status})`;
    throw new Error(detail);
  }
  return data;
}

$("#open-panel").addEventListener("click", () => { $("#panel").hidden = false; touchPanel(); });
$("#close-panel").addEventListener("click", () => { $("#panel").hidden = true; });
$("#lock").addEventListener("click", () => { lockPanel(); message("Locked", true); });

$("#login").addEventListener("submit", async (e) => {
  e.preventDefault();
  const body = { supervisor: $("#sup-id").value.trim(), pin: $("#sup-pin").value };
  message("Checking...", true);
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
    message("Sending...", true);
    try {
      await post("/api/supervisor/action", body);
      message(`${button.textContent}: sent (journalled as ${credentials.supervisor})`, true);
    } catch (err) {
      message(err.message, false);
    }
  });
}

connect();
