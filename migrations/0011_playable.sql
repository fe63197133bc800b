-- Issue 39: an engine's owner lets other participants play it in the
-- browser (POST /api/play). 0: only its owner and the admin may.
ALTER TABLE engines ADD COLUMN playable_by_others INTEGER NOT NULL DEFAULT 0;
