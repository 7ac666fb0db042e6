// Scope paths (`/`, `/accounts`, `/accounts/alice`) and the tree of scopes a dump shows: prefsd
// has no list of scopes, so the tree is what `GET /v1/dump?scope=ROOT` holds — every scope
// with a value or a lock, and the scopes between them and the root.

import { plural } from "/ui/format.js";

/** The scope above `scope` (`/accounts/alice` → `/accounts`); null for `/`. */
function parentScope(scope) {
  if (scope === "/") return null;
  const cut = scope.lastIndexOf("/");
  return cut === 0 ? "/" : scope.slice(0, cut);
}

/** `scope` and every scope above it, from `/` down (`/`, `/accounts`, `/accounts/alice`). */
export function scopeChain(scope) {
  const chain = [];
  for (let s = scope; s !== null; s = parentScope(s)) chain.unshift(s);
  return chain;
}

/** Whether `scope` is `base` or below it. */
export function isAtOrBelow(scope, base) {
  return base === "/" || scope === base || scope.startsWith(`${base}/`);
}

/** The last segment of a scope (`alice`), or `/` for the root. */
export function scopeName(scope) {
  return scope === "/" ? "/" : scope.slice(scope.lastIndexOf("/") + 1);
}

/** The scope of an account's drafts (`/accounts/alice`), or null when `scope` is no such scope. */
export function accountOf(scope) {
  const match = /^\/accounts\/([^/]+)/.exec(scope);
  return match ? match[1] : null;
}

/**
 * The tree of the scopes in `dump` at or below `root`: nodes `{ scope, name, values, locks,
 * children }`, `values` and `locks` counting what is set and locked at the node's own scope,
 * children sorted by name. Answers `{ root, nodes }`, `nodes` a Map by scope.
 */
export function buildScopeTree(dump, root) {
  const nodes = new Map();
  const node = (scope) => {
    let found = nodes.get(scope);
    if (!found) {
      found = { scope, name: scopeName(scope), values: 0, locks: 0, children: [] };
      nodes.set(scope, found);
      if (scope !== root) node(parentScope(scope)).children.push(found);
    }
    return found;
  };
  node(root);
  for (const value of dump.values) if (isAtOrBelow(value.scope, root)) node(value.scope).values += 1;
  for (const lock of dump.locks) if (isAtOrBelow(lock.scope, root)) node(lock.scope).locks += 1;
  for (const each of nodes.values()) each.children.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { root: nodes.get(root), nodes };
}

/** "3 values · 1 lock" */
export function describeCounts(node) {
  return `${plural(node.values, "value")} · ${plural(node.locks, "lock")}`;
}
