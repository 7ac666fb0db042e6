// Drafts: a list by account and thread (`GET /v1/drafts`, `GET /v1/threads/{id}`) with each
// draft's validity, and one draft's page — its text, why it is not valid
// (`GET /v1/drafts/{id}/validation`), its attachments, images as thumbnails. An <img> cannot
// send the Authorization header, so an image's bytes are fetched with it and shown from a
// blob URL (revoked when the page closes). Both pages follow their drafts live.

import { getBlob, getJSON } from "/ui/api.js";
import { dataTable, debounce, downloadBlob, field, h, replaceChildren } from "/ui/dom.js";
import { timeElement } from "/ui/format.js";
import { pageHeading } from "/ui/layout.js";
import { Watch } from "/ui/live.js";
import { guarded, reportError } from "/ui/notify.js";
import { go, links } from "/ui/router.js";
import { accountOf } from "/ui/scopes.js";
import { session } from "/ui/session.js";

const EXCERPT = 60;
const VALIDATIONS_AT_ONCE = 6;
const RELOAD_DELAY_MS = 200;

const draftPath = (id) => `/v1/drafts/${encodeURIComponent(id)}`;

/** "12.3 KB" */
function formatBytes(n) {
  if (n < 1024) return `${n} bytes`;
  const units = ["KB", "MB", "GB"];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** A cell saying whether the draft is valid, and `fill()`, which reads its validation into it. */
function validityCell(draft) {
  const cell = h("td", { "data-testid": "draft-valid", text: "…" });
  const fill = async () => {
    const validation = await getJSON(`${draftPath(draft.id)}/validation`);
    cell.textContent = validation.valid ? "yes" : `no: ${validation.problems.map((p) => p.message).join(" ")}`;
  };
  return { cell, fill };
}

/** Runs the `tasks` (functions answering promises), a few at a time. */
async function runFewAtATime(tasks) {
  const queue = [...tasks];
  const worker = async () => {
    while (queue.length) await queue.shift()();
  };
  await Promise.all(Array.from({ length: VALIDATIONS_AT_ONCE }, worker));
}

/** A watch of drafts that draws the page again (debounced) when one changes. */
function reloadingWatch(query, context) {
  const reload = debounce(context.reload, RELOAD_DELAY_MS);
  const watch = new Watch(query, null, { onEvents: reload, onState: context.live, onReset: reload });
  return () => {
    reload.cancel();
    watch.close();
  };
}

/** Draws the drafts of `route.query.account` (and `thread`) into `main`; answers its cleanup. */
export async function renderDraftsPage(main, route, context) {
  const account = route.query.account ?? accountOf(session().scope) ?? "";
  const thread = route.query.thread ?? "";
  let drafts;
  let missing = null;
  if (thread) {
    try {
      drafts = (await getJSON(`/v1/threads/${encodeURIComponent(thread)}`)).drafts.filter((d) => !account || d.account === account);
    } catch (error) {
      if (error.status !== 404) throw error;
      drafts = [];
      missing = error.message;
    }
  } else {
    drafts = (await getJSON("/v1/drafts", { account })).drafts;
  }
  const accountInput = h("input", { type: "text", id: "drafts-account", value: account, "data-testid": "drafts-account",
    autocomplete: "off" });
  const threadInput = h("input", { type: "text", id: "drafts-thread", value: thread, "data-testid": "drafts-thread", autocomplete: "off" });
  const { table, body } = dataTable(thread ? `Drafts of thread ${thread}` : account ? `Drafts of ${account}` : "Every draft",
    ["Draft", "Account", "Thread", "Updated", "Attachments", "Valid"], { "data-testid": "drafts-table" });
  const validities = [];
  for (const draft of drafts) {
    const validity = validityCell(draft);
    validities.push(validity.fill);
    const excerpt = draft.text.length > EXCERPT ? `${draft.text.slice(0, EXCERPT - 1)}…` : draft.text || "(no text)";
    const mark = syncMark(draft);
    body.append(h("tr", { "data-testid": "draft-row", "data-draft": draft.id },
      h("th", { scope: "row" }, h("a", { href: links.draft(draft.id), "data-testid": "draft-link", text: excerpt }),
        mark ? h("span", { class: "sync-mark", "data-testid": "draft-sync-mark", text: ` (${mark})` }) : ""),
      h("td", {}, h("a", { href: links.drafts({ account: draft.account }), text: draft.account })),
      h("td", {}, draft.thread
        ? h("a", { href: links.drafts({ account: draft.account, thread: draft.thread }), text: `${draft.thread} #${draft.position}` })
        : "—"),
      h("td", {}, timeElement(draft.updatedAt)),
      h("td", { text: String(draft.attachments.length) }),
      validity.cell));
  }
  if (!drafts.length) body.append(h("tr", {}, h("td", { colspan: "6", text: missing ?? "No drafts here." })));
  replaceChildren(main, pageHeading("Drafts"),
    h("form", { class: "inline", novalidate: true, "aria-label": "Which drafts", on: { submit: (event) => {
      event.preventDefault();
      go(links.drafts({ account: accountInput.value.trim(), thread: threadInput.value.trim() }));
    } } },
    field("Account", accountInput), field("Thread", threadInput),
    h("button", { type: "submit", "data-testid": "drafts-show", text: "Show" })),
    table);
  runFewAtATime(validities).catch((error) => error.status !== 401 && reportError(error));
  return account || thread ? reloadingWatch({ account, thread }, context) : undefined;
}

/**
 * What sync did to `draft` that a person should know, or null: a conflicted copy (keep the version
 * you want, delete the other), or a draft an edit brought back after a delete elsewhere.
 */
function syncMark(draft) {
  if (draft.conflictOf) return `conflicted copy of ${draft.conflictOf.slice(0, 8)}`;
  return draft.deletedElsewhere ? "deleted elsewhere" : null;
}

/** Draws the draft `route.id` into `main`; answers its cleanup. */
export async function renderDraftPage(main, route, context) {
  const [draft, validation] = await Promise.all([getJSON(draftPath(route.id)), getJSON(`${draftPath(route.id)}/validation`)]);
  const blobURLs = [];
  const facts = [
    ["Account", h("a", { href: links.drafts({ account: draft.account }), text: draft.account })],
    ["Thread", draft.thread
      ? h("a", { href: links.drafts({ account: draft.account, thread: draft.thread }), text: `${draft.thread}, position ${draft.position}` })
      : "none"],
    ["Visibility", draft.visibility],
    ["Language", draft.language ?? "—"],
    ["Sensitive", draft.sensitive ? "yes" : "no"],
    ["Content warning", draft.contentWarning ?? "—"],
    ["Reply to", draft.replyTo ?? "—"],
    ["Revision", String(draft.revision)],
    ...(draft.conflictOf
      ? [["Conflicted copy of", h("a", { href: links.draft(draft.conflictOf), "data-testid": "draft-conflict-of", text: draft.conflictOf })]]
      : []),
    ...(draft.deletedElsewhere ? [["Sync", "Deleted on another device; an edit here brought it back."]] : []),
    ["Created", timeElement(draft.createdAt)],
    ["Updated", timeElement(draft.updatedAt)],
  ];
  const validity = validation.valid
    ? h("p", { class: "valid", "data-testid": "draft-validity", text: "Valid: it can be published." })
    : h("div", { "data-testid": "draft-validity" },
      h("p", { class: "invalid", text: "Not valid:" }),
      h("ul", {}, validation.problems.map((problem) =>
        h("li", { "data-testid": "draft-problem" }, h("code", { text: problem.field }), `: ${problem.message}`))));
  replaceChildren(main,
    pageHeading(`Draft ${draft.id.slice(0, 8)}`),
    h("p", { class: "subtitle" }, h("code", { text: draft.id })),
    h("section", { "aria-labelledby": "draft-text-heading" },
      h("h2", { id: "draft-text-heading", text: "Text" }),
      h("div", { class: "draft-text", "data-testid": "draft-text", text: draft.text || "(no text)" })),
    h("section", { "aria-labelledby": "validity-heading" }, h("h2", { id: "validity-heading", text: "Validity" }), validity),
    h("section", { "aria-labelledby": "facts-heading" },
      h("h2", { id: "facts-heading", text: "Details" }),
      h("dl", { class: "facts" }, facts.map(([term, detail]) => [h("dt", { text: term }), h("dd", {}, detail)]))),
    draft.poll ? h("section", { "aria-labelledby": "poll-heading" },
      h("h2", { id: "poll-heading", text: "Poll" }),
      h("ol", {}, draft.poll.options.map((option) => h("li", { text: option }))),
      h("p", { text: `Runs ${draft.poll.expiresIn} seconds; ${draft.poll.multiple ? "several choices" : "one choice"} a voter.` }))
      : null,
    h("section", { "aria-labelledby": "attachments-heading" },
      h("h2", { id: "attachments-heading", text: `Attachments (${draft.attachments.length})` }),
      h("div", { class: "attachments" }, draft.attachments.map((attachment) => attachmentFigure(draft, attachment, blobURLs)))));
  const stopWatch = reloadingWatch({ draft: draft.id }, context);
  return () => {
    stopWatch();
    for (const url of blobURLs) URL.revokeObjectURL(url);
  };
}

/** An attachment: its thumbnail (images), name, type, size and alt text, and a download button. */
function attachmentFigure(draft, attachment, blobURLs) {
  const dataPath = `${draftPath(draft.id)}/attachments/${encodeURIComponent(attachment.id)}/data`;
  const isImage = attachment.mimeType.startsWith("image/");
  const image = isImage ? h("img", {
    class: "thumb", "data-testid": "attachment-thumb",
    alt: attachment.altText ?? `${attachment.filename} (no alt text)`,
    width: attachment.width, height: attachment.height,
  }) : null;
  if (image) {
    getBlob(dataPath).then((blob) => {
      const url = URL.createObjectURL(blob);
      blobURLs.push(url);
      image.src = url;
    }, (error) => error.status !== 401 && reportError(error));
  }
  const pixels = attachment.width ? `${attachment.width}×${attachment.height}` : null;
  const size = [attachment.mimeType, formatBytes(attachment.byteSize), pixels].filter(Boolean).join(" · ");
  return h("figure", { class: "attachment", "data-testid": "attachment", "data-attachment": attachment.id },
    image,
    h("figcaption", {},
      h("strong", { text: attachment.filename }), h("br"), size, h("br"),
      attachment.altText ? `Alt text: ${attachment.altText}` : "No alt text", h("br"),
      h("button", { type: "button", class: "secondary small", text: "Download", "aria-label": `Download ${attachment.filename}`,
        on: { click: guarded(async () => downloadBlob(await getBlob(dataPath), attachment.filename)) } })));
}
