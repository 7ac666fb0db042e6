-- Named tokens (prefsd 0.2): who may reach the TCP listener, each with a role (reader, writer,
-- admin) bounded by a scope. Created and revoked through the change log (`token.created`,
-- `token.revoked`), which carries them to every host; only a hash of each secret is stored.
CREATE TABLE access_token (
    name          text             NOT NULL PRIMARY KEY,
    role          text             NOT NULL CHECK (role IN ('reader', 'writer', 'admin')),
    scope         text             NOT NULL,
    secret_sha256 text             NOT NULL UNIQUE,  -- lowercase hex; the secret itself is stored nowhere
    created_at    double precision NOT NULL,         -- seconds since 1970
    created_by    text             NOT NULL,         -- the author who created it
    last_used_at  double precision                   -- written every minute or so, not at every request
);
