// The table display: the tracker, the last roll with its dice, the next roll and its odds,
// the history, and GM controls that send commands. Data comes straight from the broker.
"use strict";

const $ = (id) => document.getElementById(id);
const seen = new Set();            // roll event ids already shown (QoS 1 may repeat one)
let config, client, base, requestCount = 0;
// The page's request ids: every guest reads them in the replies on cmd/result, so they are
// random of their own and never the client id (which would let a guest take it over).
const requestTag = secretId("page-").slice(0, 29);
let lastSession = null;            // the latest retained `session` (attention.js reads it)

// No form of the page ever navigates: a submit before its handler is wired would put what
// was typed (the GM token) in the address and the history. Sign-in is wired at once, before
// config.json loads; a token typed early is used by the first connect.
document.addEventListener("submit", (event) => event.preventDefault(), true);
$("form-login").addEventListener("submit", signIn);

function signIn(event) {
  const { user, password } = event.target.elements;
  // the GM token's user is "gm": a token alone signs the GM in
  sessionStorage.setItem("tt-user", user.value || (password.value ? "gm" : ""));
  sessionStorage.setItem("tt-password", password.value);
  if (config) connect();  // else main() connects with it once config.json is in
}

async function loadConfig() {
  const query = new URLSearchParams(location.search);
  let served = {};
  if (location.protocol.startsWith("http")) {
    try { served = await (await fetch("config.json")).json(); } catch (error) { served = {}; }
  }
  return {
    ws: query.get("ws") || served.ws_url || brokerUrl(served),
    prefix: query.get("prefix") || served.prefix || "tidetower",
    table: query.get("table") || served.table || "main",
    guarded: Boolean(served.gm_sign_in),  // players may see it: GM controls once signed in
    photos: Boolean(served.snapshots),  // the server has the tower's tray photos
    dice: served.dice || [],  // the dice the tower knows and their faces (engine.tray)
  };
}

// With no URL configured, the broker is on the host named, or else on the host that served
// this page (what a phone reached the tower by), at the broker's WebSockets port.
function brokerUrl(served) {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const host = served.ws_host || location.hostname || "127.0.0.1";
  return `${scheme}://${host}:${served.ws_port || 9001}/mqtt`;
}

function connect() {
  if (client) client.close();
  const user = sessionStorage.getItem("tt-user") || undefined;
  // Players see the table, not the GM's controls, until the broker accepts the GM's login.
  document.body.classList.toggle("player", config.guarded);
  $("link").textContent = "connecting…";
  client = new MqttSocket(config.ws, {
    username: user,
    password: sessionStorage.getItem("tt-password") || undefined,
    onMessage: received,
    onState: (state) => {  // who the page is signed in as, or which URL it could not reach
      const says = { online: `broker online${user ? ` as ${user}` : ""}`,
        refused: "broker refused the user or password" };
      $("link").textContent = says[state] || `broker ${state}: tried ${config.ws}`;
      $("link").classList.toggle("off", state !== "online");
      if (state === "online") document.body.classList.toggle("player", config.guarded && !user);
    },
  });
  for (const name of ["status", "tower", "tide", "session", "stats", "dice", "roll", "teach",
    "learn", "cmd/result"]) {
    client.subscribe(`${base}/${name}`, 1);
  }
  client.connect();
}

function received(topic, text) {
  if (!topic.startsWith(base + "/")) return; // a broker may send what was never asked for
  const name = topic.slice(base.length + 1);
  if (name === "status") { showTower(text); return; }
  if (name === "tower") { showTowerState(text); return; }
  if (name === "teach") { showTeach(text); return; }
  let body;
  try { body = JSON.parse(text); } catch (error) { return; }
  if (name === "learn") showLearn(body);
  else if (name === "tide") showTracker(body);
  else if (name === "session") showSession(body);
  else if (name === "stats") showStats(body);
  else if (name === "dice") showTableDice(body);
  else if (name === "roll") showRoll(body);
  else if (name === "cmd/result") showResult(body);
}

function showTower(text) {
  $("tower").textContent = "tower " + text;
  $("tower").classList.toggle("off", text !== "online");
  $("tower-state").classList.toggle("stale", text !== "online");
}

// The tracker (retained `tide`, the product's bar), drawn by its kind: a bar between two
// sides, one small bar per clock, a count with what is pending, or nothing.
let lastTracker = null;            // the latest tracker (undo.js names it)

function showTracker(bar) {
  lastTracker = bar;
  const tracker = bar.tracker || { kind: "two-sided", name: "the bar", ends: [bar.label_a, bar.label_b], position: "Position" };
  const kind = tracker.kind;
  $("tracker-panel").hidden = kind === "none";
  $("tracker-bar").hidden = kind !== "two-sided";
  $("tracker-count").hidden = kind !== "count";
  $("segments").hidden = kind !== "clocks" && kind !== "count";
  if (kind === "two-sided") showBar(bar, tracker);
  if (kind === "count") $("tracker-count").textContent = `${tracker.position} ${bar.position}`;
  if (kind === "clocks" || kind === "count") showSegments(bar.segments || [], kind);
  const m = bar.last_motion;
  $("motion").textContent = m ? `${m.cause}: ${m.before} → ${m.after}` : "";
}

function showBar(bar, tracker) {
  const cells = [];
  for (let p = bar.low; p <= bar.high; p++) {
    const cell = document.createElement("div");
    cell.className = "cell" + (p === bar.position ? " marker" : "");
    cell.style.background = p < bar.position ? bar.colour_a : bar.colour_b;
    cells.push(cell);
  }
  $("bar").replaceChildren(...cells);
  $("label-a").textContent = tracker.ends[0];
  $("label-b").textContent = tracker.ends[1];
  $("tracker-word").textContent = tracker.position;
  $("tracker-position").textContent = bar.position;
  $("tracker-length").textContent = bar.length;
  $("routed").hidden = !bar.routed;
  $("routed").textContent = bar.routed ? `${bar.routed === "a" ? bar.label_a : bar.label_b} routs!` : "";
}

// One small bar per part ("name filled/size"): a clock, or an action pending on the count.
function showSegments(segments, kind) {
  const rows = segments.map(([label, filled, size]) => {
    const row = document.createElement("div");
    row.className = "segment";
    row.innerHTML = '<span class="name"></span><div class="cells"></div><span class="filled"></span>';
    row.querySelector(".name").textContent = label;
    row.querySelector(".filled").textContent = `${filled}/${size}`;
    const cells = Array.from({ length: size }, (_, i) => {
      const cell = document.createElement("div");
      cell.className = i < filled ? "cell on" : "cell";
      return cell;
    });
    row.querySelector(".cells").replaceChildren(...cells);
    return row;
  });
  if (!rows.length) rows.push(movedLine(kind === "clocks" ? "No clocks yet" : "Nothing pending", "muted"));
  $("segments").replaceChildren(...rows);
}

function showSession(session) {
  lastSession = session;
  showForms(session);
  $("declared").textContent = declaredText(session);
  showOdds(session.odds);
  showHistory(session);
  showRedo(session);
  if (session.last_roll && !shownRoll) showRoll(session.last_roll);
}

// The declared roll in a line, each of the system's own fields by its label; a side named
// by its actor ("Side B") is said once.
function declaredText(session) {
  const d = session.declared || {};
  const side = d.side && session.sides[d.side].label;
  const actor = (d.actor || "").toLowerCase();
  const saidByActor = side && [side.toLowerCase(), `side ${side.toLowerCase()}`].includes(actor);
  const own = Object.entries(d.params || {}).map(([name, value]) => ownText(name, value));
  const parts = [d.actor, side && !saidByActor && `side ${side}`, d.mode,
    d.pool != null && `pool ${d.pool}`, ...own, d.reply_to && `replying to ${d.reply_to}`];
  const text = parts.filter(Boolean).join(", ");
  return text ? `Declared: ${text}` : "Nothing declared.";
}

// One own field: a flag by its label when set, a list joined, else "Label value".
function ownText(name, value) {
  if (value === false || value == null || value === "") return "";
  if (value === true) return fieldLabel(name);
  return `${fieldLabel(name)} ${Array.isArray(value) ? value.join(", ") : value}`;
}

// Odds rows: a count (3 hits) or a named result (a grade, a lot), then what the roll comes
// to (bad / partial / full, lands / misses, where the tracker goes) and the chance of an
// explosion.
function showOdds(odds) {
  if (!odds) { $("odds").replaceChildren(); return; }
  const named = odds.rows.some((row) => row.label);
  const rows = odds.rows.map((row) =>
    oddsLine(row.label || counted(row.value, odds.counts), row.chance, "row"));
  const outcomes = (odds.outcomes || []).map((o) => oddsLine(o.label, o.chance, "row outcome"));
  if (odds.explosion != null) outcomes.push(oddsLine("6s explode", odds.explosion, "row outcome"));
  if (outcomes.length) outcomes[outcomes.length - 1].style.marginBottom = ".4rem";
  const lines = [...outcomes, ...rows];
  const longest = Math.max(...lines.map((line) => line.firstChild.textContent.length));
  for (const line of lines) line.style.gridTemplateColumns = `max(3rem, min(${longest}ch, 45%)) 1fr 3.5rem`;
  const title = document.createElement("p");
  title.textContent = named ? `Odds for ${odds.dice}` : `Odds for ${odds.dice}: mean ${odds.mean} ${odds.counts}`;
  $("odds").replaceChildren(title, ...lines);
}

function oddsLine(label, chance, className) {
  const line = document.createElement("div");
  line.className = className;
  line.innerHTML = '<span></span><div><div class="fill"></div></div><span></span>';
  const [name, , percent] = line.children;
  name.textContent = label;
  percent.textContent = `${(chance * 100).toFixed(1)}%`;
  line.querySelector(".fill").style.width = `${chance * 100}%`;
  return line;
}

let shownRoll = null;

function showRoll(event) {
  if (seen.has(event.event)) return;
  seen.add(event.event);
  shownRoll = event.event;
  $("roll-phase").textContent = `${event.id} · ${event.phase}`;
  $("dice").replaceChildren(...diceRow(event));
  if (event.phase === "new") $("outcome").textContent = "Reading…";
  else if (event.phase === "undone") $("outcome").textContent = `Taken back: ${event.outcome.summary}`;
  else $("outcome").textContent = event.outcome.summary;
  showMoved(event);
}

function showResult(reply) {
  if (!reply.id || !reply.id.startsWith(`${requestTag}-`)) return;
  if (reply.id === waitingFor) waitingFor = null;
  attentionReplied(reply);
  teachReplied(reply);
  undoReplied(reply);
  formsReplied(reply);
  for (const status of [$("cmd-status"), $("attention-status"), $("teach-status")]) {  // the GM sees it where they tapped
    status.className = reply.ok ? "ok" : "error";
    status.textContent = reply.ok ? `${reply.command}: done`
      : `${reply.command} refused${reply.error.field ? ` (${reply.error.field})` : ""}: ${reply.error.message}`;
  }
}

let waitingFor = null;

function send(command, body) {
  body.id = `${requestTag}-${++requestCount}`;
  waitingFor = body.id;
  const say = (kind, text) => {
    for (const status of [$("cmd-status"), $("attention-status"), $("teach-status")]) {
      status.className = kind;
      status.textContent = text;
    }
  };
  say("muted", `${command}: sent…`);
  const fail = (message) => { if (waitingFor === body.id) say("error", `${command}: ${message}`); };
  client.publish(`${base}/cmd/${command}`, JSON.stringify(body), 1).catch((error) => fail(error.message));
  setTimeout(() => fail("no reply from the tower (offline, or not allowed to send commands?)"), 5000);
  return body.id;
}

function formBody(form) {
  const body = {};
  for (const field of form.elements) {
    if (!field.name || field.value === "") continue;
    if (field.type === "checkbox") body[field.name] = field.checked;
    else body[field.name] = field.type === "number" ? Number(field.value) : field.value;
  }
  return body;
}

function parseDice(text) {
  return text.trim().split(/[\s,]+/).filter(Boolean).map((part) => {
    const [kind, value] = part.toLowerCase().split("=");
    return { kind, value: Number(value) };
  });
}

function wireControls() {
  for (const form of document.querySelectorAll("form[data-command]")) {
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const body = formBody(form);
      if (form.dataset.command === "roll") body.dice = parseDice(body.dice || "");
      send(form.dataset.command, body);
    });
  }
  $("reread").addEventListener("click", () => send("reread", {}));
  $("tip").addEventListener("click", () => send("tip", {}));
  $("learn").addEventListener("click", () => send("learn", {}));
}

async function main() {
  config = await loadConfig();
  base = `${config.prefix}/${config.table}`;
  $("table-name").textContent = config.table;
  $("ws-url").textContent = config.ws;
  const kind = $("form-die").elements.kind;
  for (const die of config.dice) kind.add(new Option(die.name, die.name));
  wireControls();
  connect();
}

main();
