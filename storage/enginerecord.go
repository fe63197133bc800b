package storage

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/taikai-dev/taikai/tournament"
)

// An engine's record across tournaments: what its page shows. These read
// the same tables as the standings; nothing is stored twice.

// EngineTournaments lists the tournaments an engine entered, `taikai match`
// records included and games with people not, newest first, with their
// entrants.
func (db *DB) EngineTournaments(ctx context.Context, engineID int64) ([]*tournament.Tournament, error) {
	return db.listWithEntrants(ctx, `WHERE kind != 'play' AND id IN (SELECT tournament_id FROM entrants WHERE engine_id = ?) ORDER BY id DESC`, engineID)
}

// EngineGames lists an engine's started games in every tournament, either
// colour, newest first (without moves).
func (db *DB) EngineGames(ctx context.Context, engineID int64, limit, offset int) ([]*tournament.Game, error) {
	return db.queryGames(ctx, `WHERE g.black_id = ?1 OR g.white_id = ?1 ORDER BY g.id DESC LIMIT ?2 OFFSET ?3`, engineID, limit, offset)
}

// CountEngineGames counts an engine's stored games by status.
func (db *DB) CountEngineGames(ctx context.Context, engineID int64) (map[string]int64, error) {
	return db.countByStatus(ctx, `SELECT status, count(*) FROM games WHERE black_id = ?1 OR white_id = ?1 GROUP BY status`, engineID)
}

// EachEngineGame calls fn for every finished game of an engine, oldest
// first, with its moves, violations and engine usage, reading them as it
// goes. fn's error stops the walk and is returned.
func (db *DB) EachEngineGame(ctx context.Context, engineID int64, fn func(*tournament.Game) error) error {
	rows, err := db.r.QueryContext(ctx, `SELECT `+gameColumns+`, g.moves, g.auto, g.violations, g.engine_usage`+gameFrom+
		` WHERE (g.black_id = ?1 OR g.white_id = ?1) AND g.status = 'finished' ORDER BY g.id`, engineID)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var moves, auto []byte
		var viol, usage sql.NullString
		g, err := scanGame(rows, &moves, &auto, &viol, &usage)
		if err != nil {
			return err
		}
		if g.Moves, err = decodeMoves(moves, auto, g.Size); err != nil {
			return fmt.Errorf("game %d: %w", g.ID, err)
		}
		if err := readDetail(g, viol, usage); err != nil {
			return err
		}
		if err := fn(g); err != nil {
			return err
		}
	}
	return rows.Err()
}

// GamePairs sums the pair results of every tournament of a game (every
// format, `taikai match` records too, games with people not) by pair of engines: the games of all
// the engines of that game, as tournament.Ratings takes them.
func (db *DB) GamePairs(ctx context.Context, game string) ([]tournament.PairResult, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT p.a, p.b, sum(p.a_wins), sum(p.draws), sum(p.b_wins), sum(p.p0), sum(p.p1), sum(p.p2), sum(p.p3), sum(p.p4)
		FROM pairs p JOIN engines e ON e.id = p.a JOIN tournaments t ON t.id = p.tournament_id
		WHERE e.game = ? AND t.kind != 'play' GROUP BY p.a, p.b ORDER BY p.a, p.b`, game)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []tournament.PairResult
	for rows.Next() {
		var pr tournament.PairResult
		if err := rows.Scan(&pr.A, &pr.B, &pr.AWins, &pr.Draws, &pr.BWins, &pr.Penta[0], &pr.Penta[1], &pr.Penta[2], &pr.Penta[3], &pr.Penta[4]); err != nil {
			return nil, err
		}
		out = append(out, pr)
	}
	return out, rows.Err()
}
