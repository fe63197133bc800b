-- Openings and game pairs (issue 17). A game played from an opening of a
-- suite keeps the suite's name, the opening's index and its moves (the first
-- opening_plies of the game's moves are the opening's); the two games of a
-- pair (one opening, colours swapped) share a pair number.
ALTER TABLE games ADD COLUMN opening_suite TEXT;
ALTER TABLE games ADD COLUMN opening_index INTEGER;
ALTER TABLE games ADD COLUMN opening_plies INTEGER;
ALTER TABLE games ADD COLUMN opening_text TEXT;
ALTER TABLE games ADD COLUMN pair INTEGER;
CREATE INDEX games_by_pair ON games(tournament_id, pair) WHERE pair IS NOT NULL;

-- Pentanomial counts of each pair of engines, from a's view: the game pairs
-- in which a scored 0, 0.5, 1, 1.5 and 2 points. Updated with the pair's
-- second game, in the transaction that stores it.
ALTER TABLE pairs ADD COLUMN p0 INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pairs ADD COLUMN p1 INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pairs ADD COLUMN p2 INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pairs ADD COLUMN p3 INTEGER NOT NULL DEFAULT 0;
ALTER TABLE pairs ADD COLUMN p4 INTEGER NOT NULL DEFAULT 0;

-- Opening suites uploaded by users: the text as uploaded, checked on upload
-- against the game, rule and board size it is for.
CREATE TABLE opening_suites (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    game       TEXT    NOT NULL,
    rule       TEXT    NOT NULL DEFAULT '',
    size       INTEGER NOT NULL,
    openings   INTEGER NOT NULL,
    text       TEXT    NOT NULL,
    created_at INTEGER NOT NULL
);

-- Tournament formats beside round robin (kind: gauntlet, swiss, knockout).
-- Swiss and knockout pair each round from the results of the last, so a game
-- keeps the slot of the format it fills ("r2m3g1": round, match, game), and
-- the tournament its number of rounds (swiss) and the extra game pairs a tied
-- knockout match may play.
ALTER TABLE games ADD COLUMN slot TEXT;
ALTER TABLE tournaments ADD COLUMN rounds INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tournaments ADD COLUMN max_extra INTEGER NOT NULL DEFAULT 0;
