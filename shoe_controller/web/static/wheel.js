// The wheel table's dealer display: renders the WheelState document pushed over server-sent
// events (/api/stream), on what every display shares (live.js, loaded first). Colour is never
// alone: every number also says red, black or green in words (its title and the facts line).
"use strict";

const COLOUR_WORDS = { red: "Red", black: "Black", green: "Green" };
const colourOf = (c) => (c in COLOUR_WORDS ? c : "none");  // a class name from a known set only
let bettingDeadline = null;

// A pocket as a coloured disc: the number, its colour as a class and in data-colour.
function pocket(number, colour, extra = {}) {
  const node = el("li", { className: "pocket " + colourOf(colour), textContent: String(number), ...extra });
  node.dataset.number = String(number);
  node.dataset.colour = colourOf(colour);
  return node;
}

function render(s) {
  document.body.dataset.version = s.version;
  const v = s.view;
  $('[data-testid="profile"]').textContent = s.profile;
  $('[data-testid="table-id"]').textContent = v.table_id;
  $('[data-testid="round-number"]').textContent = v.round || "-";
  $('[data-testid="dealer"]').textContent = v.dealer || "-";
  document.body.dataset.phase = v.phase;
  renderWheel(v.wheel);
  const prompt = $("#prompt");
  prompt.classList.remove("level-action", "level-wait", "level-result", "level-error");
  prompt.classList.add("level-" + v.level);
  // While something is latched the box below says what and what to do: the prompt says only
  // what happened and who must act (the whole prompt is its title).
  const text = v.latched.length ? `${v.latched[0].prompt}: a supervisor must clear it` : v.prompt;
  if (prompt.dataset.text !== text) {
    setPhrases(prompt, text);
    prompt.title = v.prompt;
    prompt.dataset.fitSize = fitText(prompt, 72, 28);  // its box has a fixed size
  }
  const open = v.phase === "betting_open" && s.betting_seconds_left !== null;
  bettingDeadline = open ? Date.now() + num(s.betting_seconds_left) * 1000 : null;
  tickCountdown();
  renderLatched(v.latched);
  renderResult(v.last_result, v.phase);
  renderStrip(v.last_numbers);
  renderHotCold(v);
  renderBias(v.bias);
  $('[data-testid="stat-rounds"]').textContent = v.rounds_finished;
  $('[data-testid="stat-voids"]').textContent = v.voids;
  const w = v.wheel;
  $('[data-testid="stat-wheel"]').textContent = w.spin === null ? "-"
    : `${w.spin} / ${w.rotor_rpm ?? "-"} rpm ${w.direction || ""}`;
}

function renderWheel(w) {
  const badge = $("#wheel-badge");
  badge.className = "wheel-badge " + (w.connected ? "connected" : "disconnected");
  badge.dataset.connected = String(Boolean(w.connected));
  $('[data-testid="wheel-state"]').textContent = !w.connected ? `not connected (${w.reason})`
    : w.state_name || "connected, no status yet";
  $('[data-testid="wheel-warnings"]').replaceChildren(...w.warnings.map((flag) => {
    const chip = el("span", { className: "chip warn", textContent: words(flag) });
    chip.dataset.warning = flag;
    return chip;
  }));
}

// Every latched irregularity, with what to do about it: all of them, the first one first.
function renderLatched(latched) {
  const list = $("#latched");
  list.hidden = !latched.length;
  document.body.classList.toggle("has-error", latched.length > 0);
  list.replaceChildren(...latched.map((item) => {
    const li = el("li", {},
      el("div", { className: "error-prompt", textContent: item.prompt }),
      el("div", { className: "error-remedy", textContent: item.remedy }),
      el("div", { className: "error-detail", textContent: item.detail || "" }));
    li.dataset.kind = item.kind;
    return li;
  }));
}

function factsText(r) {
  if (r.number === 0) return "Green \u00b7 zero";
  const parts = [COLOUR_WORDS[r.colour] || r.colour, r.parity === "even" ? "Even" : "Odd",
    r.half === "low" ? "1\u201318" : "19\u201336", `dozen ${r.dozen}`, `column ${r.column}`];
  return parts.join(" \u00b7 ");
}

// The last game's number, large, until the next number or void (a new round's betting leaves
// it on screen, labelled as the last game's).
function renderResult(r, phase) {
  const box = $("#winning");
  const label = $('[data-testid="result-label"]');
  const facts = $('[data-testid="number-facts"]');
  if (!r) {
    box.className = "winning none"; box.textContent = ""; box.dataset.number = "";
    label.textContent = ""; facts.textContent = "";
    return;
  }
  const current = phase === "result" || phase === "void";
  label.textContent = `${current ? "Round" : "Last game, round"} ${r.round}`;
  if (r.void) {
    box.className = "winning void"; box.textContent = "VOID"; box.dataset.number = "";
    box.dataset.colour = "none";
    facts.textContent = `Void: ${words(r.void)}` + (r.detail ? ` (${r.detail})` : "");
    return;
  }
  box.className = "winning " + colourOf(r.colour) + (current ? "" : " last");
  box.textContent = String(r.number);
  box.dataset.number = String(r.number);
  box.dataset.colour = colourOf(r.colour);
  box.title = COLOUR_WORDS[r.colour] || "";
  facts.textContent = factsText(r);
}

function renderStrip(entries) {
  $('[data-testid="strip"]').replaceChildren(...entries.map((e) => {
    if (e.void) {
      const node = el("li", { className: "pocket void", textContent: "\u00d7", title: `round ${e.round} void: ${words(e.void)}` });
      node.dataset.void = e.void;
      node.dataset.round = String(e.round);
      return node;
    }
    const node = pocket(e.number, e.colour, { title: `round ${e.round}: ${e.number} ${COLOUR_WORDS[e.colour] || ""}` });
    node.dataset.round = String(e.round);
    return node;
  }));
}

// Red numbers of the single-zero layout, to colour hot and cold numbers (the view sends the
// numbers alone there).
const RED = new Set([1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36]);
const colourOfNumber = (n) => (n === 0 ? "green" : RED.has(n) ? "red" : "black");

function renderHotCold(v) {
  $('[data-testid="hot-cold-games"]').textContent = `(last ${v.recent_games} numbers)`;
  for (const name of ["hot", "cold"]) {
    $(`[data-testid="${name}"]`).replaceChildren(...(v.recent_games ? v[name] : []).map(
      (n) => pocket(n, colourOfNumber(n))));
  }
}

function renderBias(b) {
  const box = $("#bias");
  const waiting = b.games < b.min_games;
  box.className = "bias " + (b.alerting ? "alerting" : waiting ? "waiting" : "ok");
  box.dataset.alerting = String(Boolean(b.alerting));
  $('[data-testid="bias-wheel"]').textContent = `(${b.wheel})`;
  $('[data-testid="bias-status"]').textContent = b.alerting ? "ALERT: wheel bias suspected"
    : waiting ? `Testing from ${b.min_games} games` : "No evidence of bias";
  $('[data-testid="bias-games"]').textContent = `${b.games}`;
  $('[data-testid="bias-p"]').textContent = b.p === null ? "-" : Number(b.p).toPrecision(3);
  $('[data-testid="bias-level"]').textContent = String(b.alert_p);
  $('[data-testid="bias-sector"]').textContent = b.hottest_sector.length ? b.hottest_sector.join(" ") : "-";
}

function tickCountdown() {
  const box = $("#countdown");
  box.hidden = bettingDeadline === null;
  if (bettingDeadline !== null) {
    $('[data-testid="countdown-seconds"]').textContent = `${Math.max(0, Math.ceil((bettingDeadline - Date.now()) / 1000))} s`;
  }
}
setInterval(tickCountdown, 250);

startActions({ confirmFor: { reset_bias: "Start a new bias-monitoring period (the counts so far are set aside)?" },
  // a dealer's name goes as the action's reason (the bias report's dealer breakdown)
  fields: (action) => ({ reason: action === "dealer" ? $("#dealer-name").value : $("#reason").value }) });
connect(render);
