// The history, newest first: each roll with its tray photo (served by `tidetower display
// --snapshots`), its number, time and who threw, what it came to and its dice (those the GM
// typed marked), and between the rolls the GM's actions (undo, redo, a tracker set up afresh).
// Uses `$` and `counted` from the other scripts.
"use strict";

function showHistory(session) {
  const entries = [
    ...(session.history || []).map((roll) => ({ after: roll.seq, rank: 0, node: historyRoll(roll) })),
    ...(session.actions || []).map((action) => ({ after: action.after_seq, rank: 1, node: historyAction(action) })),
  ];
  entries.sort((x, y) => x.after - y.after || x.rank - y.rank);  // stable: actions keep their order
  $("history").replaceChildren(...entries.reverse().map((entry) => entry.node));
}

// A photo of the tray, or nothing when the server has no photos' folder (no --snapshots,
// or opened from a file); one it cannot find (pruned, not made yet) goes with its link.
function trayPhoto(name, alt) {
  if (!name || !config.photos) return null;
  const img = document.createElement("img");
  img.src = `snapshots/${encodeURIComponent(name)}`;
  img.alt = alt;
  img.addEventListener("error", () => (img.closest("a") || img).remove());
  return img;
}

function clock(at) {
  const time = document.createElement("time");
  if (at == null) return time;
  const when = new Date(at * 1000);
  time.dateTime = when.toISOString();
  time.textContent = when.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return time;
}

function historyRoll(roll) {
  const item = document.createElement("li");
  item.className = "roll";
  item.dataset.roll = roll.id;
  const photo = trayPhoto(roll.snapshot, `the tray of roll ${roll.seq}`);
  if (photo) {
    const link = document.createElement("a");
    link.className = "thumb";
    link.href = photo.src;
    link.target = "_blank";
    link.append(photo);
    item.append(link);
  }
  const text = document.createElement("div");
  text.className = "what";
  text.append(historyMeta(roll), historyLine("summary", roll.summary), historyDice(roll));
  item.append(text);
  return item;
}

function historyMeta(roll) {
  const meta = document.createElement("div");
  meta.className = "meta";
  const seq = document.createElement("span");
  seq.className = "seq";
  seq.textContent = `#${roll.seq}`;
  const who = document.createElement("span");
  who.className = "who";
  who.textContent = roll.roller || "";
  meta.append(seq, clock(roll.at), who);
  return meta;
}

function historyLine(className, text) {
  const line = document.createElement("div");
  line.className = className;
  line.textContent = text;
  return line;
}

// The dice as text; a die the GM typed is marked, not passed off as a camera read.
function historyDice(roll) {
  const line = historyLine("dice-line", "");
  const typed = new Set(roll.typed || []);
  roll.dice.forEach((die, index) => {
    const part = document.createElement("span");
    part.textContent = typed.has(index) ? `${die} ✎` : die;
    if (typed.has(index)) { part.className = "typed"; part.title = "typed by the GM"; }
    line.append(part, " ");
  });
  return line;
}

function historyAction(action) {
  const item = document.createElement("li");
  item.className = "action";
  item.dataset.action = action.kind;
  const meta = document.createElement("div");
  meta.className = "meta";
  const who = document.createElement("span");
  who.className = "who";
  who.textContent = "GM";
  meta.append(clock(action.at), who);
  const text = document.createElement("div");
  text.className = "what";
  text.append(meta, historyLine("summary", action.text));
  item.append(text);
  return item;
}
