-- Browser sessions (issue 36): the sign-in cookie holds a random session id,
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
