// A scope's page: every key with a value or a schema there — its effective value, where it
// comes from, the schema's description and bounds — filtered by key prefix and paged (a page
// is 100 rows, however many keys the scope has), and kept current by a watch of the effective
// values at the scope.

import { getJSON } from "/ui/api.js";
import { debounce, field, flash, h, replaceChildren, dataTable } from "/ui/dom.js";
import { describeSchema, formatValue, sourceBadge, valueOf } from "/ui/format.js";
import { Watch } from "/ui/live.js";
import { guarded } from "/ui/notify.js";
import { links, replaceRoute } from "/ui/router.js";
import { forgetSchemas, schemas } from "/ui/schemas.js";
import { accountOf, describeCounts } from "/ui/scopes.js";
import { pageHeading, scopeTrail } from "/ui/layout.js";

const PAGE_SIZE = 100;
const VALUE_WIDTH = 80;

/** Draws the page of `route.scope` into `main`; answers its cleanup. */
export async function renderScopePage(main, route, context) {
  const scope = route.scope;
  const [list, schemaMap] = await Promise.all([getJSON("/v1/prefs", { scope }), schemas()]);
  const view = new KeyList(scope, list.preferences, schemaMap);
  let prefix = route.query.prefix ?? "";
  let page = Math.max(1, Math.floor(Number(route.query.page)) || 1);

  const counts = h("p", { class: "counts", "data-testid": "scope-counts" });
  const showCounts = () => {
    const node = context.nav.node(scope);
    if (node) counts.textContent = `Holds ${describeCounts(node)} set at this very scope.`;
    else counts.textContent = context.nav.loaded ? "Holds no values or locks of its own." : "";
  };
  showCounts();
  const account = accountOf(scope);
  const filter = h("input", {
    type: "search", id: "key-filter", value: prefix, "data-testid": "key-filter", autocomplete: "off", spellcheck: "false",
  });
  const columns = ["Key", "Value", "Source", "Description", "Schema"];
  const { table, body } = dataTable(`Keys at ${scope}`, columns, { "data-testid": "key-table" });
  const info = h("p", { class: "pager-info", "data-testid": "pager-info", "aria-live": "polite" });
  const previous = h("button", { type: "button", class: "secondary", "data-testid": "pager-prev", text: "Previous page" });
  const next = h("button", { type: "button", class: "secondary", "data-testid": "pager-next", text: "Next page" });

  const draw = (changedKeys = new Set()) => {
    const keys = view.filtered(prefix);
    const pages = Math.max(1, Math.ceil(keys.length / PAGE_SIZE));
    page = Math.min(page, pages);
    const first = (page - 1) * PAGE_SIZE;
    const shown = keys.slice(first, first + PAGE_SIZE);
    replaceChildren(body, shown.map((key) => view.row(key, changedKeys.has(key))));
    const starting = prefix ? ` starting “${prefix}”` : "";
    info.textContent = keys.length
      ? `Keys ${first + 1}–${first + shown.length} of ${keys.length}${starting} · page ${page} of ${pages}`
      : `No key${starting} here.`;
    previous.disabled = page <= 1;
    next.disabled = page >= pages;
  };
  /** Shows another page or filter, and puts it in the address. */
  const move = (toPage, toPrefix = prefix) => {
    page = toPage;
    prefix = toPrefix;
    draw();
    replaceRoute(links.scope(scope, { prefix, page: page > 1 ? page : undefined }));
  };
  const applyFilter = debounce(() => move(1, filter.value), 120);
  filter.addEventListener("input", applyFilter);
  previous.addEventListener("click", () => move(page - 1));
  next.addEventListener("click", () => move(page + 1));

  replaceChildren(main,
    pageHeading(`Scope ${scope}`),
    scopeTrail(scope),
    counts,
    h("p", { class: "links" },
      h("a", { href: links.audit({ scope }), text: "Audit log of this scope" }), " · ",
      h("a", { href: links.transfer(scope), text: "Export or import this scope" }),
      account ? [" · ", h("a", { href: links.drafts({ account }), text: `Drafts of ${account}` })] : null),
    h("form", { class: "filter", role: "search", on: { submit: (event) => event.preventDefault() } },
      field("Filter by key prefix", filter)),
    table,
    h("div", { class: "pager" }, previous, info, next));
  draw();

  const watch = new Watch({ scope }, list.preferences[0]?.revision, {
    onEvents: guarded(async (changes) => draw(await view.apply(changes))),
    onState: context.live,
    onReset: context.reload,
  });
  const stopCounts = context.nav.onUpdate(showCounts);
  return () => {
    watch.close();
    stopCounts();
    applyFilter.cancel();
  };
}

/** The keys of one scope: their effective values there and their schemas, sorted by key. */
class KeyList {
  constructor(scope, preferences, schemaMap) {
    this.scope = scope;
    this.schemas = schemaMap;
    this.entries = new Map(preferences.map((p) => [p.key, { value: p.value, source: p.source }]));
    for (const key of Object.keys(schemaMap)) if (!this.entries.has(key)) this.entries.set(key, { value: undefined, source: "none" });
    this.sort();
  }

  sort() {
    this.keys = [...this.entries.keys()].sort();
  }

  /** The keys starting with `prefix`, in order. */
  filtered(prefix) {
    return prefix ? this.keys.filter((key) => key.startsWith(prefix)) : this.keys;
  }

  /**
   * Takes in a watch's changes (new effective values at the scope); answers the keys that
   * changed. A key with no value and no schema any more leaves the list.
   */
  async apply(changes) {
    if (changes.some((change) => change.kind === "schema")) {
      forgetSchemas();
      this.schemas = await schemas();
    }
    const changed = new Set();
    let reshaped = false;
    for (const change of changes) {
      if (!change.key) continue;
      changed.add(change.key);
      const entry = { value: valueOf(change), source: change.source };
      if (entry.source === "none" && !this.schemas[change.key]) {
        reshaped = this.entries.delete(change.key) || reshaped;
      } else {
        reshaped = reshaped || !this.entries.has(change.key);
        this.entries.set(change.key, entry);
      }
    }
    if (reshaped) this.sort();
    return changed;
  }

  /** The table row of `key`, marked as just changed when `changed`. */
  row(key, changed) {
    const entry = this.entries.get(key);
    const schema = this.schemas[key];
    const value = h("td", { "data-testid": "key-value", title: formatValue(entry.value) },
      h("code", { text: formatValue(entry.value, VALUE_WIDTH) }));
    const row = h("tr", { "data-testid": "key-row", "data-key": key },
      h("th", { scope: "row" }, h("a", { href: links.key(key, this.scope), "data-testid": "key-link", text: key })),
      value,
      h("td", {}, sourceBadge(entry.source)),
      h("td", { text: schema?.description ?? "" }),
      h("td", { class: "schema", text: describeSchema(schema) }));
    if (changed) flash(row);
    return row;
  }
}
