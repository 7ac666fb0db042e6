// The input for a key's value, made from its schema: a switch for bool, a select for enum, a
// number field with min and max for int and double, a text field for string, and a JSON
// editor for json, array and keys without a schema. The value typed is sent as JSON text, as
// typed where it is JSON already (numbers stay exact); whether it fits is prefsd's to say.

import { h } from "/ui/dom.js";

const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * An editor for a value of `schema` (or undefined), its control's id `id`. Answers
 * `{ control, element, read(), set(value) }`: `read()` gives `{ json }`, the JSON text to store,
 * or `{ problem }` when what was typed is no value at all; `set(value)` shows a value
 * (undefined: none).
 */
export function valueEditor(schema, id) {
  switch (schema?.type) {
    case "bool":
      return switchEditor(id);
    case "enum":
      return selectEditor(schema.choices, id);
    case "int":
    case "double":
      return numberEditor(schema, id);
    case "string":
      return textEditor(id);
    default:
      return jsonEditor(id);
  }
}

function switchEditor(id) {
  const state = h("span", { class: "switch-state", "aria-hidden": "true" });
  const control = h("input", {
    type: "checkbox", role: "switch", id, class: "switch", "data-testid": "value-input",
    on: { change: () => { state.textContent = String(control.checked); } },
  });
  return {
    control,
    element: h("span", { class: "switch-wrap" }, control, state),
    read: () => ({ json: String(control.checked) }),
    set(value) {
      control.checked = value === true;
      state.textContent = String(control.checked);
    },
  };
}

function selectEditor(choices, id) {
  const placeholder = h("option", { value: "", text: "(none)" });
  const control = h("select", { id, "data-testid": "value-input" }, placeholder,
    choices.map((choice) => h("option", { value: choice, text: choice })));
  return {
    control,
    element: control,
    read: () => (control.value === "" ? { problem: `Choose one of: ${choices.join(", ")}.` } : { json: JSON.stringify(control.value) }),
    set(value) {
      control.value = typeof value === "string" && choices.includes(value) ? value : "";
    },
  };
}

function numberEditor(schema, id) {
  const control = h("input", {
    type: "number", id, "data-testid": "value-input", inputmode: schema.type === "int" ? "numeric" : "decimal",
    step: schema.type === "int" ? "1" : "any", min: schema.min, max: schema.max,
  });
  return {
    control,
    element: control,
    read() {
      const text = control.value.trim();
      if (text === "") return { problem: control.validity.badInput ? "That is not a number." : "Enter a number." };
      return { json: JSON_NUMBER.test(text) ? text : String(Number(text)) };
    },
    set(value) {
      control.value = typeof value === "number" ? String(value) : "";
    },
  };
}

function textEditor(id) {
  const control = h("input", { type: "text", id, "data-testid": "value-input", spellcheck: "false" });
  return {
    control,
    element: control,
    read: () => ({ json: JSON.stringify(control.value) }),
    set(value) {
      control.value = typeof value === "string" ? value : "";
    },
  };
}

function jsonEditor(id) {
  const control = h("textarea", { id, rows: "6", class: "json", spellcheck: "false", "data-testid": "value-input" });
  return {
    control,
    element: control,
    read() {
      const text = control.value.trim();
      try {
        JSON.parse(text);
      } catch (error) {
        return { problem: `That is not JSON: ${error.message}` };
      }
      return { json: text };
    },
    set(value) {
      control.value = value === undefined ? "" : JSON.stringify(value, null, 2);
    },
  };
}
