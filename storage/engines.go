package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
)

// EngineRow is an engine as stored, with its bookkeeping.
type EngineRow struct {
	engines.Engine
	CreatedAt time.Time  `json:"created_at"`
	DeletedAt *time.Time `json:"deleted_at,omitempty"`
	// OwnerID is the participant who submitted the engine; 0 for the admin's.
	OwnerID int64 `json:"owner_id,omitempty"`
	// PlayableByOthers: the owner lets other participants play the engine
	// in the browser (issue 39).
	PlayableByOthers bool `json:"playable_by_others"`
}

const engineColumns = `id, name, game, protocol, command, dir, port, builtin, memory_mb, max_procs, connect_timeout_ms, created_at, deleted_at, owner_id, playable_by_others`

type scanner interface{ Scan(...any) error }

func scanEngine(s scanner) (EngineRow, error) {
	var (
		e       EngineRow
		command string
		created int64
		deleted sql.NullInt64
		owner   sql.NullInt64
	)
	if err := s.Scan(&e.ID, &e.Name, &e.Game, &e.Protocol, &command, &e.Dir, &e.Port, &e.Builtin, &e.MemoryMB, &e.MaxProcs, &e.ConnectTimeoutMS, &created, &deleted, &owner, &e.PlayableByOthers); err != nil {
		return e, err
	}
	if err := json.Unmarshal([]byte(command), &e.Command); err != nil {
		return e, fmt.Errorf("engine %d: command: %w", e.ID, err)
	}
	e.CreatedAt = time.UnixMilli(created).UTC()
	e.DeletedAt = msTime(deleted)
	e.OwnerID = owner.Int64
	return e, nil
}

// CreateEngine stores a validated engine and sets its ID. A name already taken
// by a registered engine is a conflict on the field "name".
func (db *DB) CreateEngine(ctx context.Context, e *engines.Engine) error {
	return db.write(ctx, func(tx *sql.Tx) error { return createEngine(ctx, tx, e, true) })
}

// createEngine stores an engine; a listed (registered) one gets its version 1,
// the admin's.
func createEngine(ctx context.Context, tx *sql.Tx, e *engines.Engine, listed bool) error {
	command, err := json.Marshal(nonNil(e.Command))
	if err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO engines (name, game, protocol, command, dir, port, builtin, memory_mb, max_procs, connect_timeout_ms, listed, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.Name, e.Game, e.Protocol, string(command), e.Dir, e.Port, e.Builtin, e.MemoryMB, e.MaxProcs, e.ConnectTimeoutMS, listed, now())
	if isUnique(err) {
		return &games.Error{Code: games.EConflict, Field: "name", Message: fmt.Sprintf("name: an engine named %q is already registered", e.Name)}
	}
	if err != nil {
		return err
	}
	if e.ID, err = res.LastInsertId(); err != nil || !listed {
		return err
	}
	return addVersion(ctx, tx, *e, Submission{}, 1)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// MatchEngine returns the id of an engine recorded by `taikai match`: the
// registered engine of that name if it is the same program, else an unlisted
// record of this definition.
func (db *DB) MatchEngine(ctx context.Context, e *engines.Engine) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+engineColumns+` FROM engines WHERE name = ? AND deleted_at IS NULL`, e.Name)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r, err := scanEngine(rows)
			if err != nil {
				return err
			}
			if r.Game == e.Game && r.Protocol == e.Protocol && r.Builtin == e.Builtin && r.Dir == e.Dir && r.Port == e.Port && r.MemoryMB == e.MemoryMB && r.MaxProcs == e.MaxProcs && r.ConnectTimeoutMS == e.ConnectTimeoutMS && slices.Equal(r.Command, e.Command) {
				e.ID = r.ID
				return nil
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return createEngine(ctx, tx, e, false)
	})
}

// Engine returns an engine by id, deleted or not.
func (db *DB) Engine(ctx context.Context, id int64) (engines.Engine, error) {
	r, err := db.EngineRow(ctx, id)
	return r.Engine, err
}

// EngineRow returns an engine with its bookkeeping.
func (db *DB) EngineRow(ctx context.Context, id int64) (EngineRow, error) {
	r, err := scanEngine(db.r.QueryRowContext(ctx, `SELECT `+engineColumns+` FROM engines WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, games.Errorf(games.ENotFound, "engine %d: not found", id)
	}
	return r, err
}

// SetPlayable says whether participants other than the engine's owner may
// play it in the browser.
func (db *DB) SetPlayable(ctx context.Context, id int64, on bool) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE engines SET playable_by_others = ? WHERE id = ? AND deleted_at IS NULL`, on, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return games.Errorf(games.ENotFound, "engine %d: not found", id)
		}
		return nil
	})
}

// EngineNames maps engine ids, deleted engines' too, to their names with one
// query. An id that was never registered is a not_found error.
func (db *DB) EngineNames(ctx context.Context, ids []int64) (map[int64]string, error) {
	names := make(map[int64]string, len(ids))
	if len(ids) == 0 {
		return names, nil
	}
	idsJSON, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT id, name FROM engines WHERE id IN (SELECT value FROM json_each(?))`, string(idsJSON))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, err
		}
		names[id] = name
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, id := range ids {
		if _, ok := names[id]; !ok {
			return nil, games.Errorf(games.ENotFound, "engine %d: not found", id)
		}
	}
	return names, nil
}

// Engines lists the registered engines that are not deleted, in id order.
func (db *DB) Engines(ctx context.Context) ([]EngineRow, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+engineColumns+` FROM engines WHERE deleted_at IS NULL AND listed = 1 ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []EngineRow{}
	for rows.Next() {
		r, err := scanEngine(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, r)
	}
	return list, rows.Err()
}

// DeleteEngine hides an engine. Its games and standings stay; it can no longer
// enter tournaments, and its name is free again. Deleting an engine entered in a
// pending or running tournament is a conflict.
func (db *DB) DeleteEngine(ctx context.Context, id int64) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM engines WHERE id = ? AND deleted_at IS NULL AND listed = 1`, id).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return games.Errorf(games.ENotFound, "engine %d: not found", id)
		}
		var busy sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT t.id FROM entrants x JOIN tournaments t ON t.id = x.tournament_id WHERE x.engine_id = ? AND t.status IN ('pending', 'running') AND t.kind <> 'league' LIMIT 1`, id).Scan(&busy)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if busy.Valid {
			return games.Errorf(games.EConflict, "engine %d is entered in tournament %d, which is not over (cancel it first)", id, busy.Int64)
		}
		_, err = tx.ExecContext(ctx, `UPDATE engines SET deleted_at = ? WHERE id = ?`, now(), id)
		return err
	})
}
