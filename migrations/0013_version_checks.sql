-- Issue 40: each version of an engine keeps its own pre-flight check, so
-- that the engine's page shows each version's result beside it (a league
-- plays versions, and an author compares them). engine_checks, which kept
-- only the last check of each engine, becomes a view of the same: each
-- engine's check started last.
CREATE TABLE version_checks (
    engine_id   INTEGER NOT NULL REFERENCES engines(id),
    version     INTEGER NOT NULL,
    status      TEXT    NOT NULL,  -- queued, running, done
    result      TEXT,              -- JSON of the check's answer when done
    started_at  INTEGER NOT NULL,
    finished_at INTEGER,
    PRIMARY KEY (engine_id, version)
) WITHOUT ROWID;
INSERT INTO version_checks (engine_id, version, status, result, started_at, finished_at)
    SELECT engine_id, version, status, result, started_at, finished_at FROM engine_checks;
DROP TABLE engine_checks;
CREATE VIEW engine_checks AS
    SELECT engine_id, version, status, result, started_at, finished_at FROM (
        SELECT *, row_number() OVER (PARTITION BY engine_id ORDER BY started_at DESC, version DESC) AS n
        FROM version_checks)
    WHERE n = 1;
