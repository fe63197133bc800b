package tournament_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/openings"
	"github.com/taikai-dev/taikai/internal/testkit"
	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/tournament"
)

// Games of a tournament with openings start from them in every protocol: the
// server plays the opening (stored as the game's first plies, with no time),
// each opening is played by a pair of games with colours swapped, the engines
// play on from the position their protocol shows them (the built-in
// othello-move client from the MOVE lines before START), and the pairs are
// counted by their points (pentanomial) as a recount of the games counts them.
func TestOpeningsInEveryProtocol(t *testing.T) {
	t.Parallel()
	g := testkit.Concurrent(t)
	defer g.Wait()
	for _, tc := range []struct {
		proto, game, rule string
		engines           [2]string
		suite             string
	}{
		// White to move after the first opening (5 plies), black after the second.
		{"othello-board", "othello", "", [2]string{"othello-random", "othello-greedy"}, "f5d6c3d3c4\nf5f6e6f4\n"},
		{"othello-move", "othello", "", [2]string{"othello-random", "othello-greedy"}, "f5d6c3d3c4\nf5f6e6f4\n"},
		// Three stones: white to move.
		{"gomoku-turn", "gomoku", "freestyle", [2]string{"gomoku-random", "gomoku-threat"}, "h8 i9 h10\nh8 g7 j9 g9\n"},
	} {
		g.Run(tc.proto, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			db, err := storage.Open(ctx, filepath.Join(dir, "taikai.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			file := filepath.Join(dir, "suite.txt")
			if err := os.WriteFile(file, []byte(tc.suite), 0o644); err != nil {
				t.Fatal(err)
			}
			tour := &tournament.Tournament{Name: tc.proto, GamesPerPair: 4, Settings: tournament.Settings{
				Game: tc.game, Rule: tc.rule, MoveTimeMS: 2000,
				Openings: &tournament.Openings{File: file, Order: tournament.OrderSequential},
			}}
			for _, name := range tc.engines {
				e := quickBuiltin(t, name, tc.proto, 20)
				if err := db.CreateEngine(ctx, &e); err != nil {
					t.Fatal(err)
				}
				tour.Engines = append(tour.Engines, e.ID)
			}
			if err := tour.Validate(); err != nil {
				t.Fatal(err)
			}
			if err := db.CreateTournament(ctx, tour); err != nil {
				t.Fatal(err)
			}
			svc := &tournament.Service{Store: db, Runner: newRunner(t)}
			defer svc.Close()
			if _, err := svc.Start(ctx, tour.ID); err != nil {
				t.Fatal(err)
			}
			waitFinished(t, db, tour.ID)

			list, err := db.Games(ctx, tour.ID, storage.GameFilter{Status: tournament.GameFinished})
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 4 {
				t.Fatalf("%d finished games, want 4", len(list))
			}
			byPair := map[int64][]*tournament.Game{}
			for _, g := range list {
				g, err := db.Game(ctx, g.ID)
				if err != nil {
					t.Fatal(err)
				}
				if g.Reason != games.ReasonNormal {
					t.Errorf("game %d (%s vs %s) ended %s %s: an engine did not cope with the opening", g.ID, g.Black.Name, g.White.Name, g.Reason, g.Cause)
				}
				op := g.Opening
				if op == nil || g.Pair == 0 {
					t.Fatalf("game %d: opening %+v, pair %d", g.ID, op, g.Pair)
				}
				want, err := parseLine(tc.game, tc.rule, g.Size, tc.suite, op.Index)
				if err != nil {
					t.Fatal(err)
				}
				if op.Plies != len(want) || len(g.Moves) < op.Plies {
					t.Fatalf("game %d: opening of %d plies with %d moves, want %d plies", g.ID, op.Plies, len(g.Moves), len(want))
				}
				for i, m := range want {
					if p := g.Moves[i]; !p.Move.Equal(m) || p.MS != 0 || p.Auto {
						t.Errorf("game %d ply %d: %+v, want the opening's %+v with 0 ms", g.ID, i+1, p, m)
					}
				}
				byPair[g.Pair] = append(byPair[g.Pair], g)
			}
			for pair, gs := range byPair {
				if len(gs) != 2 || gs[0].Opening.Index != gs[1].Opening.Index || gs[0].Black.EngineID != gs[1].White.EngineID {
					t.Errorf("pair %d: %d games, want two from one opening with colours swapped", pair, len(gs))
				}
			}
			_, pairs, err := db.Standings(ctx, tour.ID)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Recount(ctx, tour.ID); err != nil {
				t.Fatal(err)
			}
			_, recounted, err := db.Standings(ctx, tour.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(pairs) != 1 || pairs[0] != recounted[0] {
				t.Fatalf("pair results %+v, recounted %+v", pairs, recounted)
			}
			var n int64
			for _, c := range pairs[0].Penta {
				n += c
			}
			if n != 2 {
				t.Errorf("pentanomial %v counts %d pairs, want 2", pairs[0].Penta, n)
			}
		})
	}
}

// parseLine returns the moves of line k of a suite's text.
func parseLine(game, rule string, size int, text string, k int) ([]games.Move, error) {
	s, err := openings.Parse("suite.txt", game, rule, size, strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	return s.Openings[k].Moves, nil
}
