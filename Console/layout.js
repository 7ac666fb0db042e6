// Pieces every page shares: its heading (focused when the page opens, so keyboard and
// screen-reader users start there) and the trail of scopes above the one shown.

import { h } from "/ui/dom.js";
import { links } from "/ui/router.js";
import { scopeChain, scopeName } from "/ui/scopes.js";

/** The page's `<h1>`, focusable from script (the console moves the focus to it on each page). */
export function pageHeading(text) {
  return h("h1", { id: "page-title", tabindex: "-1", "data-testid": "page-title", text });
}

/** Links to `scope` and every scope above it: `/ › accounts › alice`. */
export function scopeTrail(scope) {
  const chain = scopeChain(scope);
  return h("nav", { class: "trail", "aria-label": "Scope path" },
    h("ol", {}, chain.map((each) => h("li", {},
      h("a", { href: links.scope(each), "aria-current": each === scope ? "page" : null, text: scopeName(each) })))));
}
