// The scope tree in the side navigation: built from a dump of the session's scope, each node
// with how many values and locks it holds, expandable to any depth, kept current by a watch of
// every change under the session's scope (the dump is read again, debounced, after changes).

import { getJSON } from "/ui/api.js";
import { debounce, h, replaceChildren } from "/ui/dom.js";
import { Watch } from "/ui/live.js";
import { reportError } from "/ui/notify.js";
import { links } from "/ui/router.js";
import { buildScopeTree, describeCounts, scopeChain } from "/ui/scopes.js";

const REFRESH_DELAY_MS = 300;

export class ScopeNav {
  /** The tree of the scopes at and below `root`, drawn into `container`. */
  constructor(container, root) {
    this.container = container;
    this.rootScope = root;
    this.tree = null;
    this.current = null;
    this.expanded = new Set([root]);
    this.listeners = new Set();
    this.scheduleRefresh = debounce(() => this.refresh(), REFRESH_DELAY_MS);
    this.list = h("ul", { class: "tree", "data-testid": "scope-tree" });
    replaceChildren(container, h("h2", { id: "scopes-heading", text: "Scopes" }), this.list);
    container.setAttribute("aria-labelledby", "scopes-heading");
    this.watch = new Watch({}, null, {
      onEvents: () => this.scheduleRefresh(),
      onState: (state) => state === "open" && this.scheduleRefresh(),
      onReset: () => this.scheduleRefresh(),
    });
  }

  /** Stops following changes (sign-out). */
  close() {
    this.watch.close();
    this.scheduleRefresh.cancel();
  }

  /** Calls `listener()` after every refresh of the tree; answers a function that stops it. */
  onUpdate(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Whether the tree has been read (the nodes are known). */
  get loaded() {
    return this.tree !== null;
  }

  /** The node of `scope` (`{ values, locks, children, … }`), or undefined when the tree has none. */
  node(scope) {
    return this.tree?.nodes.get(scope);
  }

  /** Marks `scope` as the one shown, expanding the tree down to it. */
  setCurrent(scope) {
    this.current = scope;
    if (scope) for (const each of scopeChain(scope)) this.expanded.add(each);
    this.render();
  }

  /** Reads the dump again and redraws the tree. */
  async refresh() {
    try {
      const dump = await getJSON("/v1/dump", { scope: this.rootScope });
      this.tree = buildScopeTree(dump, this.rootScope);
    } catch (error) {
      if (error.status !== 401) reportError(error);
      return;
    }
    this.render();
    for (const listener of this.listeners) listener();
  }

  render() {
    if (!this.tree) return;
    const focused = this.container.contains(document.activeElement) ? document.activeElement : null;
    const focusKey = focused && [focused.dataset.testid, focused.dataset.scope];
    replaceChildren(this.list, this.item(this.tree.root));
    if (focusKey) {
      const [testid, scope] = focusKey;
      const again = [...this.list.querySelectorAll(`[data-testid="${testid}"]`)].find((e) => e.dataset.scope === scope);
      again?.focus();
    }
  }

  item(node) {
    const open = this.expanded.has(node.scope);
    const toggle = node.children.length
      ? h("button", {
        type: "button",
        class: "toggle",
        "aria-expanded": String(open),
        "aria-label": `Scopes under ${node.scope}`,
        "data-testid": "scope-toggle",
        "data-scope": node.scope,
        text: open ? "▾" : "▸",
        on: { click: () => this.toggle(node.scope) },
      })
      : h("span", { class: "toggle-space", "aria-hidden": "true" });
    const link = h("a", {
      href: links.scope(node.scope),
      "data-testid": "scope-link",
      "data-scope": node.scope,
      "aria-current": node.scope === this.current ? "page" : null,
      text: node.name,
    });
    return h("li", { "data-testid": "scope-node", "data-scope": node.scope },
      h("div", { class: "node-row" }, toggle, link, h("span", { class: "counts", text: describeCounts(node) })),
      open && node.children.length ? h("ul", {}, node.children.map((child) => this.item(child))) : null);
  }

  toggle(scope) {
    if (this.expanded.has(scope)) this.expanded.delete(scope);
    else this.expanded.add(scope);
    this.render();
  }
}
