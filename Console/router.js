// Hash routes: every page of the console has an address that can be bookmarked or shared
// (it never holds a secret). The page itself is /ui/ (or /ui); the routes are its hash:
//
//   #/                               the signed-in scope's page
//   #/scope/                         the scope / (its keys, paged, filtered by prefix)
//   #/scope/accounts/alice?prefix=compose.&page=2
//                                    the scope /accounts/alice, keys starting compose., page 2
//   #/key/compose.maxLength?scope=/accounts/alice
//                                    a key at a scope: its value, explained layer by layer,
//                                    the editor, reset, lock and unlock
//   #/history/compose.maxLength?scope=/accounts/alice
//                                    the key's history at the scope, diffs and reverts
//   #/audit?prefix=&scope=&author=&since=&until=
//                                    the audit log, filtered
//   #/sync?key=&scope=&since=        this prefsd's sync and the conflicts sync resolved, filtered
//   #/drafts?account=alice&thread=t1 drafts, by account and thread
//   #/draft/3F2504E0-4F89-11D3-9A0C-0305E82C3301
//                                    one draft: text, validity, attachments
//   #/transfer?scope=/accounts       export and import of a scope's subtree
//   #signin=CODE                     a sign-in link (`prefsctl ui`); the code is taken out of
//                                    the address bar as soon as it is read
//
// Path segments are percent-encoded; query values too, but for `/`, `@` and `:`.

import { withQuery } from "/ui/api.js";

/** Decodes a percent-encoded piece, or null when it is malformed. */
function decode(text) {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

/**
 * The route a hash names: `{ name, query, … }` with `name` one of home, scope (`scope`), key
 * and history (`key`, `scope`), audit, sync, drafts, draft (`id`), transfer, or signin-code (`code`).
 * `query` holds the query items by name. Anything unknown is home.
 */
export function parseRoute(hash = location.hash) {
  const text = hash.replace(/^#/, "");
  if (text.startsWith("signin=")) return { name: "signin-code", code: decode(text.slice("signin=".length)) ?? "", query: {} };
  const mark = text.indexOf("?");
  const path = mark < 0 ? text : text.slice(0, mark);
  const query = Object.fromEntries(new URLSearchParams(mark < 0 ? "" : text.slice(mark + 1)));
  const segments = path.split("/").filter(Boolean).map(decode);
  if (segments.includes(null)) return { name: "home", query: {} };
  const [name, ...rest] = segments;
  switch (name) {
    case "scope":
      return { name, scope: `/${rest.join("/")}`, query };
    case "key":
    case "history":
      return rest.length === 1 ? { name, key: rest[0], scope: query.scope || null, query } : { name: "home", query };
    case "draft":
      return rest.length === 1 ? { name, id: rest[0], query } : { name: "home", query };
    case "audit":
    case "sync":
    case "drafts":
    case "transfer":
      return { name, query };
    default:
      return { name: "home", query };
  }
}

/** The hrefs of the console's pages. */
export const links = {
  /** A scope's page, with optional `{ prefix, page }`. */
  scope: (scope, query = {}) =>
    withQuery(scope === "/" ? "#/scope/" : `#/scope${scope.split("/").map(encodeURIComponent).join("/")}`, query),
  /** A key at a scope. */
  key: (key, scope) => withQuery(`#/key/${encodeURIComponent(key)}`, { scope }),
  /** A key's history at a scope. */
  history: (key, scope) => withQuery(`#/history/${encodeURIComponent(key)}`, { scope }),
  /** The audit log with filters `{ prefix, scope, author, since, until }`. */
  audit: (query = {}) => withQuery("#/audit", query),
  /** The sync page, its conflicts filtered by `{ key, scope, since }`. */
  sync: (query = {}) => withQuery("#/sync", query),
  /** Drafts of `{ account, thread }`. */
  drafts: (query = {}) => withQuery("#/drafts", query),
  /** One draft. */
  draft: (id) => `#/draft/${encodeURIComponent(id)}`,
  /** Export and import of a scope's subtree. */
  transfer: (scope) => withQuery("#/transfer", { scope }),
};

let routeListener = () => {};

/** Calls `listener(route)` whenever the hash changes (or go() names the current one). */
export function onRouteChange(listener) {
  routeListener = listener;
  window.addEventListener("hashchange", () => routeListener(parseRoute()));
}

/** Goes to `href`: a new history entry, rendered by the route listener (again, if it is the current one). */
export function go(href) {
  const hash = `#${href.replace(/^#/, "")}`;
  if (location.hash === hash) routeListener(parseRoute());
  else location.hash = hash;
}

/** Rewrites the address to `href` without a new history entry and without rendering it again. */
export function replaceRoute(href) {
  history.replaceState(null, "", href);
}
