// The status line at the foot of the page: two live regions, read out by screen readers —
// `#status` (polite) for what was done, `#alert` (assertive) for what went wrong, in prefsd's
// own words.

/** Says what was done ("Saved …"), politely. */
export function announce(text) {
  document.getElementById("alert").textContent = "";
  document.getElementById("status").textContent = text;
}

/** Says what went wrong: an ApiError's message (prefsd's words), or `error` itself as text. */
export function reportError(error) {
  document.getElementById("status").textContent = "";
  document.getElementById("alert").textContent = error instanceof Error ? error.message : String(error);
}

/** Empties both regions (a new page). */
export function clearMessages() {
  document.getElementById("status").textContent = "";
  document.getElementById("alert").textContent = "";
}

/**
 * `fn` made safe to hand to an event: what it throws is reported (but a 401, which has
 * already ended the session and shown the sign-in).
 */
export function guarded(fn) {
  return async (...args) => {
    try {
      await fn(...args);
    } catch (error) {
      if (error.status !== 401) reportError(error);
    }
  };
}
