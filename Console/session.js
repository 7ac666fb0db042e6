// The console's session: `POST /ui/session` trades a sign-in code (from `prefsctl ui`'s link)
// or a pasted token for a session secret. Only that secret is kept, in sessionStorage — it
// ends with the tab; nothing goes to localStorage or cookies, and the secret is never put in
// a URL or logged. Who the session is (name, role, scope) is kept in memory and asked again
// (`GET /ui/session`) when the tab reloads.

import { ApiError, configureApi, request } from "/ui/api.js";

const STORAGE_KEY = "prefsd.console.secret";
const RANKS = { reader: 0, writer: 1, admin: 2 };

let current = null;
let endedListener = () => {};

configureApi(() => sessionStorage.getItem(STORAGE_KEY), () => end("Your session ended: sign in again."));

/** Forgets the session; tells the listener (with `why`) if one was open. */
function end(why) {
  sessionStorage.removeItem(STORAGE_KEY);
  const hadSession = current !== null;
  current = null;
  if (hadSession) endedListener(why);
}

/** Sets what happens when the session ends other than by signOut (a 401: expired, revoked). */
export function onSessionEnded(listener) {
  endedListener = listener;
}

/**
 * Signs in with `{ code }` (a sign-in link's code) or `{ token }` (a pasted token); answers
 * the session `{ name, role, scope, expiresAt }`. Throws ApiError (401 for a wrong token or a
 * used or expired code).
 */
export async function signIn(credentials) {
  let response;
  try {
    response = await fetch("/ui/session", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      body: JSON.stringify(credentials),
      cache: "no-store",
      credentials: "omit",
    });
  } catch {
    throw new ApiError(0, null);
  }
  const data = await response.json().catch(() => null);
  if (response.status !== 201 || !data || typeof data.secret !== "string") throw new ApiError(response.status, data);
  const { secret, ...info } = data;
  sessionStorage.setItem(STORAGE_KEY, secret);
  current = info;
  return info;
}

/** The session kept in this tab, asked of the server again; null when there is none (or it ended). */
export async function resume() {
  if (!sessionStorage.getItem(STORAGE_KEY)) return null;
  try {
    current = (await request("GET", "/ui/session")).data;
    return current;
  } catch (error) {
    if (error.status === 401) return null;
    throw error;
  }
}

/** Signs out: the server forgets the secret (`DELETE /ui/session`), and so does the tab. */
export async function signOut() {
  current = null; // a 401 answer needs no telling: the caller shows the sign-in itself
  try {
    await request("DELETE", "/ui/session");
  } finally {
    sessionStorage.removeItem(STORAGE_KEY);
  }
}

/** The signed-in session `{ name, role, scope, expiresAt }`, or null. */
export function session() {
  return current;
}

/** Whether the session's role is at least `role` (`reader`, `writer` or `admin`). */
export function can(role) {
  return current !== null && RANKS[current.role] >= RANKS[role];
}
