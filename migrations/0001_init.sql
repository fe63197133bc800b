-- Engines: programs that play. An engine that has played is never deleted, only
-- hidden (deleted_at), so that its games and standings stay whole.
CREATE TABLE engines (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    game       TEXT    NOT NULL,
    protocol   TEXT    NOT NULL,
    command    TEXT    NOT NULL DEFAULT '[]', -- JSON argv with placeholders
    dir        TEXT    NOT NULL DEFAULT '',   -- working directory
    port       INTEGER NOT NULL DEFAULT 0,    -- fixed port, 0 for one port per seat
    builtin    TEXT    NOT NULL DEFAULT '',
    listed     INTEGER NOT NULL DEFAULT 1,    -- 0: recorded by `taikai match`, not registered
    created_at INTEGER NOT NULL,              -- unix ms
    deleted_at INTEGER
);
CREATE UNIQUE INDEX engines_name ON engines(name) WHERE deleted_at IS NULL AND listed = 1;

-- Tournaments hold the settings their games are played under. The schedule is
-- not stored: game k of a round robin is computed from the entrants.
CREATE TABLE tournaments (
    id             INTEGER PRIMARY KEY,
    name           TEXT    NOT NULL,
    kind           TEXT    NOT NULL,           -- round_robin or match
    settings       TEXT    NOT NULL,           -- JSON tournament.Settings
    games_per_pair INTEGER NOT NULL,
    concurrency    INTEGER NOT NULL,
    status         TEXT    NOT NULL,           -- pending, running, finished, cancelled
    total_games    INTEGER NOT NULL,
    finished_games INTEGER NOT NULL DEFAULT 0,
    next_index     INTEGER NOT NULL DEFAULT 0, -- first schedule index never started
    seed           INTEGER NOT NULL,
    created_at     INTEGER NOT NULL,
    started_at     INTEGER,
    finished_at    INTEGER
);

CREATE TABLE entrants (
    tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
    seat          INTEGER NOT NULL, -- position in the schedule, 0-based
    engine_id     INTEGER NOT NULL REFERENCES engines(id),
    PRIMARY KEY (tournament_id, seat)
) WITHOUT ROWID;

-- Games that were started. A game that was running when the server stopped is
-- marked aborted and its schedule index is played again by a new row.
CREATE TABLE games (
    id            INTEGER PRIMARY KEY,
    tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
    idx           INTEGER NOT NULL,         -- schedule index
    black_id      INTEGER NOT NULL REFERENCES engines(id),
    white_id      INTEGER NOT NULL REFERENCES engines(id),
    status        TEXT    NOT NULL,         -- running, finished, aborted
    result        TEXT,                     -- black, white, draw
    reason        TEXT,
    cause         TEXT,
    plies         INTEGER NOT NULL DEFAULT 0,
    moves         BLOB,                     -- storage/moves.go encoding
    auto          BLOB,                     -- plies made by the server, NULL if none
    violations    TEXT,                     -- JSON, NULL if none
    black_stones  INTEGER,
    white_stones  INTEGER,
    black_nick    TEXT,
    white_nick    TEXT,
    seed          INTEGER NOT NULL,
    logs          TEXT,                     -- directory of the engines' output, relative to the data dir
    detail        TEXT,                     -- why a game did not start
    started_at    INTEGER NOT NULL,
    ended_at      INTEGER
);
CREATE INDEX games_by_tournament ON games(tournament_id, idx);
CREATE INDEX games_running ON games(status) WHERE status = 'running';

-- Standings and pairwise results, updated in the transaction that stores a game.
CREATE TABLE standings (
    tournament_id INTEGER NOT NULL,
    engine_id     INTEGER NOT NULL,
    games         INTEGER NOT NULL DEFAULT 0,
    wins          INTEGER NOT NULL DEFAULT 0,
    draws         INTEGER NOT NULL DEFAULT 0,
    losses        INTEGER NOT NULL DEFAULT 0,
    disc_diff     INTEGER NOT NULL DEFAULT 0, -- sum of own minus opponent stones
    PRIMARY KEY (tournament_id, engine_id)
) WITHOUT ROWID;

CREATE TABLE pairs (
    tournament_id INTEGER NOT NULL,
    a             INTEGER NOT NULL, -- engine id, a < b
    b             INTEGER NOT NULL,
    a_wins        INTEGER NOT NULL DEFAULT 0,
    draws         INTEGER NOT NULL DEFAULT 0,
    b_wins        INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tournament_id, a, b)
) WITHOUT ROWID;

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

-- Aborted games whose index must be played again: few, so a partial index.
CREATE INDEX games_aborted ON games(tournament_id, idx) WHERE status = 'aborted';
