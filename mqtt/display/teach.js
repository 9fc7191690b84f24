// The guided teach flow (`tidetower teach --config`), from the retained `teach` topic: the
// faces still to show, and the camera's reading of each throw, confirmed with one tap
// (cmd/teach). Uses `$` and `send` from display.js (loaded after this file).
"use strict";

const TEACH_STEPS = {
  "throw": "Throw the die into the tower.",
  "confirm": "What does the die show? Tap its face.",
  "teaching": "Learning the faces…",
  "done": "Taught.",
  "refused": "Not taught.",
};

function showTeach(text) {
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch (error) { body = null; }
  if (body && !(Array.isArray(body.faces) && Array.isArray(body.taught))) body = null;
  $("teach-panel").hidden = !body;
  if (!body) return;
  const name = body.name ? ` “${body.name}”` : "";
  $("teach-title").textContent = `Teaching the ${body.die}${name}`;
  $("teach-step").textContent = [TEACH_STEPS[body.step] || body.step, body.message].filter(Boolean).join(" ");
  const left = body.faces.filter((face) => !body.taught.includes(face));
  $("teach-progress").textContent = `${body.taught.length} of ${body.faces.length} faces taught` +
    (left.length ? `; still to show: ${left.map((f) => teachFaceText(body.die, f)).join(" ")}` : "");
  $("teach-faces").replaceChildren(...(body.step === "confirm" ? teachButtons(body, left) : []));
}

function teachFaceText(die, face) {
  return die === "d10-tens" ? String(face).padStart(2, "0") : String(face);
}

// One button per face still to teach, the camera's guess first and outlined.
function teachButtons(body, left) {
  const guess = left.includes(body.guess) ? [body.guess] : [];
  return [...guess, ...left.filter((face) => face !== body.guess)].map((face) => {
    const button = document.createElement("button");
    button.type = "button";
    button.className = face === body.guess ? "face guess" : "face";
    button.dataset.face = face;
    button.textContent = teachFaceText(body.die, face);
    button.setAttribute("aria-label", `the ${body.die} shows ${teachFaceText(body.die, face)}`);
    button.addEventListener("click", () => answerTeach(face));
    return button;
  }).concat([againButton()]);
}

// One answer a throw: the buttons wait for the next step, or come back if it is refused.
function answerTeach(value) {
  for (const button of $("teach-faces").querySelectorAll("button")) button.disabled = true;
  send("teach", { value });
}

function teachReplied(reply) {
  if (reply.command !== "teach" || reply.ok) return;
  for (const button of $("teach-faces").querySelectorAll("button")) button.disabled = false;
}

// The throw shows a face taught already (or none clearly): keep no photo, throw again.
function againButton() {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "again";
  button.textContent = "Taught already: throw again";
  button.addEventListener("click", () => answerTeach(null));
  return button;
}
