// Sync (docs/sync.md): where this prefsd's sync stands (`GET /v1/sync`, a device daemon's
// upstream, grant, cursor, outbox and last exchange; a 404 means it has no upstream), and the
// conflicts sync resolved (`GET /v1/conflicts?order=newest`), newest first, filtered by key,
// scope and since — each with its winner and losers, and a loser's value put back
// (`POST /v1/conflicts/{revision}/restore?loser=N`) after a confirmation.

import { getJSON, request } from "/ui/api.js";
import { confirmAction } from "/ui/confirm.js";
import { dataTable, field, h, replaceChildren } from "/ui/dom.js";
import { formatValue, plural, timeElement } from "/ui/format.js";
import { pageHeading } from "/ui/layout.js";
import { announce, guarded, reportError } from "/ui/notify.js";
import { go, links } from "/ui/router.js";
import { can } from "/ui/session.js";

const FILTERS = [
  ["key", "Key", "Conflicts of this key exactly."],
  ["scope", "Scope", "Conflicts at this scope or below it."],
  ["since", "Since", "After this revision (41), or at or after this time (2026-11-27T02:00:00Z)."],
];
const CONFLICTS_SHOWN = 100;
const VALUE_WIDTH = 60;

/** The query of `GET /v1/conflicts` for the page's filters: `since` a revision, or a time (`from`). */
function conflictQuery(filters) {
  const since = filters.since;
  const revision = /^\d+$/.test(since);
  return {
    key: filters.key, scope: filters.scope, since: revision ? since : "", from: revision ? "" : since,
    order: "newest", limit: CONFLICTS_SHOWN,
  };
}

/** GET /v1/sync, or null when this prefsd has no upstream (404). */
async function readSyncStatus() {
  try {
    return await getJSON("/v1/sync");
  } catch (error) {
    if (error.status === 404) return null;
    throw error;
  }
}

/** Who made a side: "on laptop", or "at the upstream" for a change made there. */
function madeBy(side) {
  return side.device ? `on ${side.device}` : "at the upstream";
}

/** One side of a conflict: its value (or "reset"), where it was made, its stamp as a title. */
function sideElement(side, testid) {
  return h("span", { class: "conflict-side", "data-testid": testid, title: side.stamp ? `stamp ${side.stamp}` : null },
    "value" in side ? h("code", { "data-testid": `${testid}-value`, text: formatValue(side.value, VALUE_WIDTH) })
      : h("em", { text: "reset" }),
    " ", h("span", { class: "device", "data-testid": `${testid}-device`, text: madeBy(side) }));
}

/** The status of a device daemon's sync, or the line saying it has none. */
function statusSection(status) {
  if (!status) {
    return h("p", { class: "note", "data-testid": "sync-none",
      text: "This prefsd has no upstream: it does not sync with another. It is the upstream of its devices " +
        "(named tokens that push and pull with POST /v1/sync), or it stands alone." });
  }
  const inStep = status.outbox === 0 && status.snapshotTaken && status.upstreamRevision != null && status.cursor >= status.upstreamRevision;
  const last = status.lastExchange;
  const cursor = status.upstreamRevision != null
    ? `${status.cursor} of the upstream's ${status.upstreamRevision}` : `${status.cursor} (the upstream's newest not known yet)`;
  return h("div", { class: "sync-status", "data-testid": "sync-status" },
    h("p", {},
      h("span", { class: `state ${inStep ? "in-step" : "behind"}`, "data-testid": "sync-state", "data-state": inStep ? "in-step" : "behind",
        text: inStep ? "In step" : "Not in step" }),
      " ",
      inStep ? "with the upstream: nothing to push, every change taken in."
        : status.snapshotTaken ? "with the upstream: changes still to push or to take in." : "with the upstream: no snapshot taken in yet."),
    h("dl", { class: "facts" },
      h("dt", { text: "Upstream" }), h("dd", {}, h("code", { "data-testid": "sync-upstream", text: status.upstream })),
      h("dt", { text: "Device" }), h("dd", { "data-testid": "sync-device",
        text: status.device ? `${status.device} · ${status.role ?? "?"} at ${status.scope ?? "?"}` : "not known until the upstream answers" }),
      h("dt", { text: "Cursor" }), h("dd", { "data-testid": "sync-cursor", text: cursor }),
      h("dt", { text: "Outbox" }), h("dd", { "data-testid": "sync-outbox", text: `${plural(status.outbox, "change")} to push` }),
      h("dt", { text: "Last exchange" }), h("dd", { "data-testid": "sync-last-exchange" },
        last ? [timeElement(last.time), last.succeeded
          ? ` — pushed ${last.pushed}, pulled ${last.pulled}`
          : [" — ", h("span", { class: "field-error", "data-testid": "sync-error", text: `failed: ${last.error ?? "no answer"}` })]]
          : "none since this prefsd started"),
      h("dt", { text: "Last success" }), h("dd", {}, status.lastSuccess ? timeElement(status.lastSuccess) : "none yet"),
      h("dt", { text: "Conflicts taken in" }), h("dd", { text: String(status.conflicts) })));
}

/** Draws the sync page, its conflicts filtered by `route.query`, into `main`. */
export async function renderSyncPage(main, route, context) {
  const filters = Object.fromEntries(FILTERS.map(([name]) => [name, route.query[name] ?? ""]));
  const [status, list] = await Promise.all([readSyncStatus(), getJSON("/v1/conflicts", conflictQuery(filters))]);
  const writer = can("writer");

  const putBack = async (conflict, index) => {
    const loser = conflict.losers[index];
    const what = "value" in loser ? `sets ${conflict.key} at ${conflict.scope} to ${formatValue(loser.value, VALUE_WIDTH)}`
      : `resets ${conflict.key} at ${conflict.scope}`;
    const message = `Putting back the value that lost ${madeBy(loser)} ${what}, as a new change; ` +
      `it replaces what the key holds there now (the conflict's winner was ${formatValue(conflict.winner.value, VALUE_WIDTH)}).`;
    if (!(await confirmAction({ title: `Put back ${conflict.key}?`, message, confirmLabel: "Put back" }))) return;
    try {
      const answer = await request("POST", `/v1/conflicts/${conflict.revision}/restore`, { query: { loser: index } });
      announce(`Put back the value of ${conflict.key} at ${conflict.scope} that lost in conflict ${conflict.revision} ` +
        `(now revision ${answer.data.revision}).`);
    } catch (error) {
      if (error.status === 401) return;
      reportError(error);
      return;
    }
    context.reload();
  };

  const inputs = FILTERS.map(([name, label, hint]) => {
    const input = h("input", {
      type: "text", id: `sync-${name}`, name, value: filters[name], "data-testid": `sync-${name}`, autocomplete: "off", spellcheck: "false",
    });
    return { name, input, element: field(label, input, hint) };
  });
  const form = h("form", { class: "filters", novalidate: true, "aria-label": "Filters of the conflicts", on: { submit: (event) => {
    event.preventDefault();
    go(links.sync(Object.fromEntries(inputs.map(({ name, input }) => [name, input.value.trim()]))));
  } } },
  inputs.map((each) => each.element),
  h("div", { class: "actions" },
    h("button", { type: "submit", "data-testid": "sync-apply", text: "Apply filters" }),
    h("a", { href: links.sync(), class: "button secondary", text: "Clear" })));

  const columns = ["Revision", "Time", "Key", "Scope", "Rule", "Winner", "Losers", "Detail"];
  const { table, body } = dataTable("Conflicts, newest first", columns, { "data-testid": "conflicts-table" });
  for (const conflict of list.conflicts) {
    body.append(h("tr", { "data-testid": "conflict-row", "data-revision": String(conflict.revision) },
      h("td", { text: String(conflict.revision) }),
      h("td", {}, timeElement(conflict.time)),
      h("td", {}, h("a", { href: links.key(conflict.key, conflict.scope), text: conflict.key })),
      h("td", { text: conflict.scope }),
      h("td", {}, h("span", { class: "badge badge-other", "data-testid": "conflict-rule", text: conflict.rule })),
      h("td", {}, sideElement(conflict.winner, "conflict-winner")),
      h("td", {}, h("ul", { class: "losers" }, conflict.losers.map((loser, index) => h("li", { "data-testid": "conflict-loser" },
        sideElement(loser, "conflict-side"),
        writer ? [" ", h("button", {
          type: "button", class: "secondary small", "data-testid": "conflict-restore", "data-loser": String(index),
          "aria-label": `Put back ${"value" in loser ? formatValue(loser.value, VALUE_WIDTH) : "the reset"} ${madeBy(loser)} ` +
            `as ${conflict.key} at ${conflict.scope}`,
          text: "Put back…", on: { click: guarded(() => putBack(conflict, index)) },
        })] : null)))),
      h("td", { text: conflict.detail ?? "" })));
  }
  if (!list.conflicts.length) {
    body.append(h("tr", { "data-testid": "conflicts-empty" }, h("td", { colspan: String(columns.length), text: "No conflicts." })));
  }

  replaceChildren(main, pageHeading("Sync"),
    h("p", { class: "subtitle", text: "How this prefsd syncs, and the conflicts sync resolved: which value won, which lost, by which rule." }),
    h("section", { "aria-labelledby": "sync-status-heading" },
      h("h2", { id: "sync-status-heading", text: "Status" }),
      statusSection(status)),
    h("section", { "aria-labelledby": "conflicts-heading" },
      h("h2", { id: "conflicts-heading", text: "Conflicts" }),
      form, table,
      list.conflicts.length >= CONFLICTS_SHOWN
        ? h("p", { class: "hint", "data-testid": "conflicts-more",
          text: `The newest ${CONFLICTS_SHOWN} are shown; narrow them by key or scope to see older ones.` })
        : null));
}
