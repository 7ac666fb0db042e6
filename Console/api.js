// prefsd's HTTP API as the console calls it: every request carries the session's secret as
// `Authorization: Bearer …` (never in a URL), every write an `Idempotency-Key`, and an error
// answer becomes an ApiError with prefsd's own code and message. A 401 anywhere drops the
// session (see session.js, which supplies the secret and the handler).

let credentials = { secret: () => null, unauthorized: () => {} };

/** prefsd's `{"error": {"code", "message"}}` answer (or a network failure, status 0). */
export class ApiError extends Error {
  constructor(status, body) {
    const detail = body && body.error ? body.error : { code: "network", message: "prefsd could not be reached." };
    super(detail.message);
    this.status = status;
    this.code = detail.code;
    this.body = body;
  }
}

/** Sets where the secret comes from and what a 401 does (session.js calls this once). */
export function configureApi(secret, unauthorized) {
  credentials = { secret, unauthorized };
}

/**
 * Encodes a query value the way people read it in an address: `/` `@` `:` stay as they are
 * (they are legal in a query), everything else that needs it is percent-encoded.
 */
function encodeQueryValue(value) {
  return encodeURIComponent(value).replace(/%2F/g, "/").replace(/%40/g, "@").replace(/%3A/g, ":");
}

/** `path?query` with the query's empty (undefined, null, "") items left out. */
export function withQuery(path, query = {}) {
  const items = Object.entries(query)
    .filter(([, value]) => value !== undefined && value !== null && value !== "")
    .map(([name, value]) => `${name}=${encodeQueryValue(String(value))}`);
  return items.length ? `${path}?${items.join("&")}` : path;
}

/** The path of a key's resources (`/v1/prefs/KEY`, `/v1/locks/KEY`), the key percent-encoded. */
export function keyPath(base, key) {
  return `${base}/${encodeURIComponent(key)}`;
}

/** A new random Idempotency-Key. */
function idempotencyKey() {
  if (crypto.randomUUID) return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * fetch() with the session's bearer secret. A 401 drops the session (and still answers the
 * response, so callers can stop); a network failure is an ApiError with status 0.
 */
export async function authorizedFetch(url, init = {}) {
  const headers = new Headers(init.headers || {});
  const secret = credentials.secret();
  if (secret) headers.set("Authorization", `Bearer ${secret}`);
  let response;
  try {
    response = await fetch(url, { ...init, headers, cache: "no-store", credentials: "omit" });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, null);
  }
  if (response.status === 401) credentials.unauthorized();
  return response;
}

/** The answer's JSON, or null when it has none. */
async function readJSON(response) {
  const text = await response.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * Sends a request and answers `{ status, data, etag }`, `data` the parsed JSON answer and
 * `etag` the revision an `ETag` header names (a number, or null). Throws ApiError for any
 * status that is not 2xx.
 *
 * Options: `query` (object), `body` (a string is sent as it is — JSON text kept exactly as
 * typed — anything else as JSON), `ifMatch` (a revision), `reason` (the `Prefs-Reason`, sent
 * percent-encoded), `signal`. Every method but GET sends a new `Idempotency-Key`.
 */
export async function request(method, path, options = {}) {
  const headers = { Accept: "application/json" };
  if (method !== "GET") headers["Idempotency-Key"] = idempotencyKey();
  if (options.ifMatch !== undefined && options.ifMatch !== null) headers["If-Match"] = String(options.ifMatch);
  if (options.reason) headers["Prefs-Reason"] = encodeURIComponent(options.reason);
  let body;
  if (options.body !== undefined) {
    headers["Content-Type"] = "application/json";
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
  }
  const response = await authorizedFetch(withQuery(path, options.query), { method, headers, body, signal: options.signal });
  const data = await readJSON(response);
  if (!response.ok) throw new ApiError(response.status, data);
  const tag = response.headers.get("ETag");
  return { status: response.status, data, etag: tag ? Number(tag.replace(/"/g, "")) : null };
}

/** GET `path` with `query`; answers the parsed JSON. */
export async function getJSON(path, query) {
  return (await request("GET", path, { query })).data;
}

/** GET `path` as a Blob (attachments, dumps), with the bearer secret; throws ApiError. */
export async function getBlob(path, query) {
  const response = await authorizedFetch(withQuery(path, query));
  if (!response.ok) throw new ApiError(response.status, await readJSON(response));
  return response.blob();
}
