// The table view (`?view=table`, or the toggle in the header): a tablet at the table, read
// from two metres. The tracker, the last result with the dice that scored lit up, what it
// came to and each move of the tracker, the next roll's odds; no GM controls, no history, no
// confidences.
// Uses `$` and `counted` from the other scripts.
"use strict";

function tableView() {
  return document.body.classList.contains("table-view");
}

// Switch views in place (the broker connection stays) and keep it in the address, so a
// reload or a bookmark opens the same view.
function setTableView(on) {
  document.body.classList.toggle("table-view", on);
  const url = new URL(location.href);
  if (on) url.searchParams.set("view", "table");
  else url.searchParams.delete("view");
  try { history.replaceState(null, "", url); } catch (error) { /* a page opened from a file */ }
  $("view-toggle").textContent = on ? "GM view" : "Table view";
  $("view-toggle").setAttribute("aria-pressed", String(on));
}

// Who threw and what it came to, then each move of the tracker, one line each.
function showMoved(event) {
  const lines = [];
  const who = event.roller || (event.context && event.context.actor) || "";
  const facts = (event.outcome && event.outcome.facts) || {};
  const head = [who, headline(event.outcome, who)].filter(Boolean).join(" · ");
  if (head && event.phase === "result") lines.push(movedLine(head, "who"));
  if (event.phase === "result") {
    for (const m of event.motions || []) lines.push(movedLine(`${m.cause}: ${m.before} → ${m.after}`, "motion"));
    if (facts.awaiting_reply) lines.push(movedLine("awaiting a reply", "motion"));
  }
  $("moved").replaceChildren(...lines);
}

// What the roll came to, in the outcome's first clause ("Zhao: 2 hits" says "2 hits").
function headline(outcome, who) {
  const first = outcome && outcome.summary ? outcome.summary.split("; ")[0] : "";
  return who && first.startsWith(`${who}: `) ? first.slice(who.length + 2) : first;
}

function movedLine(text, className) {
  const line = document.createElement("p");
  line.className = className;
  line.textContent = text;
  return line;
}

function wireTableView() {
  const query = new URLSearchParams(location.search);
  setTableView(query.get("view") === "table");
  $("view-toggle").addEventListener("click", () => setTableView(!tableView()));
}

document.addEventListener("DOMContentLoaded", wireTableView);
