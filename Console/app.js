// The console's start: sign-in (by a link's code, a pasted token, or the session this tab
// already has), the header and the scope tree, and drawing the page each route names (see
// router.js). Each page is drawn off-screen and shown once its data is in; its cleanup (open
// watches, blob URLs) runs when another page replaces it.

import { renderAuditPage } from "/ui/audit-page.js";
import { h, replaceChildren } from "/ui/dom.js";
import { renderDraftPage, renderDraftsPage } from "/ui/drafts-page.js";
import { renderHistoryPage } from "/ui/history-page.js";
import { renderKeyPage } from "/ui/key-page.js";
import { pageHeading } from "/ui/layout.js";
import { announce, clearMessages, guarded, reportError } from "/ui/notify.js";
import { onRouteChange, parseRoute, replaceRoute } from "/ui/router.js";
import { forgetSchemas } from "/ui/schemas.js";
import { renderScopePage } from "/ui/scope-page.js";
import { ScopeNav } from "/ui/scopetree.js";
import { onSessionEnded, resume, session, signIn, signOut } from "/ui/session.js";
import { renderSignIn } from "/ui/signin.js";
import { renderSyncPage } from "/ui/sync-page.js";
import { renderTransferPage } from "/ui/transfer-page.js";

const PAGES = {
  scope: renderScopePage,
  key: renderKeyPage,
  history: renderHistoryPage,
  audit: renderAuditPage,
  sync: renderSyncPage,
  drafts: renderDraftsPage,
  draft: renderDraftPage,
  transfer: renderTransferPage,
};
const SECTION_OF_PAGE = {
  scope: "scopes", key: "scopes", history: "scopes", audit: "audit", sync: "sync", drafts: "drafts", draft: "drafts", transfer: "transfer",
};
const LIVE_WORDS = { connecting: "Connecting…", open: "Live", reconnecting: "Reconnecting…" };

const main = document.getElementById("main");
const sideNav = document.getElementById("scope-nav");
const topLinks = document.getElementById("top-links");
const liveIndicator = document.getElementById("live-indicator");
const sessionInfo = document.getElementById("session-info");
const signOutButton = document.getElementById("signout");

let scopeNav = null;
let cleanup = null;
let drawing = 0; // the ticket of the page drawn last
let showing = 0; // the ticket of the page on screen

/** Shows the state of the page's watch in the header (nothing for a page without one). */
function showLive(state) {
  const words = LIVE_WORDS[state];
  liveIndicator.hidden = !words;
  liveIndicator.textContent = words ?? "";
  liveIndicator.dataset.state = state ?? "none";
}

/**
 * What a page is given: the scope tree, `reload()` to draw it again, and `live(state)` for
 * its watch's state — shown in the header while the page is the one on screen (a page being
 * drawn keeps its last state, shown once it is).
 */
function pageContext(ticket) {
  let last = null;
  const live = (state) => {
    last = state;
    if (ticket === showing) showLive(state);
  };
  live.replay = () => showLive(last);
  return { nav: scopeNav, live, reload: () => draw(parseRoute(), { reload: true }) };
}

/** Draws the page `route` names; `reload`: the same page again (keep the focus where it is). */
async function draw(route, { reload = false } = {}) {
  if (!session()) return;
  const ticket = ++drawing;
  if (route.name === "home" || route.name === "signin-code") route = { name: "scope", scope: session().scope, query: {} };
  if (!reload) clearMessages();
  for (const link of topLinks.querySelectorAll("a")) {
    link.toggleAttribute("aria-current", link.dataset.section === SECTION_OF_PAGE[route.name]);
  }
  scopeNav.setCurrent(route.scope ?? null);
  main.setAttribute("aria-busy", "true");
  const page = h("div", { class: "page" });
  const context = pageContext(ticket);
  let done = null;
  try {
    done = await PAGES[route.name](page, route, context);
  } catch (error) {
    if (error.status === 401) return;
    replaceChildren(page, pageHeading("This page cannot be shown"),
      h("p", { class: "field-error", "data-testid": "page-error", text: error.message }));
    reportError(error);
  }
  if (ticket !== drawing) {
    done?.();
    return;
  }
  cleanup?.();
  cleanup = done;
  showing = ticket;
  context.live.replay();
  replaceChildren(main, page);
  main.removeAttribute("aria-busy");
  if (!reload) document.getElementById("page-title")?.focus();
}

/** The signed-in console: header, scope tree, and the page of the current route. */
function start(info) {
  sessionInfo.textContent = `${info.name} · ${info.role} at ${info.scope}${info.role === "reader" ? " · read-only" : ""}`;
  sessionInfo.title = `Session until ${new Date(info.expiresAt).toLocaleString()}`;
  topLinks.hidden = false;
  signOutButton.hidden = false;
  sideNav.hidden = false;
  scopeNav?.close(); // a sign-in link opened in a tab already signed in
  scopeNav = new ScopeNav(sideNav, info.scope);
  draw(parseRoute());
}

/** Leaves the signed-in console (sign-out, or the session ended) for the sign-in page. */
function showSignIn(problem) {
  drawing += 1;
  cleanup?.();
  cleanup = null;
  scopeNav?.close();
  scopeNav = null;
  forgetSchemas();
  showLive(null);
  topLinks.hidden = true;
  signOutButton.hidden = true;
  sideNav.hidden = true;
  sessionInfo.textContent = "";
  clearMessages();
  main.removeAttribute("aria-busy");
  renderSignIn(main, problem, start);
}

/** Signs in with a link's code; the code leaves the address bar before it is even sent. */
async function signInWithCode(code) {
  replaceRoute(`${location.pathname}${location.search}#/`);
  try {
    start(await signIn({ code }));
  } catch (error) {
    showSignIn(error.message);
  }
}

async function boot() {
  const route = parseRoute();
  if (route.name === "signin-code") return signInWithCode(route.code);
  try {
    const info = await resume();
    if (info) start(info);
    else showSignIn();
  } catch (error) {
    showSignIn(error.message);
  }
}

onSessionEnded((why) => showSignIn(why));
onRouteChange((route) => {
  if (route.name === "signin-code") signInWithCode(route.code);
  else draw(route);
});
signOutButton.addEventListener("click", guarded(async () => {
  await signOut();
  showSignIn();
  announce("Signed out.");
}));
document.getElementById("skip").addEventListener("click", () => main.focus());
boot();
