-- The engine sandbox (issue 15): per-engine limits, and what each game ran
-- under and what its engines used.
ALTER TABLE engines ADD COLUMN memory_mb INTEGER NOT NULL DEFAULT 0; -- sandbox memory limit in MiB, 0: default (1024)
ALTER TABLE engines ADD COLUMN max_procs INTEGER NOT NULL DEFAULT 0; -- sandbox processes+threads limit, 0: default (256)
ALTER TABLE games ADD COLUMN sandbox TEXT;      -- on or off; NULL for games stored before this migration
ALTER TABLE games ADD COLUMN engine_usage TEXT; -- JSON {"black": engines.Usage, "white": ...}, NULL if no engine started
