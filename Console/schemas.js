// The registered schemas (`GET /v1/schema`), read once and read again after a schema change.

import { getJSON } from "/ui/api.js";

let pending = null;

/** Every schema by key; the answer is kept until forgetSchemas(). */
export function schemas() {
  if (!pending) {
    pending = getJSON("/v1/schema").then((answer) => answer.schemas, (error) => {
      pending = null;
      throw error;
    });
  }
  return pending;
}

/** Forgets the schemas read (a `schema` change came, or the session changed). */
export function forgetSchemas() {
  pending = null;
}
