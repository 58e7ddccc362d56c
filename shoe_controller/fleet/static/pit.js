// The pit view: every table's tile, live from /api/stream (server-sent events).
// All text from the broker goes through textContent: a table's data is never markup.
"use strict";
const tables = new Map();      // table_id -> tile document (the page's data)
let serverOffset = 0;          // server clock minus this browser's, seconds
let brokerUp = false;
let renderQueued = false;
let openTable = null;
window.pitTables = tables;     // for tests and for people with a console

const $ = (id) => document.getElementById(id);
const now = () => Date.now() / 1000 + serverOffset;

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function age(seconds) {
  if (seconds === null || seconds === undefined || !isFinite(seconds)) return "";
  seconds = Math.max(0, Math.floor(seconds));
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
}

function visible(tile) {
  const game = $("game-filter").value, pit = $("pit-filter").value;
  if (game && tile.game !== game) return false;
  if (pit && tile.pit !== pit) return false;
  if ($("alerts-only").checked && tile.online && !tile.latched.length && !tile.player_edge.length)
    return false;
  return true;
}

function tileNode(t) {
  const node = el("section", "tile");
  node.dataset.table = t.table_id;
  if (t.latched.length) node.classList.add("latched");
  if (!t.online) node.classList.add("offline");
  const top = el("div", "top");
  top.append(el("span", "id", t.table_id), el("span", "meta",
    [t.pit, t.game, t.round ? `round ${t.round}` : ""].filter(Boolean).join(" · ")));
  node.append(top);
  if (!t.online) {
    const since = t.offline_since ? ` · ${age(now() - t.offline_since)}` : "";
    node.append(el("div", "offline-badge", `OFFLINE${t.offline_reason ? ": " + t.offline_reason : ""}${since}`));
  }
  const prompt = t.prompt || {};
  node.append(el("div", `prompt ${prompt.level || ""}`, prompt.text || ""));
  for (const latch of t.latched) {
    const box = el("div", "latch", latch.prompt || latch.kind);
    box.dataset.since = latch.since;
    box.append(el("span", "age", age(now() - latch.since)));
    node.append(box);
  }
  if (t.player_edge.length) node.append(el("div", "edge", `Player edge: ${t.player_edge.join(", ")}`));
  const shoe = t.shoe || {};
  const total = shoe.cards_total || 0, dealt = shoe.cards_dealt || 0;
  const bar = el("div", "progress"); const fill = el("div");
  fill.style.width = total ? `${Math.min(100, (100 * dealt) / total)}%` : "0";
  bar.append(fill); node.append(bar);
  node.append(el("div", "shoeline", `Shoe ${shoe.number ?? "?"}: ${dealt}${total ? " / " + total : ""} cards` +
    (shoe.cut_card_out ? " · cut card out" : "") + (shoe.finished ? " · finished" : "")));
  // The last round's result as the floor words it (baccarat's outcome and totals, blackjack's
  // dealer total and each seat's outcome): blackjack has no bead road.
  if (t.last_result_text) node.append(el("div", "last-result", t.last_result_text));
  const beads = el("div", "beads");
  t.results.forEach((outcome, i) => {  // roulette's beads carry their number
    const number = (t.result_numbers || [])[i];
    beads.append(el("span", `bead ${outcome}`, number ?? outcome[0].toUpperCase()));
  });
  node.append(beads);
  return node;
}

function render() {
  renderQueued = false;
  const main = $("tables");
  const tiles = [...tables.values()].sort((a, b) => a.table_id.localeCompare(b.table_id));
  const shown = tiles.filter(visible);
  main.replaceChildren(...shown.map(tileNode));
  $("empty").hidden = tiles.length > 0;
  const online = tiles.filter((t) => t.online).length;
  const latched = tiles.filter((t) => t.latched.length).length;
  const edges = tiles.filter((t) => t.player_edge.length).length;
  $("counts").textContent = `${tiles.length} tables · ${online} online · ${tiles.length - online} offline · ` +
    `${latched} latched · ${edges} player edge`;
  $("broker").textContent = brokerUp ? "Broker: connected" : "Broker: not connected";
  $("broker").className = `broker ${brokerUp ? "up" : "down"}`;
  for (const [id, filter] of [["game-filter", "game"], ["pit-filter", "pit"]]) {
    const select = $(id), values = [...new Set(tiles.map((t) => t[filter]).filter(Boolean))].sort();
    const have = [...select.options].slice(1).map((o) => o.value);
    if (have.join("\u0000") !== values.join("\u0000")) {
      const chosen = select.value;
      select.replaceChildren(el("option", "", "all"), ...values.map((v) => { const o = el("option", "", v); o.value = v; return o; }));
      select.options[0].value = "";
      select.value = values.includes(chosen) ? chosen : "";
    }
  }
}

function queueRender() {
  if (!renderQueued) { renderQueued = true; requestAnimationFrame(render); }
}

async function showDetail(id) {
  openTable = id;
  const response = await fetch(`/api/tables/${encodeURIComponent(id)}`);
  if (!response.ok || openTable !== id) return;
  const d = await response.json();
  const body = $("detail-body");
  const rows = [
    ["Game", `${d.game || "?"} (${d.profile || "?"})`], ["Pit", d.pit || "-"],
    ["Online", d.online ? "yes" : `no (${d.offline_reason || "unknown"})`],
    ["State", d.state], ["Prompt", d.prompt ? d.prompt.text : ""],
    ["Detail", d.prompt ? d.prompt.detail : ""],
    ["Shoe", `${d.shoe.number ?? "?"}: ${d.shoe.cards_dealt ?? 0} / ${d.shoe.cards_total ?? "?"} cards`],
    ["Round", d.round], ["Shoe link", d.link && d.link.shoe ? "up" : "down"],
    ["Table system", d.link ? (d.link.table_system === null ? "none" : d.link.table_system ? "connected" : "not connected") : ""],
    ["Last result", d.last_result_text || "-"],
    ["Events", `last seq ${d.last_event_seq}, ${d.event_gaps} missed`],
  ];
  const table = el("table");
  for (const [k, v] of rows) { const tr = el("tr"); tr.append(el("th", "", k), el("td", "", v)); table.append(tr); }
  const parts = [el("h2", "", `Table ${d.table_id}`), table];
  if (d.latched.length) {
    parts.push(el("h3", "", "Latched irregularities"));
    for (const l of d.latched) parts.push(el("div", "latch", `${l.prompt} (${l.detail || l.kind}) for ${age(now() - l.since)}`));
  }
  const odds = d.state_document && d.state_document.odds;
  if (odds && odds.bets && odds.bets.length) {
    parts.push(el("h3", "", `House edge on the cards left (after round ${odds.after_round})`));
    const t = el("table");
    for (const b of odds.bets) { const tr = el("tr"); tr.append(el("td", "", b.bet), el("td", "", `${(100 * b.house_edge).toFixed(3)} %`)); t.append(tr); }
    parts.push(t);
  }
  parts.push(el("h3", "", "Recent events"));
  const ev = el("table");
  for (const e of [...d.events].reverse()) {
    const tr = el("tr");
    const what = e.type === "card" ? `${e.data.hand} ${e.data.card}`
      : e.type === "round_result" ? (e.data.dealer ? `dealer ${e.data.dealer.blackjack ? "BJ" : e.data.dealer.total}`
        : `${e.data.outcome} ${e.data.player_total}-${e.data.banker_total}`)
      : (e.data.kind || "");
    tr.append(el("td", "", e.seq), el("td", "", e.type), el("td", "", what), el("td", "", new Date(e.at * 1000).toLocaleTimeString()));
    ev.append(tr);
  }
  parts.push(ev);
  body.replaceChildren(...parts);
  $("detail").hidden = false;
}

// A tile pressed opens its table's detail. The tiles are drawn anew whenever a table deals,
// so on a busy floor a press and its release can land on two drawings of one tile, and the
// browser's click then fires on neither: the tiles' container, which stays, pairs the press
// and the release by the table they were on.
let pressedTable = null;
$("tables").addEventListener("pointerdown", (event) => {
  const tile = event.target.closest(".tile");
  pressedTable = tile ? tile.dataset.table : null;
});
$("tables").addEventListener("pointerup", (event) => {
  const tile = event.target.closest(".tile");
  if (tile && tile.dataset.table === pressedTable) showDetail(pressedTable);
  pressedTable = null;
});
$("close-detail").addEventListener("click", () => { openTable = null; $("detail").hidden = true; });
for (const id of ["game-filter", "pit-filter", "alerts-only"]) $(id).addEventListener("change", queueRender);

function connect() {
  const source = new EventSource("/api/stream");
  source.addEventListener("floor", (e) => {
    const floor = JSON.parse(e.data);
    serverOffset = floor.now - Date.now() / 1000;
    brokerUp = floor.broker;
    tables.clear();
    for (const t of floor.tables) tables.set(t.table_id, t);
    queueRender();
  });
  source.addEventListener("tables", (e) => {
    const update = JSON.parse(e.data);
    serverOffset = update.now - Date.now() / 1000;
    brokerUp = update.broker;
    for (const t of update.tables) tables.set(t.table_id, t);
    queueRender();
    if (openTable && update.tables.some((t) => t.table_id === openTable)) showDetail(openTable);
  });
  source.addEventListener("ping", (e) => {
    const ping = JSON.parse(e.data);
    serverOffset = ping.now - Date.now() / 1000;
    if (brokerUp !== ping.broker) { brokerUp = ping.broker; queueRender(); }
  });
}
connect();
// Ages (latched for, offline since) move on even when nothing is published.
setInterval(queueRender, 1000);
