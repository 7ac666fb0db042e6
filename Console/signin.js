// The sign-in page: a sign-in link from `prefsctl ui` signs in by itself (app.js); here a
// token can be pasted instead — the token of `prefsd --token-file`, or a named token's secret.

import { field, h, replaceChildren } from "/ui/dom.js";
import { pageHeading } from "/ui/layout.js";
import { signIn } from "/ui/session.js";

/**
 * Draws the sign-in page into `main`, with `problem` (why the last sign-in failed) shown
 * when given; calls `signedIn(session)` once a pasted token is taken.
 */
export function renderSignIn(main, problem, signedIn) {
  const token = h("input", {
    type: "password", id: "token-input", autocomplete: "off", spellcheck: "false", required: true, "data-testid": "token-input",
  });
  const error = h("p", { class: "field-error", id: "signin-error", role: "alert", "data-testid": "signin-error", text: problem ?? "" });
  token.setAttribute("aria-describedby", "signin-error");
  const submit = h("button", { type: "submit", "data-testid": "signin-submit", text: "Sign in" });
  const form = h("form", { class: "signin", novalidate: true, on: { submit: async (event) => {
    event.preventDefault();
    if (!token.value.trim()) {
      error.textContent = "Paste a token first.";
      token.focus();
      return;
    }
    submit.disabled = true;
    try {
      const session = await signIn({ token: token.value.trim() });
      token.value = "";
      signedIn(session);
    } catch (failure) {
      error.textContent = failure.message;
      token.select();
      token.focus();
    } finally {
      submit.disabled = false;
    }
  } } },
  field("Token", token, "The token of prefsd --token-file, or a secret from prefsctl token create. " +
    "It is traded for a session that ends with this tab."),
  error,
  h("div", { class: "actions" }, submit));
  replaceChildren(main,
    pageHeading("Sign in to prefsd"),
    h("p", {}, "Open the link that ", h("code", { text: "prefsctl ui" }), " prints, or paste a token."),
    form);
  token.focus();
}
