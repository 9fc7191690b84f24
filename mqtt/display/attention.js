// The tower's state chip and the needs-attention panel: the tray's photo with each die's
// box, a close-up of each die it could not read (cropped here from the photo), and fixing one
// by picking its face, the reader's guesses first (cmd/die); or have the tray read again
// (cmd/reread), or throw again (cmd/rethrow); "Not a die" drops one the camera took for a die
// (a tray corner, a shadow: cmd/die with not_a_die). Uses `$`, `send`, `trayPhoto` and
// `lastSession` from the other scripts.
"use strict";

const STATE_WORDS = {
  "idle": "ready", "rolling": "dice rolling", "settling": "settling", "reading": "reading",
  "result": "result", "waiting-for-clear": "clear the tray", "needs-attention": "needs attention",
  "error": "error",
};
let shownAttention = null;         // the attention on screen (replaced by each `tower` payload)
const pendingFix = new Map();      // request id -> [attention it was sent against, index]

function showTowerState(text) {
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch (error) { body = null; }
  const chip = $("tower-state");
  chip.hidden = !body;
  if (!body) { showAttention(null); showProblems([]); return; }
  chip.textContent = STATE_WORDS[body.state] || body.state;
  chip.dataset.state = body.state;
  chip.title = body.error || (body.attention ? body.attention.reason : "");
  $("tower-error").hidden = body.state !== "error";
  $("tower-error").textContent = body.error ? `Camera: ${body.error}` : "";
  showProblems(body.problems || []);
  showAttention(body.state === "needs-attention" ? body.attention : null);
}

// What the tower could not do lately (a roll it could not draw or publish), oldest first.
function showProblems(problems) {
  $("problems-panel").hidden = !problems.length;
  $("problems-count").textContent = `The tower carried on past ${problems.length === 1 ? "a problem" : `${problems.length} problems`}`;
  $("problems").replaceChildren(...problems.map((text) => {
    const item = document.createElement("li");
    item.textContent = text;
    return item;
  }));
}

function showAttention(attention) {
  shownAttention = attention;
  $("attention-panel").hidden = !attention;
  if (!attention) return;
  $("attention-reason").textContent = attentionReason(attention);
  const items = attention.unreadable.map((u, i) => unreadableItem(u, i, attention));
  const photo = trayPhoto(attention.snapshot, "the tray as the camera saw it");
  if (photo) photo.addEventListener("load", () => cropDice(photo, attention.unreadable, items));
  $("tray").replaceChildren(...[photo, ...trayBoxes(attention)].filter(Boolean));
  $("unreadable").replaceChildren(...items);
  $("attention-kind").textContent = attention.unreadable.length ? "" : attention.kind;
}

// The dice still to enter are counted here, so the line follows each die entered.
function attentionReason(attention) {
  const left = attention.unreadable.length;
  if (attention.kind !== "unreadable" || !left) return attention.reason;
  return `${left === 1 ? "1 die" : `${left} dice`} could not be read: enter ${left === 1 ? "it" : "each"} below.`;
}

// A close-up of each unreadable die, cut from the tray's photo around its box.
function cropDice(photo, unreadable, items) {
  const [width, height] = [photo.naturalWidth, photo.naturalHeight];
  $("tray").style.aspectRatio = `${width} / ${height}`;
  unreadable.forEach((unread, i) => {
    if (!unread.box || unread.box.length !== 4) return;
    const [x0, y0, x1, y1] = unread.box;
    const side = Math.max((x1 - x0) * width, (y1 - y0) * height) * 1.5;
    const left = Math.min(Math.max((x0 + x1) / 2 * width - side / 2, 0), Math.max(width - side, 0));
    const top = Math.min(Math.max((y0 + y1) / 2 * height - side / 2, 0), Math.max(height - side, 0));
    const canvas = items[i].querySelector("canvas.crop");
    canvas.getContext("2d").drawImage(photo, left, top, side, side, 0, 0, canvas.width, canvas.height);
    canvas.hidden = false;
  });
}

function trayBoxes(attention) {
  const read = attention.dice.map((d) => trayBox(d.box, `${d.value}`, "read", `${d.kind} read as ${d.value}`));
  const unread = attention.unreadable.map((u) => trayBox(u.box, `#${u.index}`, "unread", u.reason));
  return [...read, ...unread].filter(Boolean);
}

function trayBox(box, label, kind, title) {
  if (!box || box.length !== 4) return null;
  const mark = document.createElement("div");
  mark.className = `spot ${kind}`;
  mark.textContent = label;
  mark.title = title;
  const [x0, y0, x1, y1] = box.map((v) => Math.min(Math.max(v, 0), 1) * 100);
  Object.assign(mark.style, { left: `${x0}%`, top: `${y0}%`, width: `${x1 - x0}%`, height: `${y1 - y0}%` });
  return mark;
}

// The dice the tower knows, with the faces each shows as the camera reads it (config.json).
const dieNames = () => config.dice.map((die) => die.name);

// The kind an unreadable die most likely is: that of the dice read, else a die the declared
// roll names among its own fields.
function likelyKind(attention) {
  const counts = {};
  for (const d of attention.dice) counts[d.kind] = (counts[d.kind] || 0) + 1;
  const best = Object.keys(counts).sort((a, b) => counts[b] - counts[a])[0];
  const params = (lastSession && lastSession.declared && lastSession.declared.params) || {};
  return best || Object.values(params).find((value) => dieNames().includes(value)) || "d6";
}

function unreadableItem(unread, position, attention) {
  const item = document.createElement("li");
  item.className = "unreadable";
  item.dataset.index = unread.index;
  const title = document.createElement("p");
  title.textContent = `Die #${unread.index}: ${unread.reason}`;
  const crop = document.createElement("canvas");
  crop.className = "crop";
  crop.width = crop.height = 128;
  crop.hidden = true;  // until the tray's photo is in
  crop.setAttribute("aria-label", `close-up of die #${unread.index}`);
  const kind = document.createElement("select");
  kind.className = "kind gm-only";  // a player sees the die, the GM enters it
  kind.setAttribute("aria-label", `kind of die #${unread.index}`);
  for (const name of dieNames()) kind.add(new Option(name, name));
  kind.value = unread.kind || likelyKind(attention);
  const faces = document.createElement("div");
  faces.className = "faces gm-only";
  // the reader's guesses are for the kind it saw (any kind, when it was not sure of that)
  const guesses = () => (!unread.kind || kind.value === unread.kind ? unread.faces || [] : []);
  const drawFaces = () => faces.replaceChildren(...facePicker(unread.index, kind.value, attention, guesses()));
  kind.addEventListener("change", drawFaces);
  drawFaces();
  item.append(title, crop, kind, faces, notADie(unread.index, attention));
  return item;
}

// The button that tells the tower this is no die: it is left out of the reading.
function notADie(index, attention) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "not-a-die gm-only";
  button.textContent = "Not a die";
  button.setAttribute("aria-label", `#${index} is not a die`);
  button.addEventListener("click", () => pendingFix.set(send("die", { index, not_a_die: true }), [attention, index]));
  return button;
}

// The faces a kind shows as the camera reads it (a units d10 0..9, a tens d10 00..90); null
// where there are too many to tap (a d100: typed in).
function faceValues(kind) {
  const die = config.dice.find((d) => d.name === kind);
  return die && die.faces.length <= 20 ? die.faces : null;
}

// One button per face, the camera's own guesses first.
function facePicker(index, kind, attention, guesses) {
  const values = faceValues(kind);
  if (!values) return [faceInput(index, kind, attention)];
  const buttons = [];
  const ordered = [...guesses.filter((v) => values.includes(v)), ...values.filter((v) => !guesses.includes(v))];
  for (const value of ordered) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = guesses.includes(value) ? "face guess" : "face";
    button.dataset.face = value;
    button.textContent = kind === "d10-tens" ? String(value).padStart(2, "0") : value;
    button.setAttribute("aria-label", `die #${index} shows ${value}`);
    button.addEventListener("click", () => fixDie(index, kind, value, attention));
    buttons.push(button);
  }
  return buttons;
}

function faceInput(index, kind, attention) {
  const form = document.createElement("form");
  form.innerHTML = '<input type="number" min="1" max="100" inputmode="numeric" aria-label="face"><button>Set</button>';
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    fixDie(index, kind, Number(form.elements[0].value), attention);
  });
  return form;
}

function fixDie(index, kind, value, attention) {
  const id = send("die", { index, kind, value });
  pendingFix.set(id, [attention, index]);
}

// A die entered (or said to be none): the loop drops it from the list, unless the tower has already sent the
// list as it now is. The others keep their numbers (a die keeps one for the whole throw).
function attentionReplied(reply) {
  const fix = pendingFix.get(reply.id);
  pendingFix.delete(reply.id);
  if (!fix || !reply.ok || fix[0] !== shownAttention) return;
  const [attention, index] = fix;
  const rest = attention.unreadable.filter((u) => u.index !== index);
  showAttention(rest.length ? { ...attention, unreadable: rest } : null);
}

function wireAttention() {
  $("attention-reread").addEventListener("click", () => send("reread", {}));
  $("attention-rethrow").addEventListener("click", () => send("rethrow", {}));
}

document.addEventListener("DOMContentLoaded", wireAttention);  // after display.js has run
