// DOM building without innerHTML: every piece of data reaches the page as text (no XSS), and
// nothing here writes a style attribute or an inline handler (the console's CSP forbids both).

const PROPERTIES = new Set(["value", "checked", "disabled", "hidden", "selected", "open", "indeterminate"]);

/**
 * Creates an element. `props` are attributes (`class`, `for`, `aria-*`, `data-testid`, …), but
 * `value`, `checked`, `disabled`, `hidden`, `selected`, `open` are set as properties, `text`
 * as the text content and `on` as event listeners (`{ click: fn }`). Children are nodes or
 * strings (as text); null, undefined and false are skipped, arrays flattened.
 */
export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "text") element.textContent = String(value);
    else if (name === "on") for (const [event, fn] of Object.entries(value)) element.addEventListener(event, fn);
    else if (PROPERTIES.has(name)) element[name] = value;
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  append(element, children);
  return element;
}

/** Appends children (nodes, strings, arrays; null/false skipped) to `parent`. */
export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** Replaces everything in `parent` with `children`. */
export function replaceChildren(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

/** Marks `element` as just changed (the `.changed` animation), restarting the mark if it is on. */
export function flash(element) {
  element.classList.remove("changed");
  void element.offsetWidth; // restart the animation
  element.classList.add("changed");
  clearTimeout(element._flashTimer);
  element._flashTimer = setTimeout(() => element.classList.remove("changed"), 2500);
}

/**
 * A table with a caption and a header row; returns `{ table, body }`. `columns` are header
 * texts; the caption is visible, for everyone.
 */
export function dataTable(caption, columns, props = {}) {
  const body = h("tbody");
  const table = h("table", { class: "data", ...props },
    h("caption", { text: caption }),
    h("thead", {}, h("tr", {}, columns.map((text) => h("th", { scope: "col", text })))),
    body);
  return { table, body };
}

/**
 * A labelled form field: `<div class=field><label for=id>label</label>control hint</div>`; the
 * hint describes the control, before what already did.
 */
export function field(label, control, hint) {
  const hintElement = hint ? h("p", { class: "hint", id: `${control.id}-hint`, text: hint }) : null;
  if (hintElement) {
    const others = control.getAttribute("aria-describedby");
    control.setAttribute("aria-describedby", others ? `${hintElement.id} ${others}` : hintElement.id);
  }
  return h("div", { class: "field" }, h("label", { for: control.id, text: label }), control, hintElement);
}

/** Calls `fn` once `ms` have passed without another call; `.cancel()` drops a pending call. */
export function debounce(fn, ms) {
  let timer = null;
  const debounced = (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
  debounced.cancel = () => clearTimeout(timer);
  return debounced;
}

/** Saves `blob` as a file named `filename` (a blob URL and `<a download>`; the URL is revoked after). */
export function downloadBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const link = h("a", { href: url, download: filename, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
