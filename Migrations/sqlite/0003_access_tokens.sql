-- Named tokens (prefsd 0.2): who may reach the TCP listener, each with a role (reader, writer,
-- admin) bounded by a scope. Created and revoked through the change log (`token.created`,
-- `token.revoked`), which carries them to every host; only a hash of each secret is stored.
CREATE TABLE access_token (
    name          TEXT NOT NULL PRIMARY KEY,
    role          TEXT NOT NULL CHECK (role IN ('reader', 'writer', 'admin')),
    scope         TEXT NOT NULL,
    secret_sha256 TEXT NOT NULL UNIQUE,     -- lowercase hex; the secret itself is stored nowhere
    created_at    REAL NOT NULL,            -- seconds since 1970
    created_by    TEXT NOT NULL,            -- the author who created it
    last_used_at  REAL                      -- written every minute or so, not at every request
) WITHOUT ROWID;
