// A key at a scope: its effective value and every layer of its resolution (the winning one
// marked); the editor, whose saves name the revision the page showed (`If-Match`) so they
// cannot clobber a change made meanwhile — a stale save shows that change and its author,
// and lets the person apply theirs again or keep the current one; reset, lock and unlock,
// each confirmed with what it does below the scope. The page follows the key live.

import { getJSON, keyPath, request } from "/ui/api.js";
import { confirmAction } from "/ui/confirm.js";
import { field, flash, h, replaceChildren } from "/ui/dom.js";
import { valueEditor } from "/ui/editor.js";
import { describeSchema, formatValue, parseSource, plural, sourceBadge, timeElement, valueOf } from "/ui/format.js";
import { pageHeading, scopeTrail } from "/ui/layout.js";
import { Watch } from "/ui/live.js";
import { announce, guarded, reportError } from "/ui/notify.js";
import { links } from "/ui/router.js";
import { schemas } from "/ui/schemas.js";
import { isAtOrBelow } from "/ui/scopes.js";
import { can, session } from "/ui/session.js";

/** Reads the key at the scope, explained, with its revision there (`etag`) and its schema. */
async function readKey(key, scope) {
  const [answer, schemaMap] = await Promise.all([
    request("GET", keyPath("/v1/prefs", key), { query: { scope, explain: 1 } }),
    schemas(),
  ]);
  return { resolved: answer.data, etag: answer.etag ?? 0, schema: schemaMap[key] };
}

/** How many values of `key` are set below `scope` (read now, from a dump of the scope). */
async function valuesBelow(key, scope) {
  const dump = await getJSON("/v1/dump", { scope });
  return dump.values.filter((value) => value.key === key && value.scope !== scope).length;
}

/** Draws the page of `route.key` at `route.scope` into `main`; answers its cleanup. */
export async function renderKeyPage(main, route, context) {
  const key = route.key;
  const scope = route.scope || session().scope;
  const page = new KeyPage(key, scope, await readKey(key, scope));
  replaceChildren(main,
    pageHeading(key),
    h("p", { class: "subtitle" }, "at scope ", h("code", { text: scope })),
    scopeTrail(scope),
    h("p", { class: "links" },
      h("a", { href: links.history(key, scope), "data-testid": "history-link", text: "History of this key here" }), " · ",
      h("a", { href: links.scope(scope), text: `Every key at ${scope}` })),
    page.element);
  const watch = new Watch({ scope, key }, page.state.resolved.revision, {
    onEvents: () => page.refresh({ live: true }),
    onState: context.live,
    onReset: () => page.refresh({ live: true }),
  });
  return () => watch.close();
}

class KeyPage {
  constructor(key, scope, state) {
    this.key = key;
    this.scope = scope;
    this.state = state;
    this.dirty = false;
    this.value = h("code", { "data-testid": "effective-value" });
    this.source = h("span", { "data-testid": "effective-source" });
    this.schemaText = h("dd", { "data-testid": "schema-text" });
    this.chain = h("ol", { class: "chain", "data-testid": "explain-chain", "aria-labelledby": "explain-heading" });
    this.sourceNote = h("p", { class: "note", "data-testid": "source-note", hidden: true });
    const reading = [
      h("section", { "aria-labelledby": "value-heading" },
        h("h2", { id: "value-heading", text: "Effective value" }),
        h("dl", { class: "facts" },
          h("dt", { text: "Value" }), h("dd", {}, this.value),
          h("dt", { text: "Comes from" }), h("dd", {}, this.source),
          h("dt", { text: "Schema" }), this.schemaText),
        this.sourceNote),
      h("section", { "aria-labelledby": "explain-heading" },
        h("h2", { id: "explain-heading", text: "Explanation, first layer to last" }),
        this.chain),
    ];
    this.element = h("div", { class: "key-page" },
      h("div", { class: "column" }, reading),
      can("writer") ? h("div", { class: "column" }, this.editSection(), this.actionsSection()) : null);
    this.show();
    this.editor?.set(this.shownValue());
  }

  /** The effective value, or undefined when the key has none. */
  shownValue() {
    return valueOf(this.state.resolved);
  }

  /** The layer `scope:S` of the chain: what is set at the page's own scope. */
  ownLayer() {
    return this.state.resolved.chain.find((layer) => layer.layer === `scope:${this.scope}`);
  }

  /** Shows the state read last (value, source, schema, chain, revision, lock). */
  show() {
    const { resolved, schema } = this.state;
    this.value.textContent = formatValue(this.shownValue());
    replaceChildren(this.source, sourceBadge(resolved.source));
    this.schemaText.textContent = schema
      ? [schema.description, describeSchema(schema)].filter(Boolean).join(" — ")
      : "No schema: any JSON value.";
    const root = session().scope;
    replaceChildren(this.chain, resolved.chain.map((layer) => {
      const wins = layer.layer === resolved.source;
      const { path } = parseSource(layer.layer);
      const hidden = path !== null && !isAtOrBelow(path, root);
      const value = "value" in layer ? formatValue(layer.value) : hidden ? "(above your scope)" : "—";
      return h("li", {
        class: wins ? "winner" : null, "data-testid": "chain-layer", "data-layer": layer.layer, "aria-current": wins ? "true" : null,
      },
        sourceBadge(layer.layer),
        h("code", { class: "layer-value", text: value }),
        layer.revision !== undefined ? h("span", { class: "revision", text: `revision ${layer.revision}` }) : null,
        wins ? h("strong", { class: "wins", text: "wins" }) : null);
    }));
    const { kind, path } = parseSource(resolved.source);
    let note = "";
    if (kind === "lock" && path !== this.scope) note = `Locked at ${path}: nothing set here applies, and setting it here is refused.`;
    if (kind === "override") note = "An override (prefsd --override) wins over every scope: what is set here applies once it is gone.";
    this.sourceNote.hidden = !note;
    this.sourceNote.textContent = note;
    if (this.lockButton) {
      const lockedHere = resolved.chain.some((layer) => layer.layer === `lock:${this.scope}`);
      this.lockButton.hidden = lockedHere;
      this.unlockButton.hidden = !lockedHere;
    }
  }

  /** Reads the key again; `live`: because it changed elsewhere (mark it, keep what is typed). */
  async refresh({ live = false } = {}) {
    const before = this.state;
    try {
      this.state = await readKey(this.key, this.scope);
    } catch (error) {
      if (error.status !== 401) reportError(error);
      return;
    }
    this.show();
    const moved = this.state.etag !== before.etag || formatValue(this.shownValue()) !== formatValue(valueOf(before.resolved));
    if (live && moved) {
      flash(this.value.closest("section"));
      flash(this.chain);
    }
    if (!this.editor) return;
    if (!this.dirty) {
      this.editor.set(this.shownValue());
      this.base = this.state.etag;
      this.showBase();
    } else if (moved) {
      this.changedNote.hidden = false;
      this.changedNote.textContent = `Changed meanwhile: now ${formatValue(this.shownValue())} (revision ${this.state.etag} here). ` +
        "Saving will show what changed.";
    }
  }

  showBase() {
    this.baseText.textContent = `Your change is based on revision ${this.base} of ${this.key} at ${this.scope}.`;
    this.changedNote.hidden = true;
  }

  editSection() {
    this.editor = valueEditor(this.state.schema, "value-input");
    this.base = this.state.etag;
    this.error = h("p", { id: "value-error", class: "field-error", "data-testid": "field-error", hidden: true });
    this.editor.control.setAttribute("aria-describedby", "value-hint value-error");
    this.editor.control.addEventListener("input", () => { this.dirty = true; });
    this.editor.control.addEventListener("change", () => { this.dirty = true; });
    this.reason = h("input", { type: "text", id: "reason-input", "data-testid": "reason-input", maxlength: "500", autocomplete: "off" });
    this.baseText = h("p", { class: "hint", "data-testid": "base-revision" });
    this.changedNote = h("p", { class: "note", "data-testid": "changed-note", role: "status", hidden: true });
    this.stale = h("div", { class: "stale", "data-testid": "stale-panel", hidden: true, tabindex: "-1" });
    this.showBase();
    const submit = (event) => {
      event.preventDefault();
      guarded(() => this.save(this.base))();
    };
    const form = h("form", { novalidate: true, "data-testid": "edit-form", on: { submit } },
      h("div", { class: "field" },
        h("label", { for: "value-input", text: `Value at ${this.scope}` }),
        h("div", { class: "with-error" }, this.editor.element, this.error),
        h("p", { class: "hint", id: "value-hint", text: describeSchema(this.state.schema) || "Any JSON value." })),
      field("Reason (optional, kept with the change)", this.reason),
      this.baseText,
      this.changedNote,
      h("div", { class: "actions" }, h("button", { type: "submit", "data-testid": "save", text: "Save" })),
      this.stale);
    return h("section", { "aria-labelledby": "edit-heading" }, h("h2", { id: "edit-heading", text: `Change it at ${this.scope}` }), form);
  }

  actionsSection() {
    const button = (testid, text, action) =>
      h("button", { type: "button", class: "secondary", "data-testid": testid, text, on: { click: guarded(action) } });
    const buttons = [button("reset", "Reset…", () => this.reset())];
    if (can("admin")) {
      this.lockButton = button("lock", "Lock…", () => this.lock());
      this.unlockButton = button("unlock", "Unlock…", () => this.unlock());
      buttons.push(this.lockButton, this.unlockButton);
    }
    return h("section", { "aria-labelledby": "actions-heading" },
      h("h2", { id: "actions-heading", text: can("admin") ? "Reset and lock" : "Reset" }),
      h("div", { class: "actions" }, buttons));
  }

  showFieldError(message) {
    this.error.hidden = !message;
    this.error.textContent = message ?? "";
    if (message) this.editor.control.setAttribute("aria-invalid", "true");
    else this.editor.control.removeAttribute("aria-invalid");
  }

  /** Saves what is typed, based on revision `ifMatch` at the scope. */
  async save(ifMatch, json = null) {
    const typed = json === null ? this.editor.read() : { json };
    this.showFieldError(typed.problem);
    if (typed.problem) {
      reportError(typed.problem);
      this.editor.control.focus();
      return;
    }
    try {
      const answer = await request("PUT", keyPath("/v1/prefs", this.key),
        { query: { scope: this.scope }, body: typed.json, ifMatch, reason: this.reason.value });
      this.stale.hidden = true;
      this.dirty = false;
      await this.refresh();
      announce(`Saved ${this.key} at ${this.scope} (revision ${answer.data.revision}).`);
    } catch (error) {
      if (error.status === 412 && error.body?.currentPreference) await this.showStale(error, typed.json);
      else if (error.status !== 401) {
        this.showFieldError(error.message);
        reportError(error);
        this.editor.control.focus();
      }
    }
  }

  /** The stale save's resolution: what is there now, who changed it, and the two ways out. */
  async showStale(error, json) {
    const current = error.body.currentPreference;
    let change = null;
    try {
      const history = await getJSON(keyPath("/v1/prefs", this.key) + "/history", { scope: this.scope, limit: 1 });
      change = history.steps[0]?.change ?? null;
    } catch (failure) {
      if (failure.status === 401) return;
    }
    const now = "value" in current ? formatValue(current.value) : "nothing set here";
    const reapply = h("button", { type: "button", "data-testid": "stale-reapply", text: "Re-apply mine",
      on: { click: guarded(() => this.save(current.revision, json)) } });
    const keep = h("button", { type: "button", class: "secondary", "data-testid": "stale-keep", text: "Keep theirs",
      on: { click: guarded(() => this.keepTheirs()) } });
    replaceChildren(this.stale,
      h("h3", { text: "Changed while you were editing" }),
      h("p", { text: error.message }),
      h("dl", { class: "facts" },
        h("dt", { text: "Yours" }), h("dd", {}, h("code", { "data-testid": "stale-mine", text: json })),
        h("dt", { text: `At ${this.scope} now` }), h("dd", {}, h("code", { "data-testid": "stale-theirs", text: now }),
          current.locked ? " (locked here)" : "", ` — revision ${current.revision}`),
        h("dt", { text: "Changed by" }), h("dd", { "data-testid": "stale-author" },
          change ? [change.author, change.agent ? ` (${change.agent})` : "", ", ", timeElement(change.time),
            change.reason ? ` — “${change.reason}”` : ""] : "someone else")),
      h("div", { class: "actions" }, reapply, keep));
    this.stale.hidden = false;
    reportError(`${this.key} changed at ${this.scope} while you were editing: re-apply yours or keep theirs.`);
    this.stale.focus();
  }

  async keepTheirs() {
    this.stale.hidden = true;
    this.dirty = false;
    this.showFieldError(null);
    await this.refresh();
    announce(`Kept ${formatValue(this.shownValue())}, the current value.`);
    this.editor.control.focus();
  }

  /** Runs a confirmed reset, lock or unlock at the scope, based on the revision shown. */
  async act(method, base, done) {
    try {
      await request(method, keyPath(base, this.key), { query: { scope: this.scope }, ifMatch: this.state.etag, reason: this.reason.value });
      this.dirty = false;
      await this.refresh();
      announce(done);
    } catch (error) {
      if (error.status === 401) return;
      reportError(error);
      await this.refresh();
    }
  }

  async reset() {
    const layers = this.state.resolved.chain;
    const own = this.ownLayer();
    let message;
    if (!own || !("value" in own)) {
      message = `Nothing is set for ${this.key} at ${this.scope}: resetting changes nothing.`;
    } else {
      const after = layers.slice(layers.indexOf(own) + 1).find((layer) => "value" in layer && !layer.layer.startsWith("lock:"));
      const below = await valuesBelow(this.key, this.scope);
      const then = after ? `${formatValue(after.value)} (from ${after.layer})` : "no value";
      message = `Resetting removes ${formatValue(own.value)}, set at ${this.scope}: ${this.scope} and every scope below it ` +
        `that sets no value of its own then take ${then}; the ${plural(below, "value")} set below ${below === 1 ? "stays" : "stay"}.`;
    }
    if (await confirmAction({ title: `Reset ${this.key}?`, message, confirmLabel: "Reset" })) {
      await this.act("DELETE", "/v1/prefs", `Reset ${this.key} at ${this.scope}.`);
    }
  }

  async lock() {
    const below = await valuesBelow(this.key, this.scope);
    const message = `Locking at ${this.scope} pins ${formatValue(this.shownValue())} for every scope below it; ` +
      `${plural(below, "value")} set below ${below === 1 ? "is" : "are"} hidden.`;
    if (await confirmAction({ title: `Lock ${this.key}?`, message, confirmLabel: "Lock" })) {
      await this.act("PUT", "/v1/locks", `Locked ${this.key} at ${this.scope}.`);
    }
  }

  async unlock() {
    const below = await valuesBelow(this.key, this.scope);
    const message = `Unlocking at ${this.scope} lets every scope below it set ${this.key} again; ` +
      `${plural(below, "value")} set below ${below === 1 ? "takes" : "take"} effect again.`;
    if (await confirmAction({ title: `Unlock ${this.key}?`, message, confirmLabel: "Unlock" })) {
      await this.act("DELETE", "/v1/locks", `Unlocked ${this.key} at ${this.scope}.`);
    }
  }
}
