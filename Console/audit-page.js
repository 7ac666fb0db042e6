// The audit log (`GET /v1/changes`): every change, who made it, when and why, newest first,
// filtered by key prefix, scope, author and a range of revisions or times; older pages follow
// the answer's `next`.

import { getJSON } from "/ui/api.js";
import { dataTable, field, h, replaceChildren } from "/ui/dom.js";
import { formatValue, timeElement } from "/ui/format.js";
import { pageHeading } from "/ui/layout.js";
import { guarded } from "/ui/notify.js";
import { go, links } from "/ui/router.js";

const FILTERS = [
  ["prefix", "Key prefix", "Changes of keys starting with this text."],
  ["scope", "Scope", "Changes made at this scope or below it."],
  ["author", "Author", "Exactly, as the log names it: token:default, token:deploy, a user name."],
  ["since", "Since", "After this revision (41), or at or after this time (2026-11-27T02:00:00Z)."],
  ["until", "Until", "Up to and with this revision, or at or before this time."],
];
const VALUE_WIDTH = 60;

/** What a change is about: its key and scope, its draft and account, or its token. */
function subject(change) {
  if (change.key) return h("a", { href: links.key(change.key, change.scope ?? "/"), text: change.key });
  if (change.draft) return h("a", { href: links.draft(change.draft), text: `draft of ${change.account ?? "?"}` });
  return h("span", { text: change.value?.name ? `token ${change.value.name}` : "" });
}

/** Draws the audit log, filtered by `route.query`, into `main`. */
export async function renderAuditPage(main, route) {
  const filters = Object.fromEntries(FILTERS.map(([name]) => [name, route.query[name] ?? ""]));
  const first = await getJSON("/v1/changes", filters);
  const inputs = FILTERS.map(([name, label, hint]) => {
    const input = h("input", {
      type: "text", id: `audit-${name}`, name, value: filters[name], "data-testid": `audit-${name}`, autocomplete: "off", spellcheck: "false",
    });
    return { name, input, element: field(label, input, hint) };
  });
  const columns = ["Revision", "Time", "Change", "Of", "Scope", "Value", "Before", "Author", "Reason"];
  const { table, body } = dataTable("Changes, newest first", columns, { "data-testid": "audit-table" });
  const more = h("button", { type: "button", class: "secondary", "data-testid": "audit-more", text: "Older changes" });

  const addPage = (page) => {
    for (const change of page.changes) {
      body.append(h("tr", { "data-testid": "audit-row", "data-revision": String(change.revision) },
        h("td", { text: String(change.revision) }),
        h("td", {}, timeElement(change.time)),
        h("td", { text: change.kind }),
        h("td", {}, subject(change)),
        h("td", { text: change.scope ?? "" }),
        h("td", {}, h("code", { text: "value" in change ? formatValue(change.value, VALUE_WIDTH) : "" })),
        h("td", {}, h("code", { text: "oldValue" in change ? formatValue(change.oldValue, VALUE_WIDTH) : "" })),
        h("td", { text: change.author, title: change.agent ?? "" }),
        h("td", { text: change.reason ?? "" })));
    }
    more.hidden = !page.next;
    more.onclick = guarded(async () => addPage(await getJSON("/v1/changes", page.next)));
  };

  const form = h("form", { class: "filters", novalidate: true, "aria-label": "Filters of the audit log", on: { submit: (event) => {
    event.preventDefault();
    go(links.audit(Object.fromEntries(inputs.map(({ name, input }) => [name, input.value.trim()]))));
  } } },
  inputs.map((each) => each.element),
  h("div", { class: "actions" },
    h("button", { type: "submit", "data-testid": "audit-apply", text: "Apply filters" }),
    h("a", { href: links.audit(), class: "button secondary", text: "Clear" })));

  replaceChildren(main, pageHeading("Audit log"),
    h("p", { class: "subtitle", text: `The change log holds every change since revision ${first.oldestRevision}.` }),
    form, table, more);
  addPage(first);
  if (!first.changes.length) body.append(h("tr", {}, h("td", { colspan: String(columns.length), text: "No change matches these filters." })));
}
