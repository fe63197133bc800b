-- Leagues (issue 40): a tournament that never closes, whose entrants play
-- their current version; each version is rated as a player of its own.

-- The version each side played: the engine's newest at the game's start.
-- Games stored before are given the version newest at their start.
ALTER TABLE games ADD COLUMN black_version INTEGER;
ALTER TABLE games ADD COLUMN white_version INTEGER;
UPDATE games SET
    black_version = (SELECT max(v.version) FROM engine_versions v WHERE v.engine_id = games.black_id AND v.created_at <= games.started_at),
    white_version = (SELECT max(v.version) FROM engine_versions v WHERE v.engine_id = games.white_id AND v.created_at <= games.started_at);

-- placement_games: the games a new version of a league plays first, spread
-- over the field. entrants_checked: 1 when the league's entrants are every
-- listed engine of its game whose check of its current version passed (new
-- uploads join by themselves); 0 when they are the engines listed.
ALTER TABLE tournaments ADD COLUMN placement_games INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tournaments ADD COLUMN entrants_checked INTEGER NOT NULL DEFAULT 0;

-- A league's results between versions, updated in the transaction that
-- stores each game (as standings and pairs are), a < b by engine id: what
-- the ladder and the scheduler read, whatever the number of games.
CREATE TABLE league_pairs (
    tournament_id INTEGER NOT NULL,
    a             INTEGER NOT NULL,
    a_version     INTEGER NOT NULL,
    b             INTEGER NOT NULL,
    b_version     INTEGER NOT NULL,
    a_wins        INTEGER NOT NULL DEFAULT 0,
    draws         INTEGER NOT NULL DEFAULT 0,
    b_wins        INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tournament_id, a, a_version, b, b_version)
) WITHOUT ROWID;
