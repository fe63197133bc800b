package storage

// Leagues (issue 40): their entrants, the versions that play, the results
// between versions.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/tournament"
)

// latestVersion is an engine's current version, as SQL on engine id column col.
func latestVersion(col string) string {
	return `coalesce((SELECT max(v.version) FROM engine_versions v WHERE v.engine_id = ` + col + `), 0)`
}

// checkPassed is whether the last check of engine col was of its current
// version and passed.
func checkPassed(col string) string {
	return `coalesce((SELECT c.status = 'done' AND json_extract(c.result, '$.ok') = 1 AND c.version = ` + latestVersion(col) + `
		FROM engine_checks c WHERE c.engine_id = ` + col + `), 0)`
}

// qualifyingQuery lists the engines a league of entrants "checked" does not
// have yet: listed, not withdrawn, of its game, their current version's
// check passed.
var qualifyingQuery = `SELECT e.id, e.protocol FROM engines e
	WHERE e.game = ? AND e.listed = 1 AND e.deleted_at IS NULL AND e.protocol <> 'human'
	  AND NOT EXISTS (SELECT 1 FROM entrants x WHERE x.tournament_id = ? AND x.engine_id = e.id)
	  AND ` + checkPassed("e.id") + `
	ORDER BY e.id`

// qualifying returns the ids of the engines that may join a league of
// entrants "checked" (those whose protocol cannot play its rule excepted).
func qualifying(ctx context.Context, tx *sql.Tx, t *tournament.Tournament) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, qualifyingQuery, t.Settings.Game, t.ID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var (
			id    int64
			proto string
		)
		if err := rows.Scan(&id, &proto); err != nil {
			return nil, err
		}
		if p, ok := engines.LookupProtocol(proto); ok && p.CheckRule(t.Settings.Rule) != nil {
			continue
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// joinChecked makes the engines that qualify entrants of a league of
// entrants "checked", after those it has; it returns how many joined.
func joinChecked(ctx context.Context, tx *sql.Tx, t *tournament.Tournament) (int, error) {
	ids, err := qualifying(ctx, tx, t)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	var seat int
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seat), -1) + 1 FROM entrants WHERE tournament_id = ?`, t.ID).Scan(&seat); err != nil {
		return 0, err
	}
	for i, id := range ids {
		if _, err := tx.ExecContext(ctx, `INSERT INTO entrants (tournament_id, seat, engine_id) VALUES (?, ?, ?)`, t.ID, seat+i, id); err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO standings (tournament_id, engine_id) VALUES (?, ?) ON CONFLICT DO NOTHING`, t.ID, id); err != nil {
			return 0, err
		}
	}
	return len(ids), nil
}

// LeagueState reads what a league's scheduler needs before each game. With
// entrants "checked", the engines that qualified since the last read join
// first (a write only when there are some).
func (db *DB) LeagueState(ctx context.Context, t *tournament.Tournament) (*tournament.LeagueState, error) {
	if t.EntrantsChecked {
		var n int
		err := db.read(ctx, func(tx *sql.Tx) error {
			ids, err := qualifying(ctx, tx, t)
			n = len(ids)
			return err
		})
		if err != nil {
			return nil, err
		}
		if n > 0 {
			if err := db.write(ctx, func(tx *sql.Tx) error { _, err := joinChecked(ctx, tx, t); return err }); err != nil {
				return nil, err
			}
		}
	}
	st := &tournament.LeagueState{}
	err := db.read(ctx, func(tx *sql.Tx) error {
		st.Entrants, st.Field, st.Results, st.Running = st.Entrants[:0], st.Field[:0], st.Results[:0], st.Running[:0]
		if err := tx.QueryRowContext(ctx, `SELECT status FROM tournaments WHERE id = ?`, t.ID).Scan(&st.Status); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return games.Errorf(games.ENotFound, "tournament %d: not found", t.ID)
			}
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT x.engine_id, e.deleted_at IS NULL, `+latestVersion("x.engine_id")+`, `+checkPassed("x.engine_id")+`
			FROM entrants x JOIN engines e ON e.id = x.engine_id WHERE x.tournament_id = ? ORDER BY x.seat`, t.ID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				id             int64
				version        int
				active, passed bool
			)
			if err := rows.Scan(&id, &active, &version, &passed); err != nil {
				return err
			}
			st.Entrants = append(st.Entrants, id)
			if active && (passed || !t.EntrantsChecked) {
				st.Field = append(st.Field, tournament.VersionKey{Engine: id, Version: version})
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if st.Results, err = leagueResults(ctx, tx, t.ID); err != nil {
			return err
		}
		run, err := tx.QueryContext(ctx, `SELECT black_id, coalesce(black_version, 0), white_id, coalesce(white_version, 0) FROM games
			WHERE status = 'running' AND tournament_id = ?`, t.ID)
		if err != nil {
			return err
		}
		defer run.Close()
		for run.Next() {
			var g [2]tournament.VersionKey
			if err := run.Scan(&g[0].Engine, &g[0].Version, &g[1].Engine, &g[1].Version); err != nil {
				return err
			}
			st.Running = append(st.Running, g)
		}
		return run.Err()
	})
	if err != nil {
		return nil, err
	}
	sortKeys(st.Field)
	return st, nil
}

func sortKeys(ks []tournament.VersionKey) {
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && (ks[j].Engine < ks[j-1].Engine || ks[j].Engine == ks[j-1].Engine && ks[j].Version < ks[j-1].Version); j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
}

func leagueResults(ctx context.Context, tx *sql.Tx, tid int64) ([]tournament.VersionResult, error) {
	rows, err := tx.QueryContext(ctx, `SELECT a, a_version, b, b_version, a_wins, draws, b_wins FROM league_pairs WHERE tournament_id = ?`, tid)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []tournament.VersionResult
	for rows.Next() {
		var r tournament.VersionResult
		if err := rows.Scan(&r.A.Engine, &r.A.Version, &r.B.Engine, &r.B.Version, &r.AWins, &r.Draws, &r.BWins); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// LeagueHalfPairs lists the game pairs of a league of which one game
// finished and the other never did (the server stopped meanwhile): the game
// still to play, colours swapped.
func (db *DB) LeagueHalfPairs(ctx context.Context, t *tournament.Tournament) ([]tournament.LeagueGame, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT pair, black_id, coalesce(black_version, 0), white_id, coalesce(white_version, 0) FROM games
		WHERE tournament_id = ? AND pair IS NOT NULL AND status IN ('running', 'finished')
		GROUP BY pair HAVING count(*) = 1 ORDER BY pair`, t.ID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []tournament.LeagueGame
	for rows.Next() {
		var g tournament.LeagueGame
		// The game played: its pair's other game swaps the colours.
		if err := rows.Scan(&g.Pair, &g.White.Engine, &g.White.Version, &g.Black.Engine, &g.Black.Version); err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// scoreLeague adds a finished game of a league to the results between its
// versions; w are black's and white's wins.
func scoreLeague(ctx context.Context, tx *sql.Tx, p *tournament.Played, w [2]int, draw int) error {
	var (
		kind string
		ver  [2]sql.NullInt64
	)
	if err := tx.QueryRowContext(ctx, `SELECT t.kind, g.black_version, g.white_version FROM games g JOIN tournaments t ON t.id = g.tournament_id WHERE g.id = ?`,
		p.Spec.ID).Scan(&kind, &ver[0], &ver[1]); err != nil {
		return fmt.Errorf("game %d: %w", p.Spec.ID, err)
	}
	if kind != tournament.KindLeague {
		return nil
	}
	ids := [2]int64{p.Spec.Black.ID, p.Spec.White.ID}
	a, b := 0, 1
	if ids[1] < ids[0] {
		a, b = 1, 0
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO league_pairs (tournament_id, a, a_version, b, b_version, a_wins, draws, b_wins) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (tournament_id, a, a_version, b, b_version) DO UPDATE SET a_wins = a_wins + excluded.a_wins, draws = draws + excluded.draws, b_wins = b_wins + excluded.b_wins`,
		p.Spec.TournamentID, ids[a], ver[a].Int64, ids[b], ver[b].Int64, w[a], draw, w[b])
	return err
}

// Ladder is a league's table (tournament.Ladder): every version that played
// or plays now, best rating first; all false keeps only the current ones.
func (db *DB) Ladder(ctx context.Context, t *tournament.Tournament, all bool) ([]tournament.LadderRow, error) {
	var (
		results []tournament.VersionResult
		current = map[int64]int{}
		names   = map[int64]string{}
	)
	err := db.read(ctx, func(tx *sql.Tx) error {
		clear(current)
		clear(names)
		var err error
		if results, err = leagueResults(ctx, tx, t.ID); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT e.id, e.name, e.deleted_at IS NULL, `+latestVersion("e.id")+`, `+checkPassed("e.id")+` FROM engines e
			WHERE e.id IN (SELECT engine_id FROM entrants WHERE tournament_id = ?1 UNION SELECT a FROM league_pairs WHERE tournament_id = ?1 UNION SELECT b FROM league_pairs WHERE tournament_id = ?1)`, t.ID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				id             int64
				name           string
				active, passed bool
				version        int
			)
			if err := rows.Scan(&id, &name, &active, &version, &passed); err != nil {
				return err
			}
			names[id] = name
			if active {
				current[id] = version
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	entrant := map[int64]bool{}
	for _, id := range t.Engines {
		entrant[id] = true
	}
	for id := range current {
		if !entrant[id] {
			delete(current, id) // played here, no longer an entrant
		}
	}
	rows := tournament.Ladder(results, current, names, t.PlacementGames)
	if all {
		return rows, nil
	}
	out := rows[:0]
	for _, r := range rows {
		if r.Current {
			out = append(out, r)
		}
	}
	return out, nil
}

// VersionRating is a version's rating in one league.
type VersionRating struct {
	TournamentID int64   `json:"tournament_id"`
	Tournament   string  `json:"tournament"`
	Elo          float64 `json:"elo"`
	EloError     float64 `json:"elo_error"`
	Games        int64   `json:"games"`
	Current      bool    `json:"current"`
}

// VersionRatings returns an engine's ratings in every league it played,
// by version, leagues in id order.
func (db *DB) VersionRatings(ctx context.Context, engineID int64) (map[int][]VersionRating, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT DISTINCT tournament_id FROM league_pairs WHERE a = ?1 OR b = ?1 ORDER BY tournament_id`, engineID)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := map[int][]VersionRating{}
	for _, id := range ids {
		t, err := db.Tournament(ctx, id)
		if err != nil {
			return nil, err
		}
		ladder, err := db.Ladder(ctx, t, true)
		if err != nil {
			return nil, err
		}
		for _, r := range ladder {
			if r.EngineID == engineID && r.Games > 0 {
				out[r.Version] = append(out[r.Version], VersionRating{TournamentID: t.ID, Tournament: t.Name, Elo: r.Elo, EloError: r.EloError, Games: r.Games, Current: r.Current})
			}
		}
	}
	return out, nil
}
