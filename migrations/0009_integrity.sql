-- Issue 36. Browser sessions: the sign-in cookie holds a random session id,
-- not the token; the server keeps its hash, who it signs in, the hash of the
-- token it was opened with (a replaced token, or a new admin token, ends it),
-- and its expiry. Signing out deletes the row.
CREATE TABLE sessions (
    id_hash         TEXT    PRIMARY KEY,  -- hex SHA-256 of the cookie's session id
    participant_id  INTEGER REFERENCES participants(id) ON DELETE CASCADE, -- NULL: the admin
    credential_hash TEXT    NOT NULL,     -- hex SHA-256 of the token signed in with
    created_at      INTEGER NOT NULL,     -- unix ms
    expires_at      INTEGER NOT NULL      -- unix ms
) WITHOUT ROWID;
CREATE INDEX sessions_expires ON sessions(expires_at);

-- What each version's upload stored (issue 36): its file list (the first
-- 200, JSON), files, entries (files and directories) and bytes. The engine's
-- page lists the files from here, not from a walk of its directory, and the
-- upload quotas add these up (old versions' files are kept and counted).
ALTER TABLE engine_versions ADD COLUMN files_list    TEXT    NOT NULL DEFAULT '[]';
ALTER TABLE engine_versions ADD COLUMN files_count   INTEGER NOT NULL DEFAULT 0;
ALTER TABLE engine_versions ADD COLUMN files_entries INTEGER NOT NULL DEFAULT 0;
ALTER TABLE engine_versions ADD COLUMN files_bytes   INTEGER NOT NULL DEFAULT 0;
