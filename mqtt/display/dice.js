// Dice drawn as faces (d6 pips; the other dice as their outline with the number), and the
// words for a count ("1 hit", "2 hits"). Used by the last roll, the table view and the
// history; loaded before the scripts that call it.
"use strict";

const SHAPES = {
  d4: "50,6 94,88 6,88", d8: "50,4 94,50 50,96 6,50", d10: "50,4 92,42 50,96 8,42",
  "d10-tens": "50,4 92,42 50,96 8,42",
  d12: "50,4 95,37 78,92 22,92 5,37", d20: "50,3 92,27 92,73 50,97 8,73 8,27",
};
const FILLS = { d4: "#3f8f5a", d8: "#3c6fb0", d10: "#b04f8f", "d10-tens": "#2f8f9f",
  d12: "#b08a2f", d20: "#b03c3c", d100: "#7a4fb0", d6: "#c0602f" };
const PIPS = { 1: [[50, 50]], 2: [[28, 28], [72, 72]], 3: [[28, 28], [50, 50], [72, 72]],
  4: [[28, 28], [72, 28], [28, 72], [72, 72]], 5: [[28, 28], [72, 28], [50, 50], [28, 72], [72, 72]],
  6: [[28, 25], [72, 25], [28, 50], [72, 50], [28, 75], [72, 75]] };
const UNSURE = 0.6;  // a camera read under this confidence is outlined

// "1 hit", "3 hits", "1 lot": the word of a count, singular for one.
function counted(count, word) {
  return `${count} ${count === 1 && word.endsWith("s") ? word.slice(0, -1) : word}`;
}

// What a die's face says: a tens d10 prints two digits (00..90).
function faceText(die) {
  return die.kind === "d10-tens" ? String(die.value).padStart(2, "0") : String(die.value);
}

function faceSvg(die) {
  const svg = ['<svg viewBox="0 0 100 100" role="img" aria-label="' + `${die.kind} showing ${die.value}">`];
  if (die.kind === "d6") {
    svg.push('<rect x="6" y="6" width="88" height="88" rx="14" fill="#f5f1e6"/>');
    for (const [x, y] of PIPS[die.value] || []) svg.push(`<circle cx="${x}" cy="${y}" r="8" fill="#222"/>`);
  } else {
    const shape = SHAPES[die.kind];
    const fill = FILLS[die.kind] || "#7a4fb0";
    svg.push(shape ? `<polygon points="${shape}" fill="${fill}"/>` : `<circle cx="50" cy="50" r="45" fill="${fill}"/>`);
    const size = faceText(die).length > 2 ? 26 : 32;
    svg.push(`<text x="50" y="62" font-size="${size}" text-anchor="middle" fill="#fff" font-weight="700">${faceText(die)}</text>`);
  }
  svg.push("</svg>");
  return svg.join("");
}

// One die as drawn: a die the GM typed is marked as typed (it has no camera read); the
// camera's confidence is for the GM's eyes only (.gm-only), an unsure read is outlined.
function dieFace(die, index) {
  const box = document.createElement("div");
  const unsure = !die.typed && die.confidence != null && die.confidence < UNSURE;
  box.className = "die" + (unsure ? " unsure" : "") + (die.typed ? " typed" : "");
  box.dataset.kind = die.kind;
  box.dataset.value = die.value;
  box.title = die.typed ? `die #${index}, typed by the GM` : `die #${index} of the roll`;
  box.innerHTML = faceSvg(die);
  const caption = document.createElement("span");
  caption.className = "caption";
  caption.textContent = `#${index} ${die.kind}`;
  const how = document.createElement("span");
  how.className = die.typed ? "how typed-mark" : "how conf gm-only";
  how.textContent = die.typed ? " ✎ typed" : die.confidence != null ? ` ${(die.confidence * 100).toFixed(0)}%` : "";
  caption.append(how);
  box.append(caption);
  return box;
}

// The dice of a result, those that scored (and the Omen that moved the bar) lit up, from
// the rule system's facts (`scored`, `omen_die`: indices into the roll's dice).
function diceRow(event) {
  const facts = (event.outcome && event.outcome.facts) || {};
  const scored = new Set(facts.scored || []);
  // while it is read, the camera's view of the tray (a d100 as its two d10s); then the rules'
  const shown = event.phase === "new" && (event.reading || []).length ? event.reading : event.dice;
  return shown.map((die, index) => {
    const face = dieFace(die, index);
    if (scored.has(index)) face.classList.add("scored");
    if (facts.omen_die === index) face.classList.add("scored", "omen");
    return face;
  });
}
