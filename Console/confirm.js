// Confirmations of what cannot be taken back (reset, lock, unlock, revert, import with replace):
// a modal <dialog> that says what will happen, with the focus on Cancel and Escape to cancel.

import { h } from "/ui/dom.js";

const MOST_ITEMS_SHOWN = 200;

/**
 * Asks before an action; answers true when confirmed. `message` says what happens; `items`,
 * when given, are listed below it (the first 200, then how many more).
 */
export function confirmAction({ title, message, items = null, confirmLabel }) {
  return new Promise((resolve) => {
    const cancel = h("button", { type: "button", class: "secondary", "data-testid": "confirm-cancel", text: "Cancel" });
    const ok = h("button", { type: "button", class: "danger", "data-testid": "confirm-ok", text: confirmLabel });
    const list = items && h("ul", { class: "confirm-list", "data-testid": "confirm-list" },
      items.slice(0, MOST_ITEMS_SHOWN).map((item) => h("li", { text: item })),
      items.length > MOST_ITEMS_SHOWN ? h("li", { text: `… and ${items.length - MOST_ITEMS_SHOWN} more` }) : null);
    const dialog = h("dialog", {
      class: "confirm", "aria-labelledby": "confirm-title", "aria-describedby": "confirm-message", "data-testid": "confirm-dialog",
    },
      h("h2", { id: "confirm-title", text: title }),
      h("p", { id: "confirm-message", "data-testid": "confirm-message", text: message }),
      list,
      h("div", { class: "actions" }, cancel, ok));
    let confirmed = false;
    ok.addEventListener("click", () => {
      confirmed = true;
      dialog.close();
    });
    cancel.addEventListener("click", () => dialog.close());
    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(confirmed);
    });
    document.body.append(dialog);
    dialog.showModal();
    cancel.focus();
  });
}
