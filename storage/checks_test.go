package storage_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/migrations"
	"github.com/taikai-dev/taikai/storage"
)

// Each version of an engine keeps its own check (issue 40): a new version's
// check does not replace the old version's; Check and Checks still answer
// the engine's last check (the one started last), as before.
func TestVersionChecks(t *testing.T) {
	ctx := context.Background()
	db := open(t)
	e := engines.Engine{Name: "student", Game: "othello", Protocol: "othello-board", Command: []string{"./bot", "{host}", "{port}"}}
	if err := db.CreateEngine(ctx, &e); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now().Add(-time.Hour).Truncate(time.Millisecond).UTC()
	done := func(at time.Time) *time.Time { f := at.Add(time.Second); return &f }
	save := func(c storage.EngineCheck) {
		t.Helper()
		if err := db.SaveCheck(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	save(storage.EngineCheck{EngineID: e.ID, Version: 1, Status: "done", Result: json.RawMessage(`{"ok":false,"version":1}`), StartedAt: t0, FinishedAt: done(t0)})
	save(storage.EngineCheck{EngineID: e.ID, Version: 2, Status: "queued", StartedAt: t0.Add(time.Minute)})

	last, err := db.Check(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if last.Version != 2 || last.Status != "queued" || last.Result != nil {
		t.Errorf("last check %+v, want version 2 queued", last)
	}
	all, err := db.Checks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if c := all[e.ID]; c.Version != 2 || c.Status != "queued" {
		t.Errorf("Checks()[%d] = %+v, want version 2 queued", e.ID, c)
	}
	vc, err := db.VersionChecks(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(vc) != 2 || vc[1].Status != "done" || string(vc[1].Result) != `{"ok":false,"version":1}` || vc[2].Status != "queued" {
		t.Errorf("version checks %+v, want version 1 done (failed) and version 2 queued", vc)
	}

	// Version 2's check ends; version 1 keeps its own.
	save(storage.EngineCheck{EngineID: e.ID, Version: 2, Status: "done", Result: json.RawMessage(`{"ok":true,"version":2}`), StartedAt: t0.Add(time.Minute), FinishedAt: done(t0.Add(time.Minute))})
	vc, err = db.VersionChecks(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if string(vc[1].Result) != `{"ok":false,"version":1}` || string(vc[2].Result) != `{"ok":true,"version":2}` {
		t.Errorf("after version 2's check: %s and %s", vc[1].Result, vc[2].Result)
	}
	if !vc[2].StartedAt.Equal(t0.Add(time.Minute)) || vc[2].FinishedAt == nil || !vc[2].FinishedAt.Equal(t0.Add(time.Minute+time.Second)) {
		t.Errorf("version 2's check times %v, %v", vc[2].StartedAt, vc[2].FinishedAt)
	}

	// A check started later is the last, whichever version it is of.
	save(storage.EngineCheck{EngineID: e.ID, Version: 3, Status: "running", StartedAt: t0.Add(2 * time.Minute)})
	if last, err = db.Check(ctx, e.ID); err != nil || last.Version != 3 {
		t.Errorf("last check %+v (%v), want version 3's", last, err)
	}
	// A server that stopped left version 3's check running: marked done,
	// without a result; the others are untouched.
	if err := db.AbandonChecks(ctx); err != nil {
		t.Fatal(err)
	}
	vc, err = db.VersionChecks(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if vc[3].Status != "done" || vc[3].Result != nil || vc[3].FinishedAt == nil {
		t.Errorf("abandoned check %+v, want done without a result", vc[3])
	}
	if string(vc[2].Result) != `{"ok":true,"version":2}` {
		t.Errorf("version 2's check after AbandonChecks: %s", vc[2].Result)
	}
	if _, err := db.Check(ctx, e.ID+1); err == nil {
		t.Error("the check of an engine never checked: no error")
	}
}

// Migration 0013 keeps the checks stored before it: each engine's last check
// becomes its version's.
func TestVersionChecksMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	raw, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	if _, err := raw.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		v, err := strconv.Atoi(strings.SplitN(name, "_", 2)[0])
		if err != nil {
			t.Fatal(err)
		}
		if v >= 13 {
			continue
		}
		body, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.Exec(string(body)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := raw.Exec(`INSERT INTO schema_migrations VALUES (?, ?, 0)`, v, name); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		`INSERT INTO engines (id, name, game, protocol, created_at) VALUES (7, 'old', 'othello', 'othello-board', 1000)`,
		`INSERT INTO engine_versions (engine_id, version, definition, created_at) VALUES (7, 1, '{}', 1000), (7, 2, '{}', 2000)`,
		`INSERT INTO engine_checks (engine_id, version, status, result, started_at, finished_at) VALUES (7, 2, 'done', '{"ok":true,"version":2}', 3000, 4000)`,
	} {
		if _, err := raw.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := raw.Close(); err != nil {
		t.Fatal(err)
	}

	db, err := storage.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.Check(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if c.Version != 2 || c.Status != "done" || string(c.Result) != `{"ok":true,"version":2}` || c.StartedAt.UnixMilli() != 3000 || c.FinishedAt == nil || c.FinishedAt.UnixMilli() != 4000 {
		t.Errorf("the check after the migration: %+v", c)
	}
	vc, err := db.VersionChecks(ctx, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(vc) != 1 || vc[2].Status != "done" {
		t.Errorf("version checks after the migration: %+v, want version 2's only", vc)
	}
	// The view of last checks still answers as the table did.
	all, err := db.Checks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[7].Version != 2 {
		t.Errorf("Checks() after the migration: %+v", all)
	}
}
