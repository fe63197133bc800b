package storage

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/tournament"
)

// CreateSuite stores an uploaded opening suite, already checked, and sets
// its id and creation time.
func (db *DB) CreateSuite(ctx context.Context, s *tournament.SuiteInfo, text string) error {
	s.CreatedAt = time.Now().UTC().Truncate(time.Millisecond)
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO opening_suites (name, game, rule, size, openings, text, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			s.Name, s.Game, s.Rule, s.Size, s.Openings, text, s.CreatedAt.UnixMilli())
		if err != nil {
			return err
		}
		s.ID, err = res.LastInsertId()
		return err
	})
}

// Suite returns an uploaded opening suite and its text.
func (db *DB) Suite(ctx context.Context, id int64) (tournament.SuiteInfo, string, error) {
	var (
		s       tournament.SuiteInfo
		text    string
		created int64
	)
	err := db.read(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT id, name, game, rule, size, openings, text, created_at FROM opening_suites WHERE id = ?`, id).
			Scan(&s.ID, &s.Name, &s.Game, &s.Rule, &s.Size, &s.Openings, &text, &created)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return s, "", games.Errorf(games.ENotFound, "opening suite %d not found", id)
	}
	s.CreatedAt = time.UnixMilli(created).UTC()
	return s, text, err
}

// Suites lists the uploaded opening suites, newest first, without their text.
func (db *DB) Suites(ctx context.Context) ([]tournament.SuiteInfo, error) {
	var list []tournament.SuiteInfo
	err := db.read(ctx, func(tx *sql.Tx) error {
		r, err := tx.QueryContext(ctx, `SELECT id, name, game, rule, size, openings, created_at FROM opening_suites ORDER BY id DESC`)
		if err != nil {
			return err
		}
		defer r.Close()
		for r.Next() {
			var (
				s       tournament.SuiteInfo
				created int64
			)
			if err := r.Scan(&s.ID, &s.Name, &s.Game, &s.Rule, &s.Size, &s.Openings, &created); err != nil {
				return err
			}
			s.CreatedAt = time.UnixMilli(created).UTC()
			list = append(list, s)
		}
		return r.Err()
	})
	return list, err
}
