package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/tournament"
)

// FinishGame stores a played game. In the same transaction it updates both
// engines' standings, their pair result and the tournament's count, and
// finishes the tournament with its last game, so that the table always equals a
// recount of the games. A game already stored (or marked aborted by Recover) is
// left alone and counted once.
func (db *DB) FinishGame(ctx context.Context, p *tournament.Played) error {
	size := p.Spec.Settings.Size
	if size == 0 && len(p.Moves) > 0 {
		// Validated settings always have one (Runner.Play stores them so).
		return fmt.Errorf("store game %d: its settings have no board size", p.Spec.ID)
	}
	moves, auto := encodeMoves(p.Moves, size)
	viol, err := violationsJSON(p.Violations)
	if err != nil {
		return err
	}
	usage, err := usageJSON(p)
	if err != nil {
		return err
	}
	notes, err := notesJSON(p.Moves)
	if err != nil {
		return err
	}
	var op struct{ suite, index, plies, text any }
	if o := p.Spec.Opening; o != nil {
		op.suite, op.index, op.plies, op.text = o.Suite, o.Index, min(len(o.Moves), len(p.Moves)), o.Text
	}
	var refused any
	if p.Refused != nil {
		b, err := json.Marshal(p.Refused)
		if err != nil {
			return err
		}
		refused = string(b)
	}
	status := tournament.GameFinished
	var result any = string(p.Result())
	if p.Outcome.Reason == games.ReasonAborted {
		status, result = tournament.GameAborted, nil
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE games SET status = ?, result = ?, reason = ?, cause = ?, plies = ?, moves = ?, auto = ?, violations = ?,
			black_stones = ?, white_stones = ?, black_nick = ?, white_nick = ?, logs = ?, detail = ?, ended_at = ?, sandbox = ?, engine_usage = ?,
			black_connect_ms = ?, white_connect_ms = ?, black_wire_name = ?, white_wire_name = ?,
			opening_suite = ?, opening_index = ?, opening_plies = ?, opening_text = ?, move_notes = ?, worker = ?, attempt = ?, refused = ?
			WHERE id = ? AND status = 'running'`,
			status, result, p.Outcome.Reason, nullString(p.Outcome.Cause), len(p.Moves), moves, auto, viol,
			p.Stones[0], p.Stones[1], nullString(p.Nicks[0]), nullString(p.Nicks[1]), nullString(p.Spec.LogDir), nullString(p.Detail), p.EndedAt.UnixMilli(),
			nullString(p.Sandbox), usage, nullInt(p.ConnectMS[0]), nullInt(p.ConnectMS[1]), nullString(p.WireNames[0]), nullString(p.WireNames[1]),
			op.suite, op.index, op.plies, op.text, notes, nullString(p.Worker), nullInt(int64(p.Attempt)), refused, p.Spec.ID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 || status == tournament.GameAborted {
			return err
		}
		return score(ctx, tx, p)
	})
}

// score adds a finished game to the standings, the pair results and the
// tournament's count.
func score(ctx context.Context, tx *sql.Tx, p *tournament.Played) error {
	ids := [2]int64{p.Spec.Black.ID, p.Spec.White.ID}
	diff := p.Stones[0] - p.Stones[1]
	var w [2]int // wins of black, white
	draw := 0
	switch p.Outcome.Winner {
	case games.Black:
		w[0] = 1
	case games.White:
		w[1] = 1
	default:
		draw = 1
	}
	for i := range 2 {
		d := diff
		if i == 1 {
			d = -diff
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO standings (tournament_id, engine_id, games, wins, draws, losses, disc_diff) VALUES (?, ?, 1, ?, ?, ?, ?)
			ON CONFLICT (tournament_id, engine_id) DO UPDATE SET games = games + 1, wins = wins + excluded.wins,
			draws = draws + excluded.draws, losses = losses + excluded.losses, disc_diff = disc_diff + excluded.disc_diff`,
			p.Spec.TournamentID, ids[i], w[i], draw, w[1-i], d); err != nil {
			return err
		}
	}
	a, b, aw, bw := ids[0], ids[1], w[0], w[1]
	if a > b {
		a, b, aw, bw = b, a, bw, aw
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO pairs (tournament_id, a, b, a_wins, draws, b_wins) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (tournament_id, a, b) DO UPDATE SET a_wins = a_wins + excluded.a_wins, draws = draws + excluded.draws, b_wins = b_wins + excluded.b_wins`,
		p.Spec.TournamentID, a, b, aw, draw, bw); err != nil {
		return err
	}
	if err := scorePair(ctx, tx, p, a); err != nil {
		return err
	}
	if err := scoreLeague(ctx, tx, p, w, draw); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE tournaments SET finished_games = finished_games + 1 WHERE id = ?`, p.Spec.TournamentID); err != nil {
		return err
	}
	// A format that pairs as it goes (swiss, knockout) is finished by the
	// service, which alone knows whether another game is to come.
	_, err := tx.ExecContext(ctx, `UPDATE tournaments SET status = 'finished', finished_at = ? WHERE id = ? AND status = 'running' AND finished_games >= total_games
		AND kind NOT IN ('swiss', 'knockout', 'league')`, now(), p.Spec.TournamentID)
	return err
}

// scorePair adds a game pair to the pentanomial counts of its engines once
// its second game is stored: a is the engine of the lower id, from whose view
// the pair's points are counted.
func scorePair(ctx context.Context, tx *sql.Tx, p *tournament.Played, a int64) error {
	if p.Spec.Pair == 0 {
		return nil
	}
	var other sql.NullString
	var otherBlack int64
	err := tx.QueryRowContext(ctx, `SELECT result, black_id FROM games WHERE tournament_id = ? AND pair = ? AND id != ? AND status = 'finished' LIMIT 1`,
		p.Spec.TournamentID, p.Spec.Pair, p.Spec.ID).Scan(&other, &otherBlack)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // the first game of its pair
	}
	if err != nil {
		return err
	}
	half := halfPoints(p.Result(), p.Spec.Black.ID == a) + halfPoints(games.Result(other.String), otherBlack == a)
	_, err = tx.ExecContext(ctx, fmt.Sprintf(`UPDATE pairs SET p%d = p%d + 1 WHERE tournament_id = ? AND a = ? AND b = ?`, half, half),
		p.Spec.TournamentID, a, max(p.Spec.Black.ID, p.Spec.White.ID))
	return err
}

// halfPoints is what a game result is worth, in half points, to the engine
// that played black (asBlack) or white.
func halfPoints(result games.Result, asBlack bool) int {
	switch {
	case result == games.Drawn:
		return 1
	case (result == games.BlackWon) == asBlack:
		return 2
	}
	return 0
}

// usageJSON is the engines' usage as stored: {"black": ..., "white": ...}
// for the engines that started, NULL if none did.
func usageJSON(p *tournament.Played) (any, error) {
	m := map[string]engines.Usage{}
	for i, c := range []string{"black", "white"} {
		if p.Pids[i] != 0 {
			m[c] = p.Usage[i]
		}
	}
	if len(m) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(m)
	return string(b), err
}

func violationsJSON(v [2]games.Violations) (any, error) {
	if len(v[0]) == 0 && len(v[1]) == 0 {
		return nil, nil
	}
	m := map[string]games.Violations{}
	if len(v[0]) > 0 {
		m["black"] = v[0]
	}
	if len(v[1]) > 0 {
		m["white"] = v[1]
	}
	b, err := json.Marshal(m)
	return string(b), err
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

const gameColumns = `g.id, g.tournament_id, g.idx, t.settings, g.black_id, be.name, g.black_nick, g.white_id, we.name, g.white_nick,
	g.status, g.result, g.reason, g.cause, g.plies, g.black_stones, g.white_stones, g.seed, g.logs, g.detail, g.started_at, g.ended_at, g.sandbox, g.black_connect_ms, g.white_connect_ms, g.black_wire_name, g.white_wire_name,
	g.pair, g.opening_suite, g.opening_index, g.opening_plies, g.opening_text, g.slot, g.worker, g.attempt, g.refused,
	be.protocol = 'human', we.protocol = 'human', coalesce(g.black_version, 0), coalesce(g.white_version, 0)`

const gameFrom = ` FROM games g JOIN tournaments t ON t.id = g.tournament_id JOIN engines be ON be.id = g.black_id JOIN engines we ON we.id = g.white_id`

func scanGame(s scanner, extra ...any) (*tournament.Game, error) {
	var (
		g                                   tournament.Game
		settings                            string
		bnick, wnick, result, reason, cause sql.NullString
		logs, detail, sandbox               sql.NullString
		bstones, wstones, ended             sql.NullInt64
		bconnect, wconnect                  sql.NullInt64
		bwire, wwire                        sql.NullString
		pair, opIndex, opPlies              sql.NullInt64
		opSuite, opText, slot               sql.NullString
		worker, refused                     sql.NullString
		attempt                             sql.NullInt64
		seed, started                       int64
	)
	dest := []any{&g.ID, &g.TournamentID, &g.Index, &settings, &g.Black.EngineID, &g.Black.Name, &bnick, &g.White.EngineID, &g.White.Name, &wnick,
		&g.Status, &result, &reason, &cause, &g.Plies, &bstones, &wstones, &seed, &logs, &detail, &started, &ended, &sandbox, &bconnect, &wconnect, &bwire, &wwire,
		&pair, &opSuite, &opIndex, &opPlies, &opText, &slot, &worker, &attempt, &refused, &g.Black.Human, &g.White.Human, &g.Black.Version, &g.White.Version}
	if err := s.Scan(append(dest, extra...)...); err != nil {
		return nil, err
	}
	var set tournament.Settings
	if err := json.Unmarshal([]byte(settings), &set); err != nil {
		return nil, fmt.Errorf("game %d: settings: %w", g.ID, err)
	}
	g.Game, g.Rule, g.Size = set.Game, set.Rule, set.Size
	g.Black.Nick, g.White.Nick = bnick.String, wnick.String
	g.Black.WireName, g.White.WireName = bwire.String, wwire.String
	g.Result, g.Reason, g.Cause = games.Result(result.String), reason.String, cause.String
	g.Stones = [2]int{int(bstones.Int64), int(wstones.Int64)}
	g.Seed = uint64(seed)
	g.Logs, g.Detail, g.Sandbox = logs.String, detail.String, sandbox.String
	g.ConnectMS = [2]int64{bconnect.Int64, wconnect.Int64}
	g.StartedAt = msTime(sql.NullInt64{Int64: started, Valid: true})
	g.EndedAt = msTime(ended)
	g.Pair, g.Slot = pair.Int64, slot.String
	g.Worker, g.Attempt = worker.String, int(attempt.Int64)
	if refused.Valid {
		var m tournament.RefusedMove
		if err := json.Unmarshal([]byte(refused.String), &m); err == nil {
			g.Refused = &m
		}
	}
	if opSuite.Valid {
		g.Opening = &tournament.SuiteLine{Suite: opSuite.String, Index: int(opIndex.Int64), Plies: int(opPlies.Int64), Text: opText.String}
	}
	return &g, nil
}

// Game returns a game with its moves and violations.
func (db *DB) Game(ctx context.Context, id int64) (*tournament.Game, error) {
	var moves, auto []byte
	var viol, usage, notes sql.NullString
	g, err := scanGame(db.r.QueryRowContext(ctx, `SELECT `+gameColumns+`, g.moves, g.auto, g.violations, g.engine_usage, g.move_notes`+gameFrom+` WHERE g.id = ?`, id), &moves, &auto, &viol, &usage, &notes)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, games.Errorf(games.ENotFound, "game %d: not found", id)
	}
	if err != nil {
		return nil, err
	}
	if g.Moves, err = decodeMoves(moves, auto, g.Size); err != nil {
		return nil, fmt.Errorf("game %d: %w", id, err)
	}
	if err := applyNotes(g.Moves, notes.String); err != nil {
		return nil, fmt.Errorf("game %d: %w", id, err)
	}
	if err := readDetail(g, viol, usage); err != nil {
		return nil, err
	}
	return g, nil
}

// readDetail fills in a game's violations and engine usage from their
// columns.
func readDetail(g *tournament.Game, viol, usage sql.NullString) error {
	if viol.Valid {
		var m map[string]games.Violations
		if err := json.Unmarshal([]byte(viol.String), &m); err != nil {
			return fmt.Errorf("game %d: violations: %w", g.ID, err)
		}
		g.Violations = [2]games.Violations{m["black"], m["white"]}
	}
	if usage.Valid {
		var m map[string]*engines.Usage
		if err := json.Unmarshal([]byte(usage.String), &m); err != nil {
			return fmt.Errorf("game %d: engine usage: %w", g.ID, err)
		}
		g.Usage = [2]*engines.Usage{m["black"], m["white"]}
	}
	return nil
}

// EachFinishedGame calls fn for every finished game of a tournament, with its
// moves (not its violations or usage), in schedule order, reading them as it
// goes: an export of a big tournament does not hold it in memory. fn's error
// stops the walk and is returned.
func (db *DB) EachFinishedGame(ctx context.Context, tournamentID int64, fn func(*tournament.Game) error) error {
	rows, err := db.r.QueryContext(ctx, `SELECT `+gameColumns+`, g.moves, g.auto`+gameFrom+
		` WHERE g.tournament_id = ? AND g.status = 'finished' ORDER BY g.idx, g.id`, tournamentID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var moves, auto []byte
		g, err := scanGame(rows, &moves, &auto)
		if err != nil {
			return err
		}
		if g.Moves, err = decodeMoves(moves, auto, g.Size); err != nil {
			return fmt.Errorf("game %d: %w", g.ID, err)
		}
		if err := fn(g); err != nil {
			return err
		}
	}
	return rows.Err()
}

// GameFilter selects games of a tournament.
type GameFilter struct {
	Engine int64        // either side
	Status string       // running, finished, aborted
	Result games.Result // BlackWon, WhiteWon or Drawn
	Reason string
	Limit  int
	Offset int
	// Newest lists the newest first (a league's page: its list only grows).
	Newest bool
}

// Games lists the started games of a tournament in schedule order, or the
// newest first (without moves).
func (db *DB) Games(ctx context.Context, tournamentID int64, f GameFilter) ([]*tournament.Game, error) {
	where := []string{"g.tournament_id = ?"}
	args := []any{tournamentID}
	if f.Engine != 0 {
		where = append(where, "(g.black_id = ? OR g.white_id = ?)")
		args = append(args, f.Engine, f.Engine)
	}
	for _, c := range []struct{ col, v string }{{"g.status", f.Status}, {"g.result", string(f.Result)}, {"g.reason", f.Reason}} {
		if c.v != "" {
			where = append(where, c.col+" = ?")
			args = append(args, c.v)
		}
	}
	if f.Limit <= 0 {
		f.Limit = 1000
	}
	args = append(args, f.Limit, f.Offset)
	order := `g.idx, g.id`
	if f.Newest {
		order = `g.idx DESC, g.id DESC`
	}
	return db.queryGames(ctx, `WHERE `+strings.Join(where, " AND ")+` ORDER BY `+order+` LIMIT ? OFFSET ?`, args...)
}

// queryGames lists games (without moves) selected by a WHERE clause on g.
func (db *DB) queryGames(ctx context.Context, where string, args ...any) ([]*tournament.Game, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+gameColumns+gameFrom+` `+where, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := []*tournament.Game{}
	for rows.Next() {
		g, err := scanGame(rows)
		if err != nil {
			return nil, err
		}
		list = append(list, g)
	}
	return list, rows.Err()
}

// CountGames counts a tournament's stored games by status.
func (db *DB) CountGames(ctx context.Context, tournamentID int64) (map[string]int64, error) {
	return db.countByStatus(ctx, `SELECT status, count(*) FROM games WHERE tournament_id = ? GROUP BY status`, tournamentID)
}

// countByStatus reads a query's (status, count) rows into a map.
func (db *DB) countByStatus(ctx context.Context, query string, args ...any) (map[string]int64, error) {
	rows, err := db.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[string]int64{}
	for rows.Next() {
		var s string
		var n int64
		if err := rows.Scan(&s, &n); err != nil {
			return nil, err
		}
		m[s] = n
	}
	return m, rows.Err()
}

// Tallies returns the tournament records of two engines.
func (db *DB) Tallies(ctx context.Context, tournamentID int64, ids [2]int64) ([2]engines.Tally, error) {
	var recs [2]engines.Tally
	for i, id := range ids {
		err := db.r.QueryRowContext(ctx, `SELECT e.name, coalesce(s.wins, 0), coalesce(s.losses, 0), coalesce(s.draws, 0)
			FROM engines e LEFT JOIN standings s ON s.engine_id = e.id AND s.tournament_id = ? WHERE e.id = ?`, tournamentID, id).
			Scan(&recs[i].Name, &recs[i].Wins, &recs[i].Losses, &recs[i].Draws)
		if err != nil {
			return recs, fmt.Errorf("record of engine %d: %w", id, err)
		}
	}
	return recs, nil
}

// Recount rebuilds a tournament's standings, pair results and finished count
// from its games table, in one transaction. The table kept game by game must
// always equal this, and the tests compare them. (No command runs it yet: a
// repair by hand is a Go program that opens the database and calls it.)
func (db *DB) Recount(ctx context.Context, tournamentID int64) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{
			`UPDATE standings SET games = 0, wins = 0, draws = 0, losses = 0, disc_diff = 0 WHERE tournament_id = ?1`,
			`DELETE FROM pairs WHERE tournament_id = ?1`,
			`WITH sides AS (
				SELECT black_id AS engine, result = 'black' AS win, result = 'draw' AS draw, result = 'white' AS loss, black_stones - white_stones AS diff
				  FROM games WHERE tournament_id = ?1 AND status = 'finished'
				UNION ALL
				SELECT white_id, result = 'white', result = 'draw', result = 'black', white_stones - black_stones
				  FROM games WHERE tournament_id = ?1 AND status = 'finished')
			 INSERT INTO standings (tournament_id, engine_id, games, wins, draws, losses, disc_diff)
			 SELECT ?1, engine, count(*), sum(win), sum(draw), sum(loss), sum(diff) FROM sides GROUP BY engine
			 ON CONFLICT (tournament_id, engine_id) DO UPDATE SET games = excluded.games, wins = excluded.wins,
			   draws = excluded.draws, losses = excluded.losses, disc_diff = excluded.disc_diff`,
			`INSERT INTO pairs (tournament_id, a, b, a_wins, draws, b_wins)
			 SELECT ?1, min(black_id, white_id), max(black_id, white_id),
			   sum(CASE WHEN (result = 'black') = (black_id < white_id) AND result != 'draw' THEN 1 ELSE 0 END),
			   sum(result = 'draw'),
			   sum(CASE WHEN (result = 'black') != (black_id < white_id) AND result != 'draw' THEN 1 ELSE 0 END)
			 FROM games WHERE tournament_id = ?1 AND status = 'finished'
			 GROUP BY min(black_id, white_id), max(black_id, white_id)`,
			`WITH halves AS (
				SELECT pair, min(black_id, white_id) AS a, max(black_id, white_id) AS b,
				  CASE WHEN result = 'draw' THEN 1 WHEN (result = 'black') = (black_id < white_id) THEN 2 ELSE 0 END AS h
				FROM games WHERE tournament_id = ?1 AND status = 'finished' AND pair IS NOT NULL),
			 pts AS (SELECT a, b, sum(h) AS h FROM halves GROUP BY pair, a, b HAVING count(*) = 2)
			 UPDATE pairs SET p0 = (SELECT count(*) FROM pts WHERE pts.a = pairs.a AND pts.b = pairs.b AND h = 0),
			   p1 = (SELECT count(*) FROM pts WHERE pts.a = pairs.a AND pts.b = pairs.b AND h = 1),
			   p2 = (SELECT count(*) FROM pts WHERE pts.a = pairs.a AND pts.b = pairs.b AND h = 2),
			   p3 = (SELECT count(*) FROM pts WHERE pts.a = pairs.a AND pts.b = pairs.b AND h = 3),
			   p4 = (SELECT count(*) FROM pts WHERE pts.a = pairs.a AND pts.b = pairs.b AND h = 4)
			 WHERE tournament_id = ?1`,
			`UPDATE tournaments SET finished_games = (SELECT count(*) FROM games WHERE tournament_id = ?1 AND status = 'finished') WHERE id = ?1`,
			`DELETE FROM league_pairs WHERE tournament_id = ?1`,
			`INSERT INTO league_pairs (tournament_id, a, a_version, b, b_version, a_wins, draws, b_wins)
			 SELECT ?1, CASE WHEN black_id < white_id THEN black_id ELSE white_id END, CASE WHEN black_id < white_id THEN black_version ELSE white_version END,
			   CASE WHEN black_id < white_id THEN white_id ELSE black_id END, CASE WHEN black_id < white_id THEN white_version ELSE black_version END,
			   sum(CASE WHEN (result = 'black') = (black_id < white_id) AND result != 'draw' THEN 1 ELSE 0 END),
			   sum(result = 'draw'),
			   sum(CASE WHEN (result = 'black') != (black_id < white_id) AND result != 'draw' THEN 1 ELSE 0 END)
			 FROM games WHERE tournament_id = ?1 AND status = 'finished' AND (SELECT kind FROM tournaments WHERE id = ?1) = 'league'
			 GROUP BY 2, 3, 4, 5`,
		} {
			if _, err := tx.ExecContext(ctx, q, tournamentID); err != nil {
				return err
			}
		}
		return nil
	})
}

// nullInt stores 0 as NULL: not known, or did not happen.
func nullInt(n int64) any {
	if n == 0 {
		return nil
	}
	return n
}
