// How prefsd's data reads on the page: values, times, sources (as badges) and schemas.

import { h } from "/ui/dom.js";

/** The value of a resolved preference (or a history step), undefined when its source is `none`. */
export function valueOf(resolved) {
  return resolved.source === "none" ? undefined : resolved.value;
}

/** "1 value", "3 values" */
export function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** A value as JSON text ("—" for none), cut to `max` characters with an ellipsis when given. */
export function formatValue(value, max) {
  if (value === undefined) return "—";
  const text = JSON.stringify(value);
  return max && text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A `<time>` of an ISO 8601 instant, shown in local time to the second. */
export function timeElement(iso) {
  if (!iso) return h("span", { text: "—" });
  const date = new Date(iso);
  const pad = (n) => String(n).padStart(2, "0");
  const text = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  return h("time", { datetime: iso, title: iso, text });
}

/** A source (`override`, `lock:/p`, `scope:/p`, `default`, `none`) as `{ kind, path }`. */
export function parseSource(source) {
  const colon = source.indexOf(":");
  return colon < 0 ? { kind: source, path: null } : { kind: source.slice(0, colon), path: source.slice(colon + 1) };
}

const BADGE_WORDS = { override: "override", lock: "lock", scope: "scope", default: "default", none: "unset" };

/** A badge naming where a value comes from: "lock /accounts", "scope /", "default", "unset". */
export function sourceBadge(source) {
  const { kind, path } = parseSource(source);
  const word = BADGE_WORDS[kind] ?? kind;
  return h("span", {
    class: `badge badge-${BADGE_WORDS[kind] ? kind : "other"}`,
    "data-source": source,
    "data-testid": "source-badge",
    text: path ? `${word} ${path}` : word,
  });
}

/** A schema's type, bounds, choices and default in a few words (empty for no schema). */
export function describeSchema(schema) {
  if (!schema) return "";
  const parts = [schema.type];
  if (schema.min !== undefined && schema.max !== undefined) parts.push(`${schema.min} to ${schema.max}`);
  else if (schema.min !== undefined) parts.push(`at least ${schema.min}`);
  else if (schema.max !== undefined) parts.push(`at most ${schema.max}`);
  if (schema.maxLength !== undefined) {
    parts.push(`at most ${schema.maxLength} ${schema.type === "array" ? "items" : "characters"}`);
  }
  if (schema.choices) parts.push(`one of ${schema.choices.join(", ")}`);
  if (schema.default !== undefined) parts.push(`default ${formatValue(schema.default, 60)}`);
  return parts.join(" · ");
}
