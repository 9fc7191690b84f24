// Undo moves the shared bar back, so the page asks first: which roll it takes back and where
// the Tide goes; the undo names that roll (a roll recorded meanwhile is not taken back).
// Redo puts back the roll undone last, while nothing else has changed (the tower says so in
// `session.redo`). Uses `$`, `send`, `counted` and `lastSession` from the other scripts.
"use strict";

let undoing = null;  // the roll the confirmation on screen is about

function askUndo() {
  const last = lastSession && lastSession.last_roll;
  if (!last) { send("undo", {}); return; }  // nothing known to take back: the tower says why
  undoing = last;
  const who = last.roller || (last.context && last.context.actor) || "";
  const moved = last.motions || [];
  const tide = moved.length ? ` The Tide goes back from ${moved[moved.length - 1].after} to ${moved[0].before}.` : "";
  $("undo-what").textContent = `Take back #${last.seq}${who ? ` (${who})` : ""}: ${last.outcome.summary}?${tide}`;
  $("undo-confirm").hidden = false;
  $("undo").hidden = true;
  $("undo-yes").focus();
}

function closeUndo() {
  undoing = null;
  $("undo-confirm").hidden = true;
  $("undo").hidden = false;
}

function confirmUndo() {
  const roll = undoing;
  closeUndo();
  send("undo", roll ? { roll_id: roll.id } : {});
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
  $("redo").addEventListener("click", () => send("redo", {}));
}

document.addEventListener("DOMContentLoaded", wireUndo);
