// Live pages: prefsd's watch (`GET /v1/watch`, Server-Sent Events) read with fetch() and a
// ReadableStream — EventSource cannot send the Authorization header — and parsed here. A
// dropped stream is opened again with `Last-Event-ID: <the last id seen>`, so nothing is
// missed or repeated; prefsd's notices (progress, overflow, shutdown, revoked) are handled
// here and never reach the page.

import { authorizedFetch, withQuery } from "/ui/api.js";
import { reportError } from "/ui/notify.js";

const FIRST_RETRY_MS = 250;
const LAST_RETRY_MS = 5000;

/** An incremental parser of the `text/event-stream` format (the HTML standard's rules). */
class EventStreamParser {
  constructor() {
    this.buffer = "";
    this.afterCR = false;
    this.data = [];
    this.type = "";
    this.id = null;
  }

  /** Takes the next piece of the stream; answers the events it completed, `{ id, type, data }`. */
  feed(text) {
    // A piece that ended with "\r" ended a line; a "\n" right after it is that line's end too.
    const rest = this.afterCR && text.startsWith("\n") ? text.slice(1) : text;
    this.afterCR = rest.endsWith("\r");
    const lines = (this.buffer + rest).split(/\r\n|\r|\n/);
    this.buffer = lines.pop();
    const events = [];
    for (const line of lines) {
      if (line === "") {
        if (this.data.length) events.push({ id: this.id, type: this.type || "message", data: this.data.join("\n") });
        this.data = [];
        this.type = "";
      } else if (!line.startsWith(":")) {
        const colon = line.indexOf(":");
        const name = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (name === "data") this.data.push(value);
        else if (name === "event") this.type = value;
        else if (name === "id" && !value.includes("\0")) this.id = value;
      }
    }
    return events;
  }
}

/** Waits `ms` milliseconds. */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One watch, kept open until close(): `query` is the watch's query (`scope`, `key`, `prefix`,
 * `draft`, `thread`, `account`), `since` the revision to replay from (the revision of the data
 * the page shows). Handlers: `onEvents(changes)` with the ChangeEvents of each piece of the
 * stream; `onState(state)` with `connecting`, `open`, `reconnecting`, `closed`; `onReset()`
 * when prefsd cannot resume from the last revision seen (compacted, or unknown) and the watch
 * starts again from now, so the page should read its data again. A watch prefsd refuses for
 * good (400, 403) is reported and closed.
 */
export class Watch {
  constructor(query, since, handlers) {
    this.query = query;
    this.lastId = since === undefined || since === null ? null : String(since);
    this.resumed = false;
    this.handlers = handlers;
    this.controller = new AbortController();
    this.closed = false;
    this.opened = false;
    this.run();
  }

  /** Stops the watch for good. */
  close() {
    if (this.closed) return;
    this.closed = true;
    this.controller.abort();
    this.state("closed");
  }

  state(value) {
    this.handlers.onState?.(value);
  }

  async run() {
    let delay = FIRST_RETRY_MS;
    while (!this.closed) {
      this.state(this.resumed ? "reconnecting" : "connecting");
      this.opened = false;
      const outcome = await this.connect().catch(() => "dropped");
      if (this.closed) return;
      if (outcome === "reset") {
        this.lastId = null;
        this.handlers.onReset?.();
      }
      this.resumed = true;
      this.state("reconnecting");
      // Retries back off while they fail; after a stream that was open they start afresh.
      if (this.opened) delay = FIRST_RETRY_MS;
      await sleep(outcome === "overflow" ? 0 : delay);
      delay = Math.min(delay * 2, LAST_RETRY_MS);
    }
  }

  /** One connection; answers why it ended: dropped, overflow, reset, or stopped. */
  async connect() {
    const headers = { Accept: "text/event-stream" };
    const query = { ...this.query };
    // The first connection replays with `since`; a resumed one says where it was as SSE does.
    if (this.lastId !== null && this.resumed) headers["Last-Event-ID"] = this.lastId;
    else if (this.lastId !== null) query.since = this.lastId;
    const response = await authorizedFetch(withQuery("/v1/watch", query), { headers, signal: this.controller.signal });
    if (response.status === 401) return this.stop();
    if (!response.ok) {
      const body = await response.json().catch(() => null);
      if (response.status === 410 || body?.error?.newestRevision !== undefined) return "reset";
      if (response.status === 400 || response.status === 403) {
        reportError(body?.error?.message ?? "prefsd refused to watch this page's changes.");
        return this.stop();
      }
      return "dropped";
    }
    this.opened = true;
    this.state("open");
    return this.read(response.body);
  }

  stop() {
    this.close();
    return "stopped";
  }

  /** Reads the stream until it ends; delivers each piece's changes at once. */
  async read(body) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    const parser = new EventStreamParser();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return "dropped";
      const changes = [];
      let ending = null;
      for (const event of parser.feed(decoder.decode(value, { stream: true }))) {
        if (event.id !== null) this.lastId = event.id;
        let data;
        try {
          data = JSON.parse(event.data);
        } catch {
          continue;
        }
        if (event.type === "error" || data.kind === "shutdown") ending = "dropped";
        else if (data.kind === "overflow") ending = "overflow";
        else if (data.kind === "revoked") ending = "revoked";
        else if (data.kind !== "progress") changes.push(data);
      }
      if (changes.length) this.handlers.onEvents(changes);
      if (ending === "revoked") return this.stop();
      if (ending) {
        reader.cancel().catch(() => {});
        return ending;
      }
    }
  }
}
