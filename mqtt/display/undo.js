// Undo moves the shared tracker back, so the page asks first: which roll it takes back and
// where the tracker goes; the undo names that roll (a roll recorded meanwhile is not taken back).
// Redo puts back the roll undone last, while nothing else has changed (the tower says so in
// `session.redo`). A refused undo or redo says why beside the buttons (e.g. the tracker set
// up afresh since that roll). Uses `$`, `send`, `faceText`, `lastSession` and `lastTracker`
// from the other scripts.
"use strict";

let undoing = null;  // the roll the confirmation on screen is about

function askUndo() {
  const last = lastSession && lastSession.last_roll;
  if (!last) { sendUndo("undo", {}); return; }  // nothing known to take back: the tower says why
  undoing = last;
  const who = last.roller || (last.context && last.context.actor) || "";
  const moved = last.motions || [];
  const back = moved.length ? ` ${trackerName()} goes back from ${moved[moved.length - 1].after} to ${moved[0].before}.` : "";
  const dice = diceWords(last.dice || []);
  $("undo-what").textContent = `Take back #${last.seq}${who ? ` (${who})` : ""}${dice ? `, ${dice}` : ""}: ${last.outcome.summary}?${back}`;
  $("undo-confirm").hidden = false;
  $("undo").hidden = true;
  $("undo-yes").focus();
}

// What the table calls its tracker, as a sentence begins: "The bar".
function trackerName() {
  const name = (lastTracker && lastTracker.tracker && lastTracker.tracker.name) || "the bar";
  return name.charAt(0).toUpperCase() + name.slice(1);
}

// The dice of a roll by kind, as the GM would say them: "d8 8, 7, 6 and d20 10".
function diceWords(dice) {
  const byKind = new Map();
  for (const die of dice) byKind.set(die.kind, [...(byKind.get(die.kind) || []), faceText(die)]);
  return [...byKind].map(([kind, faces]) => `${kind} ${faces.join(", ")}`).join(" and ");
}

function closeUndo() {
  undoing = null;
  $("undo-confirm").hidden = true;
  $("undo").hidden = false;
}

function confirmUndo() {
  const roll = undoing;
  closeUndo();
  sendUndo("undo", roll ? { roll_id: roll.id } : {});
}

function sendUndo(command, body) {
  $("undo-status").className = "muted";
  $("undo-status").textContent = `${command}: sent…`;
  send(command, body);
}

// The tower's answer to an undo or a redo, beside their buttons: done, or refused and why.
function undoReplied(reply) {
  if (reply.command !== "undo" && reply.command !== "redo") return;
  const status = $("undo-status");
  status.className = reply.ok ? "ok" : "error";
  status.textContent = reply.ok ? `${reply.command}: done` : `${reply.command} refused: ${reply.error.message}`;
}

// The redo button, while the tower has a roll to put back.
function showRedo(session) {
  const redo = session.redo;
  $("redo").hidden = !redo;
  $("redo").textContent = redo ? `Redo #${redo.seq}` : "Redo";
  $("redo").title = redo ? `put back: ${redo.summary}` : "";
}

function wireUndo() {
  $("undo").addEventListener("click", askUndo);
  $("undo-yes").addEventListener("click", confirmUndo);
  $("undo-no").addEventListener("click", closeUndo);
  $("redo").addEventListener("click", () => sendUndo("redo", {}));
}

document.addEventListener("DOMContentLoaded", wireUndo);
