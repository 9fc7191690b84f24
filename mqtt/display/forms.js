// The GM's "Declare next roll" and set-up forms, built from the active system's description
// (`session.description`: its settings, its modes and the fields each takes), rebuilt when the
// system or the sides change. A declaration's shared fields go top-level in cmd/declare, the
// system's own in `params`; the set-up form sends each setting to cmd/setup.
// Uses `$` and `send` from display.js.
"use strict";

const SHARED_FIELDS = ["actor", "side", "reply_to", "mode", "pool"];
// What a system that describes no declaration still takes: RollContext's own fields.
const PLAIN_FIELDS = [
  { name: "side", label: "Side", kind: "side" },
  { name: "pool", label: "Pool", kind: "whole", minimum: 0, maximum: 50 },
  { name: "reply_to", label: "Reply to", kind: "text", maximum: 64 },
];
const ACTOR = { name: "actor", label: "Actor", kind: "text", maximum: 80 };
let formsFor = null;               // what the forms on screen were built from
let description = {};              // the active system's description
let sides = {};                    // the sides' names, for a side field

function showForms(session) {
  const key = JSON.stringify([session.system, session.description, session.sides]);
  if (key === formsFor) return;
  formsFor = key;
  description = session.description || {};
  sides = session.sides || {};
  buildDeclare();
  buildSetup();
}

// The label a field of the declaration is said by ("Reply to"), or its name.
function fieldLabel(name) {
  const found = (description.fields || []).find((f) => f.name === name);
  return found ? found.label : name;
}

function buildDeclare() {
  const form = $("form-declare");
  const kept = formValues(form);
  const modes = description.modes || [];
  const parts = [fieldInput(describedField("actor") || ACTOR), modes.length ? modeSelect(modes) : modeText()];
  const fields = document.createElement("div");
  fields.id = "declare-fields";
  fields.className = "fields";
  form.replaceChildren(...parts, fields, button("Declare"));
  const mode = form.elements.mode;
  if (kept.mode && (!mode.options || [...mode.options].some((o) => o.value === kept.mode))) mode.value = kept.mode;
  buildModeFields();
  restore(form, kept);
}

function describedField(name) {
  return (description.fields || []).find((f) => f.name === name);
}

function modeSelect(modes) {
  const select = document.createElement("select");
  select.name = "mode";
  select.dataset.kind = "choice";
  if (!description.default_mode) select.add(new Option("–", ""));
  for (const mode of modes) select.add(new Option(mode.name, mode.name));
  select.value = description.default_mode || "";
  select.addEventListener("change", buildModeFields);
  return labelled("Mode", select);
}

function modeText() {
  return fieldInput({ name: "mode", label: "Mode", kind: "text", maximum: 20 });
}

// The chosen mode's fields (every field, while no mode is chosen); kept values stay.
function buildModeFields() {
  const form = $("form-declare");
  const kept = formValues(form);
  const names = modeFieldNames(form.elements.mode.value);
  const fields = names.map((name) => describedField(name) || PLAIN_FIELDS.find((f) => f.name === name));
  const mode = (description.modes || []).find((m) => m.name === form.elements.mode.value);
  const help = document.createElement("p");
  help.className = "muted help";
  help.textContent = mode && mode.help ? mode.help : "";
  $("declare-fields").replaceChildren(...fields.filter(Boolean).map(fieldInput), help);
  restore(form, kept);
  const action = mode && mode.throws === false;  // a GM action: applied at once, no dice
  form.querySelector("button").textContent = action ? `Apply ${mode.name}` : "Declare";
}

function modeFieldNames(chosen) {
  const described = description.fields || [];
  if (!described.length && !(description.modes || []).length) return PLAIN_FIELDS.map((f) => f.name);
  const mode = (description.modes || []).find((m) => m.name === chosen);
  const names = mode ? mode.fields : described.map((f) => f.name);
  return names.filter((name) => name !== "actor" && name !== "mode");
}

function buildSetup() {
  const settings = description.settings || [];
  $("setup-summary").textContent = description.setup || "Set up";
  $("form-setup").replaceChildren(...settings.map(fieldInput), button(description.setup || "Set up"));
}

function button(text) {
  const element = document.createElement("button");
  element.textContent = text;
  return element;
}

function labelled(text, input, check) {
  const label = document.createElement("label");
  if (check) { label.className = "check"; label.append(input, ` ${text}`); } else label.append(`${text} `, input);
  return label;
}

// One field's input, by its kind, prefilled with its default.
function fieldInput(field) {
  const input = (INPUTS[field.kind] || textInput)(field);
  input.name = field.name;
  input.dataset.kind = field.kind;
  if (field.help) input.title = field.help;
  return labelled(field.label, input, field.kind === "flag");
}

function wholeInput(field) {
  const input = document.createElement("input");
  input.type = "number";
  input.inputMode = "numeric";
  if (field.minimum != null) input.min = field.minimum;
  if (field.maximum != null) input.max = field.maximum;
  if (field.default != null) input.value = field.default;
  return input;
}

function textInput(field) {
  const input = document.createElement("input");
  input.maxLength = field.maximum || 80;
  if (field.default != null) input.value = field.kind === "names" ? field.default.join(", ") : field.default;
  if (field.kind === "names") input.placeholder = "names, by commas";
  return input;
}

function choiceInput(field) {
  const select = document.createElement("select");
  if (field.default == null) select.add(new Option("–", ""));
  for (const choice of field.choices || []) select.add(new Option(choice, choice));
  select.value = field.default == null ? "" : field.default;
  return select;
}

function sideInput() {
  const select = document.createElement("select");
  select.add(new Option("–", ""));
  for (const side of ["a", "b"]) select.add(new Option(sides[side] ? sides[side].label : side.toUpperCase(), side));
  return select;
}

function flagInput(field) {
  const input = document.createElement("input");
  input.type = "checkbox";
  input.checked = field.default === true;
  return input;
}

const INPUTS = { whole: wholeInput, text: textInput, names: textInput, choice: choiceInput, side: sideInput, flag: flagInput };

// A form's values by name, as the wire takes them; an empty field is left out.
function formValues(form) {
  const values = {};
  for (const input of form.elements) {
    if (!input.name || !input.dataset.kind) continue;
    if (input.type === "checkbox") values[input.name] = input.checked;
    else if (input.value !== "") values[input.name] = readValue(input);
  }
  return values;
}

function readValue(input) {
  if (input.dataset.kind === "whole") return Number(input.value);
  if (input.dataset.kind === "names") return input.value.split(",").map((n) => n.trim()).filter(Boolean);
  return input.value;
}

// Values typed before a rebuild, put back where the same field is still asked for.
function restore(form, values) {
  for (const [name, value] of Object.entries(values)) {
    const input = form.elements[name];
    if (!input || !input.dataset || name === "mode") continue;
    if (input.type === "checkbox") input.checked = value;
    else if (Array.isArray(value)) input.value = value.join(", ");
    else if (!input.options || [...input.options].some((o) => o.value === String(value))) input.value = value;
  }
}

function declareBody(form) {
  const body = { params: {} };
  for (const [name, value] of Object.entries(formValues(form))) {
    if (SHARED_FIELDS.includes(name)) body[name] = value;
    else body.params[name] = value;
  }
  return body;
}

let applying = null;  // the declare of a GM action, applied with an empty throw once accepted

// A GM action's declaration accepted: record it, as a throw of no dice.
function formsReplied(reply) {
  if (reply.id !== applying) return;
  applying = null;
  if (reply.ok) send("roll", { dice: [] });
}

function wireForms() {
  $("form-declare").addEventListener("submit", (event) => {
    event.preventDefault();
    const chosen = (description.modes || []).find((m) => m.name === event.target.elements.mode.value);
    const id = send("declare", declareBody(event.target));
    applying = chosen && chosen.throws === false ? id : null;
  });
  $("form-setup").addEventListener("submit", (event) => {
    event.preventDefault();
    send("setup", formValues(event.target));
  });
}

document.addEventListener("DOMContentLoaded", wireForms);
