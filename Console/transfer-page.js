// Export and import of a scope's subtree: `GET /v1/dump?scope=S` saved as a JSON file, and
// `POST /v1/load` of a chosen file — merged, or with `replace=1` making the subtree equal to
// the file, after a confirmation that lists what would be removed (what the subtree holds
// now that the file does not).

import { getBlob, getJSON, request } from "/ui/api.js";
import { confirmAction } from "/ui/confirm.js";
import { downloadBlob, field, h, replaceChildren } from "/ui/dom.js";
import { formatValue } from "/ui/format.js";
import { pageHeading } from "/ui/layout.js";
import { announce, guarded, reportError } from "/ui/notify.js";
import { can, session } from "/ui/session.js";

/** The file name of a scope's dump: `prefsd-accounts-alice.json`, `prefsd-root.json`. */
function dumpFilename(scope) {
  return `prefsd-${scope === "/" ? "root" : scope.slice(1).replace(/[^A-Za-z0-9_.@+-]+/g, "-")}.json`;
}

/**
 * What loading `file` with replace removes from `current` (a dump of the same scope): the
 * values and locks `current` holds that `file` does not, as lines to list.
 */
function removedByReplace(current, file) {
  const id = (entry) => `${entry.key}\u0000${entry.scope}`;
  const kept = new Set((file.values ?? []).map(id));
  const keptLocks = new Set((file.locks ?? []).map(id));
  return [
    ...current.values.filter((value) => !kept.has(id(value)))
      .map((value) => `value ${value.key} at ${value.scope} (${formatValue(value.value, 60)})`),
    ...current.locks.filter((lock) => !keptLocks.has(id(lock))).map((lock) => `lock of ${lock.key} at ${lock.scope}`),
  ];
}

/** Reads a chosen file as a dump: `{ text, dump }`; throws an Error saying what is wrong. */
async function readDumpFile(file) {
  const text = await file.text();
  let dump;
  try {
    dump = JSON.parse(text);
  } catch (error) {
    throw new Error(`${file.name} is not JSON: ${error.message}`);
  }
  if (!dump || typeof dump !== "object" || Array.isArray(dump) || dump.format === undefined) {
    throw new Error(`${file.name} is not a prefsd dump (it has no "format").`);
  }
  return { text, dump };
}

/** Draws export and import of `route.query.scope`'s subtree into `main`. */
export async function renderTransferPage(main, route) {
  const scopeInput = h("input", {
    type: "text", id: "transfer-scope", value: route.query.scope ?? session().scope, "data-testid": "transfer-scope", spellcheck: "false",
  });
  const exportButton = h("button", { type: "button", "data-testid": "export", text: "Export" });
  exportButton.addEventListener("click", guarded(async () => {
    const scope = scopeInput.value.trim() || "/";
    const filename = dumpFilename(scope);
    downloadBlob(await getBlob("/v1/dump", { scope }), filename);
    announce(`Exported ${scope} as ${filename}.`);
  }));
  const sections = [
    pageHeading("Export and import"),
    h("section", { "aria-labelledby": "export-heading" },
      h("h2", { id: "export-heading", text: "Export" }),
      h("form", { class: "inline", novalidate: true, on: { submit: (event) => { event.preventDefault(); exportButton.click(); } } },
        field("Scope", scopeInput, "Its values and locks, and those of every scope below it, with every schema."),
        exportButton)),
  ];
  if (can("writer")) sections.push(importSection());
  replaceChildren(main, sections);
}

function importSection() {
  const fileInput = h("input", { type: "file", id: "import-file", accept: ".json,application/json", "data-testid": "import-file" });
  const summary = h("p", { class: "hint", "data-testid": "import-summary", "aria-live": "polite" });
  const replace = can("admin") ? h("input", { type: "checkbox", id: "import-replace", "data-testid": "import-replace" }) : null;
  const submit = h("button", { type: "submit", "data-testid": "import-submit", text: "Import", disabled: true });
  const result = h("p", { "data-testid": "import-result", "aria-live": "polite" });
  let chosen = null;

  fileInput.addEventListener("change", guarded(async () => {
    chosen = null;
    submit.disabled = true;
    summary.textContent = "";
    const file = fileInput.files[0];
    if (!file) return;
    try {
      chosen = await readDumpFile(file);
    } catch (error) {
      summary.textContent = error.message;
      return;
    }
    const { dump } = chosen;
    summary.textContent = `${file.name}: scope ${dump.scope ?? "/"}, ${(dump.values ?? []).length} values, ` +
      `${(dump.locks ?? []).length} locks, ${Object.keys(dump.schemas ?? {}).length} schemas.`;
    submit.disabled = false;
  }));

  const load = async () => {
    if (!chosen) return;
    const { text, dump } = chosen;
    const scope = dump.scope ?? "/";
    const replacing = replace?.checked ?? false;
    if (replacing) {
      const removed = removedByReplace(await getJSON("/v1/dump", { scope }), dump);
      const message = removed.length
        ? `Importing with replace makes ${scope} and every scope below it equal to the file: ${removed.length} ` +
          `${removed.length === 1 ? "entry it does not hold is" : "entries it does not hold are"} removed.`
        : `Importing with replace makes ${scope} and every scope below it equal to the file; ` +
          "nothing there is missing from it, so nothing is removed.";
      if (!(await confirmAction({ title: `Replace ${scope}?`, message, items: removed, confirmLabel: "Replace" }))) return;
    }
    try {
      const answer = await request("POST", "/v1/load", { query: { replace: replacing ? 1 : undefined }, body: text });
      result.textContent = `Loaded into ${scope}${replacing ? ", replacing what was there" : ""}: revision ${answer.data.revision}.`;
      announce(result.textContent);
    } catch (error) {
      if (error.status === 401) return;
      result.textContent = error.message;
      reportError(error);
    }
  };

  return h("section", { "aria-labelledby": "import-heading" },
    h("h2", { id: "import-heading", text: "Import" }),
    h("form", { novalidate: true, on: { submit: (event) => { event.preventDefault(); guarded(load)(); } } },
      field("Dump file", fileInput, "A file exported here or by prefsctl dump; loaded all at once, or not at all."),
      summary,
      replace ? h("div", { class: "field checkbox" }, replace,
        h("label", { for: "import-replace", text: "Replace: remove what the file's scope and the scopes below it hold and the file does not" }))
        : null,
      h("div", { class: "actions" }, submit),
      result));
}
