-- Workers (issue 20): the taikai worker process that played a game, and
-- which delivery of the game from the work queue it was (a game whose worker
-- was lost is played again from the start); NULL for games the server played.
ALTER TABLE games ADD COLUMN worker TEXT;
ALTER TABLE games ADD COLUMN attempt INTEGER;
