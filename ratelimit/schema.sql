-- The credential store and the shared budget counters of one lake (DATA/access.db).
-- Secrets are never stored: only SHA-256 hashes of API keys and access tokens.
CREATE TABLE IF NOT EXISTS users (
    name       TEXT PRIMARY KEY,
    created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS api_keys (
    id         TEXT PRIMARY KEY,
    user       TEXT NOT NULL REFERENCES users(name),
    label      TEXT NOT NULL DEFAULT '',
    hash       BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);
CREATE TABLE IF NOT EXISTS oauth_tokens (
    id         TEXT PRIMARY KEY,
    user       TEXT NOT NULL REFERENCES users(name),
    hash       BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    revoked_at INTEGER
);
-- One row per budget counter and second: the requests every process admitted or
-- refused in that second. Rows older than the window are pruned.
CREATE TABLE IF NOT EXISTS budget_counts (
    budget_key TEXT NOT NULL,
    sec        INTEGER NOT NULL,
    n          INTEGER NOT NULL,
    PRIMARY KEY (budget_key, sec)
) WITHOUT ROWID;
-- One row per serving process (random id) with the last second it synced: more than
-- one recent row switches the limiters to reserving before admitting.
CREATE TABLE IF NOT EXISTS budget_processes (
    id   TEXT PRIMARY KEY,
    seen INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS credits (
    credential_id TEXT NOT NULL,
    user          TEXT NOT NULL,
    day           TEXT NOT NULL,
    route         TEXT NOT NULL,
    credits       INTEGER NOT NULL,
    calls         INTEGER NOT NULL,
    PRIMARY KEY (credential_id, day, route)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS archive_downloads (
    id            INTEGER PRIMARY KEY,
    ts            INTEGER NOT NULL,
    credential_id TEXT NOT NULL,
    kind          TEXT NOT NULL,
    user          TEXT NOT NULL,
    path          TEXT NOT NULL,
    bytes         INTEGER NOT NULL,
    range         TEXT NOT NULL,
    status        INTEGER NOT NULL
);
