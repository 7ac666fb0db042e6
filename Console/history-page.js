// A key's history at a scope (`GET /v1/prefs/{key}/history`): every change of its effective
// value there — who, when, why, and which layer won — with a diff between two points
// (`GET /v1/diff`) and a revert to any of them (`POST /v1/prefs:revert`, confirmed, based on
// the key's revision there so that it cannot undo a change it did not show).

import { getJSON, keyPath, request } from "/ui/api.js";
import { confirmAction } from "/ui/confirm.js";
import { dataTable, field, h, replaceChildren } from "/ui/dom.js";
import { formatValue, sourceBadge, timeElement, valueOf } from "/ui/format.js";
import { pageHeading, scopeTrail } from "/ui/layout.js";
import { announce, guarded, reportError } from "/ui/notify.js";
import { links } from "/ui/router.js";
import { can, session } from "/ui/session.js";

const STEPS_PER_PAGE = 50;
const VALUE_WIDTH = 60;

/** "set at /accounts", "lock at /", "schema" */
function describeChange(change) {
  return change.scope ? `${change.kind} at ${change.scope}` : change.kind;
}

/** A resolved value and the badge of its source. */
function valueWithSource(resolved, testid) {
  return [h("code", { "data-testid": testid, text: formatValue(valueOf(resolved)) }), " ", sourceBadge(resolved.source)];
}

/** Draws the history of `route.key` at `route.scope` into `main`. */
export async function renderHistoryPage(main, route, context) {
  const key = route.key;
  const scope = route.scope || session().scope;
  const historyPath = `${keyPath("/v1/prefs", key)}/history`;
  const [first, current] = await Promise.all([
    getJSON(historyPath, { scope, limit: STEPS_PER_PAGE }),
    request("GET", keyPath("/v1/prefs", key), { query: { scope } }),
  ]);
  const revisionHere = current.etag ?? 0;
  const writer = can("writer");
  const columns = ["Revision", "Time", "Change", "Value after", "Layer", "Reason", "Author"];
  if (writer) columns.push("Revert");
  const { table, body } = dataTable(`Changes of ${key} at ${scope}, newest first`, columns, { "data-testid": "history-table" });
  const fromSelect = h("select", { id: "diff-from", "data-testid": "diff-from" });
  const toSelect = h("select", { id: "diff-to", "data-testid": "diff-to" }, h("option", { value: "", text: "now" }));
  const result = h("div", { class: "diff-result", "data-testid": "diff-result", "aria-live": "polite" });
  const more = h("button", { type: "button", class: "secondary", "data-testid": "history-more", text: "Older changes" });

  const revert = async (step) => {
    const revision = step.change.revision;
    const message = `Reverting puts ${key} at ${scope} back as it was at revision ${revision}: its value and lock at ${scope} itself ` +
      `become what they were then (the effective value then: ${formatValue(valueOf(step))}, from ${step.source}).`;
    if (!(await confirmAction({ title: `Revert ${key}?`, message, confirmLabel: "Revert" }))) return;
    try {
      const answer = await request("POST", "/v1/prefs:revert", { body: { key, scope, toRevision: revision }, ifMatch: revisionHere });
      announce(`Reverted ${key} at ${scope} to revision ${revision} (now revision ${answer.data.revision}).`);
    } catch (error) {
      if (error.status === 401) return;
      reportError(error);
    }
    context.reload();
  };

  const addSteps = (page) => {
    for (const step of page.steps) {
      const change = step.change;
      body.append(h("tr", { "data-testid": "history-step", "data-revision": String(change.revision) },
        h("td", { text: String(change.revision) }),
        h("td", {}, timeElement(change.time)),
        h("td", { text: describeChange(change) }),
        h("td", {}, h("code", { text: formatValue(valueOf(step), VALUE_WIDTH) }),
          "previousSource" in step ? h("span", { class: "was", text: ` was ${formatValue(step.previousValue, VALUE_WIDTH)}` }) : null),
        h("td", {}, sourceBadge(step.source)),
        h("td", { text: change.reason ?? "" }),
        h("td", { text: change.author, title: change.agent ?? "" }),
        writer ? h("td", {}, h("button", { type: "button", class: "secondary small", "data-testid": "revert-step",
          "aria-label": `Revert to revision ${change.revision}`, text: "Revert…", on: { click: guarded(() => revert(step)) } })) : null));
      for (const select of [fromSelect, toSelect]) {
        select.append(h("option", { value: String(change.revision), text: `revision ${change.revision} — ${describeChange(change)}` }));
      }
    }
    more.hidden = page.next === undefined;
    more.onclick = guarded(async () => addSteps(await getJSON(historyPath, { scope, limit: STEPS_PER_PAGE, before: page.next })));
  };

  const compare = async () => {
    let from = Number(fromSelect.value);
    let to = toSelect.value === "" ? undefined : Number(toSelect.value);
    if (to !== undefined && from > to) [from, to] = [to, from];
    const diff = await getJSON("/v1/diff", { from, to, scope, prefix: key });
    const difference = diff.differences.find((each) => each.key === key);
    if (!difference) {
      replaceChildren(result, h("p", { text: `${key} at ${scope} is the same at revision ${diff.from} and at revision ${diff.to}.` }));
      return;
    }
    const change = difference.change;
    replaceChildren(result,
      h("h3", { text: `From revision ${diff.from} to ${diff.to}` }),
      h("dl", { class: "facts" },
        h("dt", { text: `At ${diff.from}` }), h("dd", {}, valueWithSource(difference.before, "diff-before")),
        h("dt", { text: `At ${diff.to}` }), h("dd", {}, valueWithSource(difference.after, "diff-after")),
        change ? [h("dt", { text: "Changed by" }), h("dd", {}, `${describeChange(change)} in revision ${change.revision} by ${change.author}, `,
          timeElement(change.time), change.reason ? ` — “${change.reason}”` : "")] : null));
  };

  replaceChildren(main,
    pageHeading(`History of ${key}`),
    h("p", { class: "subtitle" }, "at scope ", h("code", { text: scope }), ": now ", valueWithSource(first.current, "history-current")),
    scopeTrail(scope),
    h("p", { class: "links" }, h("a", { href: links.key(key, scope), text: "Back to the key" })),
    h("section", { "aria-labelledby": "diff-heading" },
      h("h2", { id: "diff-heading", text: "Compare two points" }),
      h("form", { class: "inline", novalidate: true, on: { submit: (event) => { event.preventDefault(); guarded(compare)(); } } },
        field("From", fromSelect), field("To", toSelect),
        h("button", { type: "submit", "data-testid": "diff-submit", text: "Compare" })),
      result),
    table,
    more);
  addSteps(first);
  if (!first.steps.length) body.append(h("tr", {}, h("td", { colspan: String(columns.length), text: "No change of this key here yet." })));
  if (fromSelect.options.length > 1) fromSelect.selectedIndex = 1;
}
