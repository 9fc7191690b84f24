// Learning from the GM's corrections: how many the tower keeps, a button to learn from
// them, and what the last learning did (dice right among those set aside, before and after).
"use strict";

const LEARN_AT_LEAST = 5;  // firmware/learn.py MIN_EXAMPLES: fewer cannot be checked

function percent(share) {
  return `${(share * 100).toFixed(0)} %`;
}

function learnResult(body) {
  if (body.state === "learning") return "Learning… the tower keeps reading meanwhile.";
  if (body.state === "failed") return `Learning failed: ${body.message}`;
  if (body.state !== "adopted" && body.state !== "kept") return "";
  const figures = `taught ${body.taught}, checked on ${body.checked} set aside: ` +
    `${percent(body.before)} of their dice right before, ${percent(body.after)} after`;
  return body.state === "adopted" ? `Adopted (${figures}).`
    : `Kept the previous reader: the new one read worse (${figures}).`;
}

function showLearn(body) {
  $("learn-panel").hidden = false;
  const count = body.corrections;
  $("learn-count").textContent = count === 1 ? "1 correction kept" : `${count} corrections kept`;
  const button = $("learn");
  button.disabled = body.state === "learning" || count < LEARN_AT_LEAST;
  button.title = count < LEARN_AT_LEAST ? `at least ${LEARN_AT_LEAST} are needed` : "";
  $("learn-result").textContent = learnResult(body);
  $("learn-result").className = body.state === "failed" ? "error" : "muted";
}
