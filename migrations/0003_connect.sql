-- How long an engine may take to connect (issue 16, item 5), and how long
-- each engine of a game took.
ALTER TABLE engines ADD COLUMN connect_timeout_ms INTEGER NOT NULL DEFAULT 0; -- 0: the tournament's, else the protocol's
ALTER TABLE games ADD COLUMN black_connect_ms INTEGER; -- from the engine's start to its connection; NULL if it did not connect
ALTER TABLE games ADD COLUMN white_connect_ms INTEGER;
