// The Dice, "Bar over the session" and Luck panels, from the retained `stats`: drawn as
// SVG by the page itself (no chart library: the table's network may have no internet).
// Uses `$` from display.js.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const CHART = { width: 320, height: 120, left: 4, right: 4, top: 6, foot: 14 };
const Z95 = 1.96;  // a fair die's count of a face lies within 1.96 standard deviations 95 % of the time

// An SVG element with its attributes, and a `<title>` (its tooltip) when one is given.
function svgNode(name, attributes, title) {
  const node = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (title) {
    const tip = document.createElementNS(SVG_NS, "title");
    tip.textContent = title;
    node.append(tip);
  }
  return node;
}

function svgText(x, y, text, attributes = {}) {
  const node = svgNode("text", { x, y, ...attributes });
  node.textContent = text;
  return node;
}

function showStats(stats) {
  showDiceStats(stats.dice || []);
  showTrack(stats.track);
  showLuck(stats.luck);
}

// --- the Dice panel: a bar per face, the expected count and a fair die's 95 % band -------

function showDiceStats(dice) {
  $("dice-panel").hidden = !dice.length;
  $("dice-charts").replaceChildren(...dice.map(dieFigure));
}

function dieFigure(die) {
  const figure = document.createElement("figure");
  figure.className = "die-chart";
  figure.dataset.die = die.die;
  const title = document.createElement("h3");
  title.textContent = `${die.named || die.die} · ${die.throws} throw${die.throws === 1 ? "" : "s"}`;
  const verdict = document.createElement("p");
  verdict.className = "verdict";
  verdict.textContent = die.verdict;
  const figures = document.createElement("p");
  figures.className = "muted figures";
  figures.textContent = dieFigures(die);
  figure.append(title, faceChart(die), verdict, figures);
  return figure;
}

function dieFigures(die) {
  const typed = die.typed ? ` (${die.typed} typed by the GM)` : "";
  return `${die.throws} throws${typed}; χ² ${die.chi2.toFixed(2)} on ${die.df} degrees of freedom,`
    + ` p = ${die.p.toPrecision(2)}; about ${die.throws_needed} throws tell a 10 % bias on one face`;
}

// Half the width of the 95 % band of a fair die's count of one face: 1.96 sd of a binomial.
function bandHalf(throws, faces) {
  const p = 1 / faces;
  return Z95 * Math.sqrt(throws * p * (1 - p));
}

function faceChart(die) {
  const faces = Object.keys(die.faces).map(Number).sort((a, b) => a - b);
  const counts = faces.map((face) => die.faces[String(face)]);
  const half = bandHalf(die.throws, faces.length);
  const { width, height, left, right, top, foot } = CHART;
  const plot = height - top - foot;
  const most = Math.max(...counts, die.expected + half, 1);
  const y = (value) => top + plot - (value / most) * plot;
  const step = (width - left - right) / faces.length;
  const low = Math.max(0, die.expected - half), high = die.expected + half;
  const svg = svgNode("svg", { viewBox: `0 0 ${width} ${height}`, class: "chart", role: "img",
    "aria-label": `${die.named || die.die}: how often each face came up` });
  svg.append(svgNode("rect", { class: "band", x: left, width: width - left - right, y: y(high),
    height: y(low) - y(high) }, `95 % of a fair die's counts: ${low.toFixed(1)} to ${high.toFixed(1)}`));
  faces.forEach((face, i) => svg.append(...faceBar(face, counts[i], left + i * step, step, y, faces.length)));
  svg.append(svgNode("line", { class: "expected", x1: left, x2: width - right, y1: y(die.expected),
    y2: y(die.expected) }, `expected ${die.expected.toFixed(1)} per face`));
  return svg;
}

// One face's bar and, where there is room, its number under it.
function faceBar(face, count, x, step, y, faces) {
  const bottom = y(0);
  const bar = svgNode("rect", { class: "face-bar", x: x + step * 0.15, width: step * 0.7,
    y: y(count), height: bottom - y(count), "data-face": face, "data-count": count },
  `${face}: ${count}`);
  const every = faces > 12 ? 5 : 1;
  const shown = faces <= 12 || face % every === 0 || face === 1;
  if (!shown) return [bar];
  return [bar, svgText(x + step / 2, CHART.height - 3, String(face), { class: "face-label" })];
}

// --- the bar over the session: a step chart of the marker, a dot per move ------------------

function showTrack(track) {
  const points = (track && track.points) || [];
  $("track-panel").hidden = !points.length;
  if (!points.length) { $("track-chart").replaceChildren(); return; }
  $("track-chart").replaceChildren(trackChart(track, points));
  const routs = points.filter((point) => point.routed).length;
  const moves = Math.max(track.moves || 0, points.length);  // the latest 250 are drawn (track.earlier counts the rest)
  $("track-summary").textContent = `· ${moves} move${moves === 1 ? "" : "s"}`
    + (routs ? `, ${routs} rout${routs === 1 ? "" : "s"}` : "");
}

const TRACK = { width: 320, height: 170, left: 6, right: 6, top: 18, bottom: 18 };

// Each point is drawn as a share of the way along its own bar (a set-up may change the
// bar's length): its low end, the first side's, at the foot; its high end at the top.
function trackChart(track, points) {
  const { width, height, left, right, top, bottom } = TRACK;
  const x = (k) => left + (k / (points.length + 1)) * (width - left - right);
  const y = (point, v) => top + (1 - (v - point.low) / Math.max(1, point.high - point.low))
    * (height - top - bottom);
  const svg = svgNode("svg", { viewBox: `0 0 ${width} ${height}`, class: "chart track", role: "img",
    "aria-label": "where the marker stood after each move, between the bar's ends" });
  svg.append(...trackEnds(track, x(0), x(points.length + 1)));
  svg.append(...setupLines(points, x));
  svg.append(svgNode("path", { class: "steps", d: stepPath(points, x, y) }));
  points.forEach((point, i) => svg.append(moveDot(point, x(i + 1), y(point, point.after), track)));
  return svg;
}

// The low and high ends: a line each, and the tracker's words for them in their sides' colours.
function trackEnds(track, x0, x1) {
  const ends = (track.tracker && track.tracker.ends) || [track.label_a, track.label_b];
  const foot = TRACK.height - TRACK.bottom, head = TRACK.top;
  const line = (y, colour) => svgNode("line", { class: "end", x1: x0, x2: x1, y1: y, y2: y, stroke: colour });
  const label = (y, words, colour) => svgText(x0, y, words, { class: "end-label", fill: colour });
  return [
    line(foot, track.colour_a), line(head, track.colour_b),
    label(foot + 12, ends[0], track.colour_a), label(head - 6, ends[1], track.colour_b),
  ];
}

// Where a move starts elsewhere than the last one ended, or on a bar of another length, the
// tracker was set up afresh between them: a dashed line there.
function setupLines(points, x) {
  const lines = [];
  for (let i = 1; i < points.length; i++) {
    const [was, now] = [points[i - 1], points[i]];
    if (was.after === now.before && was.low === now.low && was.high === now.high) continue;
    const at = (x(i) + x(i + 1)) / 2;
    lines.push(svgNode("line", { class: "setup", x1: at, x2: at, y1: TRACK.top,
      y2: TRACK.height - TRACK.bottom }, `set up afresh (${now.low} to ${now.high})`));
  }
  return lines;
}

// The marker's path: flat between moves, a step at each (and where the tracker was set up
// afresh, a step to where the next move starts).
function stepPath(points, x, y) {
  const parts = [`M${x(0)},${y(points[0], points[0].before)}`];
  points.forEach((point, i) => {
    parts.push(`H${x(i + 1)}`, `V${y(point, point.before)}`, `V${y(point, point.after)}`);
  });
  parts.push(`H${x(points.length + 1)}`);
  return parts.join(" ");
}

function moveDot(point, cx, cy, track) {
  const routed = point.routed ? (point.routed === "a" ? track.label_a : track.label_b) : "";
  const tip = `${point.who || "?"}: ${point.cause} (${point.before} → ${point.after})`
    + (routed ? ` · ${routed} routs` : "");
  const dot = svgNode("circle", { class: point.routed ? "move rout" : "move", cx, cy,
    r: point.routed ? 5 : 3, "data-seq": point.seq, "data-after": point.after }, tip);
  if (!point.routed) return dot;
  const group = svgNode("g", { class: "rout-mark" });
  group.append(dot, svgText(cx - 7, cy + (point.routed === "a" ? -8 : 14), `${routed} routs`,
    { class: "rout-label" }));
  return group;
}

// --- the Luck panel: per actor and side, the sum expected against the sum rolled ----------

function showLuck(luck) {
  const tallies = (luck && luck.tallies) || [];
  $("luck-panel").hidden = !tallies.length;
  if (!tallies.length) return;
  const most = Math.max(1, ...tallies.map((t) => Math.max(t.expected, t.rolled)));
  $("luck-rows").replaceChildren(...tallies.map((t) => luckRow(t, most)));
  $("luck-best").replaceChildren(...luck.best.map((t) => throwItem(t, true)));
  $("luck-worst").replaceChildren(...luck.worst.map((t) => throwItem(t, false)));
  $("luck-summary").textContent = `· ${luck.throws} throw${luck.throws === 1 ? "" : "s"} against the odds`;
  showUncounted(luck);
}

function luckTone(verdict) {
  if (verdict.startsWith("luckier")) return "luckier";
  return verdict.startsWith("unluckier") ? "unluckier" : "";
}

function luckRow(t, most) {
  const row = document.createElement("div");
  row.className = "luck-row";
  Object.assign(row.dataset, { by: t.by, name: t.name, counts: t.counts });
  const name = document.createElement("span");
  name.className = "luck-name";
  name.textContent = `${t.name} · ${t.counts}`;
  const verdict = document.createElement("p");
  verdict.className = `verdict ${luckTone(t.verdict)}`.trim();
  verdict.textContent = t.verdict;
  const figures = document.createElement("p");
  figures.className = "muted figures";
  figures.textContent = `${t.throws} throw${t.throws === 1 ? "" : "s"}: expected`
    + ` ${t.expected.toFixed(1)}, rolled ${t.rolled} (z = ${signed(t.z)}, p = ${t.p.toPrecision(2)})`;
  row.append(name, luckBars(t, most), verdict, figures);
  return row;
}

function signed(z) {
  return `${z >= 0 ? "+" : "−"}${Math.abs(z).toFixed(2)}`;
}

// Two thin bars on one scale: the sum expected (light) over the sum rolled (dark).
function luckBars(t, most) {
  const width = 300, tall = 10;
  const w = (value) => Math.max(0, (value / most) * width);
  const svg = svgNode("svg", { viewBox: `0 0 ${width} ${2 * tall + 4}`, class: "luck-bars", role: "img",
    "aria-label": `${t.name}: expected ${t.expected.toFixed(1)}, rolled ${t.rolled}` });
  svg.append(
    svgNode("rect", { class: "expected-bar", x: 0, y: 0, height: tall, width: w(t.expected),
      "data-value": t.expected.toFixed(1) }, `expected ${t.expected.toFixed(1)}`),
    svgNode("rect", { class: `rolled-bar ${luckTone(t.verdict)}`.trim(), x: 0, y: tall + 4,
      height: tall, width: w(t.rolled), "data-value": t.rolled }, `rolled ${t.rolled}`),
  );
  return svg;
}

function throwItem(t, luckiest) {
  const item = document.createElement("li");
  Object.assign(item.dataset, { seq: t.seq, who: t.who });
  const chance = luckiest ? t.chance : t.chance_at_most;
  item.textContent = `${t.who} (#${t.seq}): ${t.dice} rolled ${t.label} ${t.counts}, expected`
    + ` ${t.expected.toFixed(2)}; chance of ${luckiest ? "at least" : "at most"} that ${chance.toPrecision(2)}`;
  return item;
}

function showUncounted(luck) {
  const note = $("luck-uncounted");
  note.hidden = !luck.uncounted;
  note.textContent = luck.uncounted
    ? `${luck.uncounted} throw${luck.uncounted === 1 ? "" : "s"} not counted: `
      + luck.reasons.map((r) => `${r.reason} (${r.count})`).join("; ")
    : "";
}
