package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/tournament"
)

const tournamentColumns = `id, name, kind, settings, games_per_pair, concurrency, status, total_games, finished_games, next_index, seed, created_at, started_at, finished_at, rounds, max_extra, placement_games, entrants_checked`

func scanTournament(s scanner) (*tournament.Tournament, error) {
	var (
		t                 tournament.Tournament
		settings          string
		seed              int64
		created           int64
		started, finished sql.NullInt64
	)
	if err := s.Scan(&t.ID, &t.Name, &t.Kind, &settings, &t.GamesPerPair, &t.Concurrency, &t.Status, &t.TotalGames, &t.FinishedGames, &t.NextIndex, &seed, &created, &started, &finished, &t.Rounds, &t.MaxExtra, &t.PlacementGames, &t.EntrantsChecked); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(settings), &t.Settings); err != nil {
		return nil, fmt.Errorf("tournament %d: settings: %w", t.ID, err)
	}
	t.Seed = uint64(seed)
	t.CreatedAt = time.UnixMilli(created).UTC()
	t.StartedAt, t.FinishedAt = msTime(started), msTime(finished)
	return &t, nil
}

// CreateTournament stores a validated tournament with its entrants and sets its
// ID. Every entrant must be a registered engine of the tournament's game.
func (db *DB) CreateTournament(ctx context.Context, t *tournament.Tournament) error {
	return db.write(ctx, func(tx *sql.Tx) error { return createTournament(ctx, tx, t, true) })
}

func createTournament(ctx context.Context, tx *sql.Tx, t *tournament.Tournament, registered bool) error {
	settings, err := json.Marshal(t.Settings)
	if err != nil {
		return err
	}
	if t.Status == "" {
		t.Status = tournament.StatusPending
	}
	t.CreatedAt = time.Now().UTC().Truncate(time.Millisecond)
	res, err := tx.ExecContext(ctx, `INSERT INTO tournaments (name, kind, settings, games_per_pair, concurrency, status, total_games, seed, created_at, rounds, max_extra, placement_games, entrants_checked) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.Name, t.Kind, string(settings), t.GamesPerPair, t.Concurrency, t.Status, t.TotalGames, int64(t.Seed), t.CreatedAt.UnixMilli(), t.Rounds, t.MaxExtra, t.PlacementGames, t.EntrantsChecked)
	if err != nil {
		return err
	}
	if t.ID, err = res.LastInsertId(); err != nil {
		return err
	}
	check, err := tx.PrepareContext(ctx, `SELECT game, protocol, deleted_at IS NOT NULL, listed FROM engines WHERE id = ?`)
	if err != nil {
		return err
	}
	defer check.Close()
	entrant, err := tx.PrepareContext(ctx, `INSERT INTO entrants (tournament_id, seat, engine_id) VALUES (?, ?, ?)`)
	if err != nil {
		return err
	}
	defer entrant.Close()
	standing, err := tx.PrepareContext(ctx, `INSERT INTO standings (tournament_id, engine_id) VALUES (?, ?)`)
	if err != nil {
		return err
	}
	defer standing.Close()
	for seat, id := range t.Engines {
		var (
			game, proto string
			deleted     bool
			listed      bool
		)
		err := check.QueryRowContext(ctx, id).Scan(&game, &proto, &deleted, &listed)
		switch {
		case errors.Is(err, sql.ErrNoRows), err == nil && deleted, err == nil && registered && !listed:
			return games.Invalid("engines", "no engine with id %d", id).With("no_engine", map[string]any{"id": id})
		case err != nil:
			return err
		case game != t.Settings.Game:
			return games.Invalid("engines", "engine %d plays %s, not %s", id, game, t.Settings.Game)
		}
		if p, ok := engines.LookupProtocol(proto); ok {
			if err := p.CheckRule(t.Settings.Rule); err != nil {
				return games.Invalid("rule", "engine %d: %v", id, err)
			}
		}
		if _, err := entrant.ExecContext(ctx, t.ID, seat, id); err != nil {
			return err
		}
		if _, err := standing.ExecContext(ctx, t.ID, id); err != nil {
			return err
		}
	}
	if t.EntrantsChecked {
		if _, err := joinChecked(ctx, tx, t); err != nil {
			return err
		}
	}
	return nil
}

// Tournament returns a tournament with its entrants.
func (db *DB) Tournament(ctx context.Context, id int64) (*tournament.Tournament, error) {
	var t *tournament.Tournament
	err := db.read(ctx, func(tx *sql.Tx) error {
		var err error
		t, err = scanTournament(tx.QueryRowContext(ctx, `SELECT `+tournamentColumns+` FROM tournaments WHERE id = ?`, id))
		if errors.Is(err, sql.ErrNoRows) {
			return games.Errorf(games.ENotFound, "tournament %d: not found", id)
		}
		if err != nil {
			return err
		}
		t.Engines, err = entrants(ctx, tx, id)
		return err
	})
	return t, err
}

func entrants(ctx context.Context, tx *sql.Tx, id int64) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT engine_id FROM entrants WHERE tournament_id = ? ORDER BY seat`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var e int64
		if err := rows.Scan(&e); err != nil {
			return nil, err
		}
		ids = append(ids, e)
	}
	return ids, rows.Err()
}

// Tournaments lists the tournaments of every format (not the records of
// `taikai match`, nor the games with people), newest first, with entrants.
func (db *DB) Tournaments(ctx context.Context) ([]*tournament.Tournament, error) {
	return db.listWithEntrants(ctx, `WHERE kind NOT IN ('match', 'play') ORDER BY id DESC`)
}

// TournamentsWithStatus lists the tournaments in a status, with entrants.
func (db *DB) TournamentsWithStatus(ctx context.Context, status string) ([]*tournament.Tournament, error) {
	return db.listWithEntrants(ctx, `WHERE status = ? ORDER BY id`, status)
}

// listWithEntrants reads the tournaments and all their entrants in one read
// transaction and two queries, however many tournaments there are.
func (db *DB) listWithEntrants(ctx context.Context, where string, args ...any) ([]*tournament.Tournament, error) {
	var list []*tournament.Tournament
	err := db.read(ctx, func(tx *sql.Tx) error {
		var err error
		if list, err = listTournaments(ctx, tx, where, args...); err != nil {
			return err
		}
		return entrantsOf(ctx, tx, list)
	})
	return list, err
}

func listTournaments(ctx context.Context, tx *sql.Tx, where string, args ...any) ([]*tournament.Tournament, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+tournamentColumns+` FROM tournaments `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []*tournament.Tournament{}
	for rows.Next() {
		t, err := scanTournament(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, t)
	}
	return list, rows.Err()
}

// entrantsOf fills in the entrants of every tournament in list with one query.
func entrantsOf(ctx context.Context, tx *sql.Tx, list []*tournament.Tournament) error {
	if len(list) == 0 {
		return nil
	}
	byID := make(map[int64]*tournament.Tournament, len(list))
	ids := make([]int64, len(list))
	for i, t := range list {
		byID[t.ID], ids[i] = t, t.ID
	}
	idsJSON, err := json.Marshal(ids)
	if err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `SELECT tournament_id, engine_id FROM entrants
		WHERE tournament_id IN (SELECT value FROM json_each(?)) ORDER BY tournament_id, seat`, string(idsJSON))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var tid, eid int64
		if err := rows.Scan(&tid, &eid); err != nil {
			return err
		}
		t := byID[tid]
		t.Engines = append(t.Engines, eid)
	}
	return rows.Err()
}

// SetTournamentStatus moves a tournament to a status. Only pending and running
// tournaments change: starting a finished or cancelled one is a conflict.
func (db *DB) SetTournamentStatus(ctx context.Context, id int64, status string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		var cur string
		err := tx.QueryRowContext(ctx, `SELECT status FROM tournaments WHERE id = ?`, id).Scan(&cur)
		if errors.Is(err, sql.ErrNoRows) {
			return games.Errorf(games.ENotFound, "tournament %d: not found", id)
		}
		if err != nil {
			return err
		}
		if cur == status {
			return nil
		}
		if cur == tournament.StatusFinished || cur == tournament.StatusCancelled {
			return games.Errorf(games.EConflict, "tournament %d is %s", id, cur)
		}
		if status == tournament.StatusPaused && cur != tournament.StatusRunning {
			return games.Errorf(games.EConflict, "tournament %d is %s: only a running league pauses", id, cur)
		}
		switch status {
		case tournament.StatusRunning:
			_, err = tx.ExecContext(ctx, `UPDATE tournaments SET status = ?, started_at = coalesce(started_at, ?) WHERE id = ?`, status, now(), id)
		case tournament.StatusFinished, tournament.StatusCancelled:
			_, err = tx.ExecContext(ctx, `UPDATE tournaments SET status = ?, finished_at = ? WHERE id = ?`, status, now(), id)
		default:
			_, err = tx.ExecContext(ctx, `UPDATE tournaments SET status = ? WHERE id = ?`, status, id)
		}
		return err
	})
}

// NextIndex returns the next schedule index to start.
func (db *DB) NextIndex(ctx context.Context, t *tournament.Tournament) (int64, bool, error) {
	var (
		idx int64
		ok  bool
	)
	err := db.read(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `
			SELECT g.idx FROM games g
			WHERE g.tournament_id = ? AND g.status = 'aborted'
			  AND NOT EXISTS (SELECT 1 FROM games h WHERE h.tournament_id = g.tournament_id AND h.idx = g.idx AND h.status IN ('running', 'finished'))
			ORDER BY g.idx LIMIT 1`, t.ID).Scan(&idx)
		if err == nil {
			ok = true
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		var total int64
		if err := tx.QueryRowContext(ctx, `SELECT next_index, total_games FROM tournaments WHERE id = ?`, t.ID).Scan(&idx, &total); err != nil {
			return err
		}
		ok = idx < total
		return nil
	})
	return idx, ok, err
}

// StartGame stores a running game.
func (db *DB) StartGame(ctx context.Context, t *tournament.Tournament, p tournament.Pairing, black, white int64, seed uint64) (int64, error) {
	var id int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		// Each side's version: the engine's newest, whose definition the
		// game was given (read just before: a replacement in between is
		// rare, and the next game plays the new one).
		res, err := tx.ExecContext(ctx, `INSERT INTO games (tournament_id, idx, black_id, white_id, status, seed, started_at, pair, slot, black_version, white_version)
			VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?, (SELECT max(version) FROM engine_versions WHERE engine_id = ?3), (SELECT max(version) FROM engine_versions WHERE engine_id = ?4))`,
			t.ID, p.Index, black, white, int64(seed), now(), nullInt(p.Pair), nullString(p.Slot))
		if err != nil {
			return err
		}
		if id, err = res.LastInsertId(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE tournaments SET next_index = max(next_index, ?) WHERE id = ?`, p.Index+1, t.ID)
		return err
	})
	return id, err
}

// Recover marks the games that were running when the server stopped as aborted,
// so that their schedule indexes are played again. It returns how many.
func (db *DB) Recover(ctx context.Context) (int64, error) {
	var n int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE games SET status = 'aborted', reason = 'aborted', detail = 'the server stopped while the game was running', ended_at = ? WHERE status = 'running'`, now())
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// Standings returns a tournament's table rows (unsorted, without ratings) and
// its pair results: what tournament.Table needs.
func (db *DB) Standings(ctx context.Context, id int64) ([]tournament.Standing, []tournament.PairResult, error) {
	var (
		rows  []tournament.Standing
		pairs []tournament.PairResult
	)
	err := db.read(ctx, func(tx *sql.Tx) error {
		r, err := tx.QueryContext(ctx, `SELECT s.engine_id, e.name, s.games, s.wins, s.draws, s.losses, s.disc_diff FROM standings s JOIN engines e ON e.id = s.engine_id WHERE s.tournament_id = ?`, id)
		if err != nil {
			return err
		}
		defer r.Close()
		for r.Next() {
			var s tournament.Standing
			if err := r.Scan(&s.EngineID, &s.Name, &s.Games, &s.Wins, &s.Draws, &s.Losses, &s.DiscDiff); err != nil {
				return err
			}
			rows = append(rows, s)
		}
		if err := r.Err(); err != nil {
			return err
		}
		p, err := tx.QueryContext(ctx, `SELECT a, b, a_wins, draws, b_wins, p0, p1, p2, p3, p4 FROM pairs WHERE tournament_id = ?`, id)
		if err != nil {
			return err
		}
		defer p.Close()
		for p.Next() {
			var pr tournament.PairResult
			if err := p.Scan(&pr.A, &pr.B, &pr.AWins, &pr.Draws, &pr.BWins, &pr.Penta[0], &pr.Penta[1], &pr.Penta[2], &pr.Penta[3], &pr.Penta[4]); err != nil {
				return err
			}
			pairs = append(pairs, pr)
		}
		return p.Err()
	})
	return rows, pairs, err
}

// CreateMatch stores the tournament that holds the games of `taikai match`;
// its entrants may be unlisted engines.
func (db *DB) CreateMatch(ctx context.Context, t *tournament.Tournament) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		if err := createTournament(ctx, tx, t, false); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE tournaments SET started_at = created_at WHERE id = ?`, t.ID)
		return err
	})
}

// Slots returns the games of a tournament played in a format that pairs as
// it goes (swiss, knockout): the slots started (running or finished) and the
// results of the finished ones, with entrant indexes.
func (db *DB) Slots(ctx context.Context, t *tournament.Tournament) (map[string]bool, []tournament.SlotResult, error) {
	seat := make(map[int64]int, len(t.Engines))
	for i, id := range t.Engines {
		seat[id] = i
	}
	started := map[string]bool{}
	var finished []tournament.SlotResult
	err := db.read(ctx, func(tx *sql.Tx) error {
		clear(started)
		finished = finished[:0]
		r, err := tx.QueryContext(ctx, `SELECT slot, black_id, white_id, status, result FROM games
			WHERE tournament_id = ? AND slot IS NOT NULL AND status IN ('running', 'finished') ORDER BY idx`, t.ID)
		if err != nil {
			return err
		}
		defer r.Close()
		for r.Next() {
			var (
				key, status  string
				black, white int64
				result       sql.NullString
			)
			if err := r.Scan(&key, &black, &white, &status, &result); err != nil {
				return err
			}
			started[key] = true
			if status != tournament.GameFinished {
				continue
			}
			sl, err := tournament.ParseSlot(key)
			if err != nil {
				return fmt.Errorf("tournament %d: %w", t.ID, err)
			}
			sl.Black, sl.White = seat[black], seat[white]
			res := tournament.SlotResult{Slot: sl, BlackScore: 0.5}
			switch games.Result(result.String) {
			case games.BlackWon:
				res.BlackScore = 1
			case games.WhiteWon:
				res.BlackScore = 0
			}
			finished = append(finished, res)
		}
		return r.Err()
	})
	return started, finished, err
}

// SetTotal records the number of games a tournament that pairs as it goes
// now expects.
func (db *DB) SetTotal(ctx context.Context, id, total int64) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE tournaments SET total_games = ? WHERE id = ?`, total, id)
		return err
	})
}
