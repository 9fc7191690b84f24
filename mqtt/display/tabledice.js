// The "Table's dice" panel, from the retained `dice`: each die the table taught, with its
// colour, kind, pips or numerals and how far it is taught. Uses `$` from display.js.
"use strict";

function showTableDice(body) {
  const dice = body.dice || [];
  $("table-dice-panel").hidden = false;
  $("table-dice-empty").hidden = dice.length > 0;
  $("table-dice").replaceChildren(...dice.map((die) => tableDieRow(die, body.enough)));
  const problems = (body.problems || []).map((line) => {
    const item = document.createElement("li");
    item.textContent = line;
    return item;
  });
  $("table-dice-problems").replaceChildren(...problems);
}

function tableDieRow(die, enough) {
  const row = document.createElement("li");
  row.className = "table-die";
  row.dataset.name = die.name;
  const swatch = document.createElement("span");
  swatch.className = "swatch";
  swatch.style.background = die.colour;
  const name = document.createElement("strong");
  name.textContent = die.name;
  const what = document.createElement("span");
  what.className = "muted";
  what.textContent = ` ${die.kind}, ${die.printed}, ${die.photos} photo${die.photos === 1 ? "" : "s"}`;
  const short = document.createElement("span");
  short.className = "short";
  short.textContent = die.short.length
    ? ` · under ${enough} photos: ${die.short.join(" ")}` : " · ready";
  row.append(swatch, name, what, short);
  return row;
}
