// The card table's dealer display: renders the State document pushed over server-sent events
// (/api/stream), on what every display shares (live.js, loaded first).
// Plain JavaScript, no build step, nothing loaded from the internet (the dealer PC may be offline).
// Text from the server (bet names from a profile, card codes, reasons) is never parsed as HTML:
// it goes in with textContent, or through esc() inside the SVG markup of the roads.
"use strict";

const SUITS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };
const COLORS = { B: "#e5383b", P: "#2f7de1", T: "#2fb344", red: "#e5383b", blue: "#2f7de1" };

// ------------------------------------------------------------------ rendering
function render(s) {
  document.body.dataset.version = s.version;
  const v = s.view;
  $('[data-testid="profile"]').textContent = s.profile;
  $('[data-testid="shoe"]').textContent = s.stats.shoe || "-";
  $('[data-testid="round-number"]').textContent = v.round || "-";
  $('[data-testid="cards-left"]').textContent = s.stats.cards_left ?? "-";
  renderExit(v);

  const error = v.latched.length ? v.latched[0] : null;
  document.body.classList.toggle("has-error", Boolean(error));
  document.body.dataset.state = String(v.state);
  const prompt = $("#prompt");
  prompt.classList.remove("level-action", "level-wait", "level-result", "level-error");
  prompt.classList.add("level-" + v.level);
  if (prompt.dataset.text !== v.prompt) {
    setPhrases(prompt, v.prompt);
    prompt.dataset.fitSize = fitText(prompt, 72, 28);  // its box has a fixed size
  }
  $("#detail").textContent = error ? "" : v.detail;
  $("#error").hidden = !error;
  if (error) {
    $('[data-testid="error-remedy"]').textContent = error.remedy;
    const more = v.latched.length > 1 ? ` (+${v.latched.length - 1} more)` : "";
    $('[data-testid="error-detail"]').textContent = (error.detail || "") + more;
  }
  renderRound(s.round, s.previous_round, v, s.stats);
  renderBlackjack(s.blackjack, v);
  renderStats(s.stats);
  renderRoads(s.roads);
  renderOdds(s.odds);
  renderRecall(s.recall);
  renderSupervisorLog(s.supervisor_log);
}

function renderExit(v) {
  const badge = $("#exit");
  const locked = Boolean(v.exit_locked);
  badge.className = "exit-badge " + (locked ? "locked" : "open");
  badge.dataset.locked = String(locked);
  $('[data-testid="exit-word"]').textContent = locked ? "Locked" : "Open";
  badge.title = locked ? "The shoe's exit is locked: no card may be drawn" : "The shoe's exit is open: draw the card due";
  $('[data-testid="chip-link"]').hidden = v.link_up !== false;
  $('[data-testid="chip-lid"]').hidden = !v.lid_open;
}

function cardElement(code, third) {
  const suit = code.slice(-1), rank = code.slice(0, -1);
  const card = el("div", { className: "card" + (suit === "H" || suit === "D" ? " red" : "") + (third ? " third" : "") },
    el("span", { className: "rank", textContent: rank === "T" ? "10" : rank }),
    el("span", { className: "suit", textContent: SUITS[suit] || suit }));
  card.dataset.card = code;
  return card;
}

// A total is final only once the round has its result; before that it is shown smaller and
// dimmed with "so far" (a first card's 9 is not a natural). A natural says NATURAL.
function renderHand(name, hand, due, round) {
  const box = $(`[data-testid="${name}-cards"]`);
  const codes = hand ? hand.cards : [];
  if (box.dataset.cards !== codes.join(" ")) {
    box.replaceChildren(...codes.map((c, i) => cardElement(c, i === 2)));
    box.dataset.cards = codes.join(" ");
  }
  const hasTotal = Boolean(hand && hand.total !== null && codes.length);
  const final = hasTotal && Boolean(round && round.result);
  const natural = final && Boolean(round.result.natural) && codes.length === 2 && num(hand.total) >= 8;
  $(`[data-testid="${name}-total"]`).textContent = hasTotal ? hand.total : "";
  $(`[data-testid="${name}-total-note"]`).textContent = !hasTotal ? "" : natural ? "Natural"
    : final ? "" : round && round.void ? "void" : "so far";
  const node = $(`[data-testid="${name}-hand"]`);
  node.classList.toggle("due", due === name);
  node.classList.toggle("partial", hasTotal && !final);
  node.classList.toggle("natural", natural);
}

function resultText(r) {
  if (r.dealer) return dealerText(r.dealer);  // blackjack
  if (r.outcome === "tie") return `Tie ${r.player_total} to ${r.banker_total}`;
  if (r.outcome === "player") return `Player wins ${r.player_total} to ${r.banker_total}`;
  return `Banker wins ${r.banker_total} to ${r.player_total}`;
}

function renderRound(round, previous, view, stats) {
  const finished = view.state === "shoe_finished";
  // Until the next round's first card, the last round's result (or void) stays on screen.
  let shown = round, last = false;
  if (previous && (!round || (!round.cards.length && !round.result && !round.void))) {
    shown = previous; last = true;
  }
  if (finished) last = true;
  renderHand("player", round && round.player, view.due, round);
  renderHand("banker", round && round.banker, view.due, round);
  $(".hands").hidden = finished;
  const summary = $("#shoe-summary");
  summary.hidden = !finished;
  if (finished) {
    summary.replaceChildren(
      el("b", { textContent: `Shoe ${stats.shoe || "-"} finished` }), el("br"),
      `${stats.rounds} rounds: Banker ${stats.banker}, Player ${stats.player}, Tie ${stats.tie}` +
      (stats.voided ? `; ${stats.voided} voided` : ""));
  }
  const banner = $("#banner");
  const label = last ? el("span", { className: "label", textContent: `Round ${shown.round} result` }) : null;
  if (shown && shown.void) {
    banner.hidden = false; banner.className = "banner void" + (last ? " last" : "");
    // the phrase names the round already: no "Round N result" label over "Round N voided"
    banner.replaceChildren(el("span", { className: "phrase", textContent: `Round ${shown.round} voided` }));
  } else if (shown && shown.result) {
    banner.hidden = false; banner.className = "banner " + shown.result.outcome + (last ? " last" : "");
    const parts = phrases(resultText(shown.result));
    const children = label ? [label] : [];
    parts.forEach((part, i) => { if (i) children.push(" "); children.push(el("span", { className: "phrase", textContent: part })); });
    if (shown.result.natural) children.push(" ", el("span", { className: "natural-tag", textContent: "natural" }));
    banner.replaceChildren(...children);
  } else {
    banner.hidden = true; banner.replaceChildren();
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

function pct(x, digits) { return (num(x) * 100).toFixed(digits).replace("-", "\u2212") + " %"; }

// House edge: the bettor's expected loss per unit staked (negative: the player has the edge);
// chance to win: of the bet winning on a round dealt from the cards left (a push is not a win).
function renderOdds(odds) {
  const body = $('[data-testid="odds"] tbody');
  const table = $('[data-testid="odds"]');
  table.hidden = !odds || !odds.bets.length;
  if (!odds) { body.replaceChildren(); $('[data-testid="odds-asof"]').textContent = ""; return; }
  const after = num(odds.after_round) ? `after round ${odds.after_round}` : "before round 1";
  $('[data-testid="odds-asof"]').textContent = odds.error
    ? `(none: ${odds.error})` : `(exact: ${odds.cards_left} cards left ${after})`;
  body.replaceChildren(...odds.bets.map((b) => {
    const tr = el("tr", { className: b.player_edge ? "player-edge" : "" },
      el("td", { textContent: words(b.bet) + (b.player_edge ? " \u2014 PLAYER EDGE" : ""), title: String(b.description || "") }),
      el("td", { className: "num win", textContent: pct(b.win, 2) }),
      el("td", { className: "num edge", textContent: pct(b.house_edge, 3) }));
    tr.dataset.bet = b.bet;
    return tr;
  }));
}

function handText(letter, hand) {
  const cards = hand.cards.map((code) => {
    const suit = code.slice(-1), rank = code.slice(0, -1);
    return (rank === "T" ? "10" : rank) + (SUITS[suit] || suit);
  });
  return `${letter} ${cards.join(" ")}  = ${hand.total ?? "-"}`;
}

function dealerText(d) {
  if (d.blackjack) return "Dealer has blackjack";
  return d.bust ? `Dealer busts with ${d.total}` : `Dealer stands on ${d.total}`;
}

// A blackjack round in the recall: the dealer, then each seat's hands and outcomes.
function blackjackRecall(r) {
  if (r.void) return [el("span", { textContent: "voided" })];
  const seats = Object.entries(r.result.seats).map(([seat, hands]) => hands.map((h, i) =>
    `${seat}${hands.length > 1 ? "." + (i + 1) : ""} ${h.blackjack ? "BJ" : h.total} ${h.outcome}`).join(", "));
  return [el("span", { textContent: `D ${r.result.dealer.cards.join(" ")} = ${r.result.dealer.total}` }),
    el("span", { textContent: seats.join("; ") })];
}

// Newest first, only whole lines: as many rounds as fit, and the count says how many.
function renderRecall(recall) {
  const list = $('[data-testid="recall"]');
  list.replaceChildren(...recall.slice().reverse().map((r) => {
    if (!r.void && r.result.dealer) {
      const li = el("li", { value: r.round }, el("span", { className: "no", textContent: `#${r.round}` }),
        ...blackjackRecall(r));
      li.dataset.round = r.round;
      return li;
    }
    const outcome = r.void ? "void" : String(r.result.outcome);
    const li = el("li", { value: r.round },
      el("span", { className: "no", textContent: `#${r.round}` }),
      el("span", { textContent: handText("P", r.player) }),
      el("span", { textContent: handText("B", r.banker) }),
      el("span", {},
        el("b", { className: "o-" + outcome, textContent: outcome.toUpperCase() }),
        r.irregularities.length ? " " : null,
        r.irregularities.length ? el("i", { textContent: r.irregularities.map(words).join(", ") }) : null));
    li.dataset.round = r.round;
    return li;
  }));
  while (list.lastChild && list.scrollHeight > list.clientHeight + 1) list.lastChild.remove();
  const shown = list.children.length;
  list.dataset.shown = shown;
  $('[data-testid="recall-count"]').textContent = shown < recall.length ? `(${shown} of ${recall.length})` : "";
}

// Each entry says in words what happened (the server's `text`), who did it first.
function renderSupervisorLog(entries) {
  $("#sup-log").replaceChildren(...entries.slice().reverse().map((e) => {
    const li = document.createElement("li");
    const what = e.text || words(e.type) + (e.kind ? ": " + words(e.kind) : "") + (e.reason ? " (" + e.reason + ")" : "");
    li.textContent = `${e.supervisor}: ${what}`;
    return li;
  }));
}
startActions({
  confirmFor: { end_shoe: "End this shoe now?" },
  fields: () => ({ reason: $("#reason").value, card: $("#card").value.trim().toUpperCase() || null }),
});
connect(render);

// Blackjack: the dealer's hand (the hole card face down until the dealer turns it over: the
// server sends no code for it), every seat's hands with totals, and the awaited decision with
// a countdown to the moment the hand stands (ticking here between the server's updates).
let bjDeadline = null;

function faceDownCard() {
  const card = el("div", { className: "card face-down", title: "hole card, face down" });
  card.dataset.faceDown = "true";
  card.setAttribute("data-testid", "hole-card");
  return card;
}

function totalText(hand) {
  if (hand.total === null || hand.total === undefined) return "";
  if (hand.blackjack) return "BJ";
  return (hand.soft && hand.total < 21 ? "soft " : "") + hand.total + (hand.bust ? " bust" : "");
}

function renderBlackjack(bj, v) {
  const box = $("#bj");
  box.hidden = !bj || v.state === "shoe_finished";
  $('[data-testid="act-error-burn"]').hidden = !bj;  // blackjack's burn after a game error
  if (!bj) return;
  $(".hands").hidden = true;
  const dealer = bj.dealer;
  $('[data-testid="bj-dealer-cards"]').replaceChildren(...dealer.cards.map(
    (c) => (c.card ? cardElement(c.card, false) : faceDownCard())));
  $('[data-testid="bj-dealer-total"]').textContent = dealer.blackjack ? "BJ" : totalText(dealer);
  $('[data-testid="bj-dealer-note"]').textContent = dealer.total === null || dealer.final ? "" : "so far";
  const seats = bj.seats.map((seat) => {
    const hands = seat.hands.map((hand) => {
      const node = el("div", { className: "bj-hand" + (hand.outcome ? " " + hand.outcome : "") },
        el("div", { className: "cards" }, ...hand.cards.map((c) => cardElement(c, false))),
        el("div", { className: "bj-total", textContent: totalText(hand) + (hand.doubled ? " x2" : "") +
          (hand.outcome ? " " + hand.outcome : "") }));
      node.setAttribute("data-testid", `bj-seat-${seat.seat}-hand-${hand.hand}`);
      return node;
    });
    const waiting = bj.awaiting && bj.awaiting.kind === "decision" && bj.awaiting.seat === seat.seat;
    const node = el("div", { className: "bj-seat" + (waiting ? " deciding" : "") },
      el("div", { className: "bj-seat-name", textContent: `Seat ${seat.seat}` }), ...hands);
    node.setAttribute("data-testid", `bj-seat-${seat.seat}`);
    return node;
  });
  $('[data-testid="bj-seats"]').replaceChildren(...seats);
  const awaiting = bj.awaiting;
  $('[data-testid="bj-awaiting"]').hidden = !awaiting;
  if (awaiting) {
    $('[data-testid="bj-awaiting-text"]').textContent = awaiting.kind === "insurance"
      ? "Insurance offered" : `Seat ${awaiting.seat}` + (awaiting.hand > 1 ? ` hand ${awaiting.hand}` : "") + " to decide";
    $('[data-testid="bj-options"]').textContent = (awaiting.options || []).join(" / ");
    bjDeadline = awaiting.seconds_left === null ? null : Date.now() + awaiting.seconds_left * 1000;
  } else {
    bjDeadline = null;
  }
  tickCountdown();
}

function tickCountdown() {
  const node = $('[data-testid="bj-countdown"]');
  if (!node) return;
  node.textContent = bjDeadline === null ? "" : `${Math.max(0, Math.ceil((bjDeadline - Date.now()) / 1000))} s`;
}
setInterval(tickCountdown, 250);
