-- Participants (issue 21): the students of a class, each with their own token,
-- owning the engines they submit. Tokens and invitation codes are stored only
-- as hex SHA-256 hashes (they are random: not passwords).
CREATE TABLE participants (
    id                INTEGER PRIMARY KEY,
    name              TEXT    NOT NULL,
    token_hash        TEXT,              -- NULL until an invitation is accepted
    invite_hash       TEXT,              -- the pending single-use invitation code; NULL when none
    invite_expires_at INTEGER,           -- unix ms
    created_at        INTEGER NOT NULL,
    accepted_at       INTEGER            -- when the last invitation was accepted
);
CREATE UNIQUE INDEX participants_name ON participants(name COLLATE NOCASE);
CREATE UNIQUE INDEX participants_invite ON participants(invite_hash) WHERE invite_hash IS NOT NULL;

-- An engine's owner: the participant who submitted it; NULL for the admin's.
ALTER TABLE engines ADD COLUMN owner_id INTEGER REFERENCES participants(id);

-- Every version of an engine: the first registration is version 1, each
-- replacement (PUT /api/engines/{id}) adds one. The engines row holds the
-- newest; games keep the engine id, and the version they played is the one
-- newest at their start.
CREATE TABLE engine_versions (
    engine_id   INTEGER NOT NULL REFERENCES engines(id),
    version     INTEGER NOT NULL,
    definition  TEXT    NOT NULL,             -- JSON engines.Engine (command, dir, protocol, limits)
    files_hash  TEXT    NOT NULL DEFAULT '',  -- hex SHA-256 of the uploaded files, '' when none
    uploaded_by INTEGER REFERENCES participants(id), -- NULL: the admin
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (engine_id, version)
) WITHOUT ROWID;
INSERT INTO engine_versions (engine_id, version, definition, created_at)
    SELECT id, 1, json_object('id', id, 'name', name, 'game', game, 'protocol', protocol, 'command', json(command), 'dir', dir, 'port', port, 'builtin', builtin), created_at
    FROM engines WHERE listed = 1;

-- The last pre-flight check of each engine (one short game against a
-- built-in), run by itself on every submission.
CREATE TABLE engine_checks (
    engine_id   INTEGER PRIMARY KEY REFERENCES engines(id),
    version     INTEGER NOT NULL,
    status      TEXT    NOT NULL,  -- queued, running, done
    result      TEXT,              -- JSON of the check's answer when done
    started_at  INTEGER NOT NULL,
    finished_at INTEGER
) WITHOUT ROWID;
