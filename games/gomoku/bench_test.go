package gomoku_test

import (
	"math/rand/v2"
	"testing"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/gomoku"
)

// recordGame plays a random game near the stones, as in TestRandomGames, and
// returns its moves.
func recordGame(tb testing.TB, r gomoku.Rule, size int, seed uint64) []gomoku.Point {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	g, err := gomoku.NewGame(size, r)
	if err != nil {
		tb.Fatal(err)
	}
	var allowed []gomoku.Point
	for !g.Over() {
		allowed = g.Allowed(allowed[:0])
		p := pick(rng, g.Board(), allowed)
		g.Play(p.X, p.Y)
	}
	return g.Moves()
}

// BenchmarkFullGame replays a recorded 15x15 game, checking and playing every
// move as a referee does.
func BenchmarkFullGame(b *testing.B) {
	for _, r := range allRules {
		b.Run(r.String(), func(b *testing.B) {
			// The longest of a few games, so the number means something.
			var moves []gomoku.Point
			for seed := range uint64(8) {
				if m := recordGame(b, r, 15, seed); len(m) > len(moves) {
					moves = m
				}
			}
			for b.Loop() {
				g, _ := gomoku.NewGame(15, r)
				for _, m := range moves {
					if g.Check(m.X, m.Y) != games.Allowed || g.Play(m.X, m.Y) != games.Allowed {
						b.Fatalf("recorded move %v refused", m)
					}
				}
			}
			b.ReportMetric(float64(len(moves)), "moves/game")
		})
	}
}

// BenchmarkForbiddenRenju asks about every empty point of a crowded renju
// position for black.
func BenchmarkForbiddenRenju(b *testing.B) {
	board := busyRenju(b)
	var empty []gomoku.Point
	forbidden := 0
	for y := range board.Size() {
		for x := range board.Size() {
			if board.At(x, y) == gomoku.Empty {
				empty = append(empty, gomoku.Point{X: x, Y: y})
				if board.Forbidden(gomoku.Renju, gomoku.Black, x, y) {
					forbidden++
				}
			}
		}
	}
	for b.Loop() {
		for _, p := range empty {
			board.Forbidden(gomoku.Renju, gomoku.Black, p.X, p.Y)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(empty)), "ns/point")
	b.ReportMetric(float64(forbidden), "forbidden")
}

// busyRenju returns a renju position, black to move, with many black stones in
// open shapes and as many forbidden points as a few hundred tries find.
func busyRenju(tb testing.TB) *gomoku.Board {
	tb.Helper()
	var best *gomoku.Board
	most := -1
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 11))
		g, _ := gomoku.NewGame(15, gomoku.Renju)
		var allowed []gomoku.Point
		for len(g.Moves()) < 80 && !g.Over() {
			allowed = g.Allowed(allowed[:0])
			p := pick(rng, g.Board(), allowed)
			g.Play(p.X, p.Y)
		}
		if g.Over() || g.Turn() != gomoku.Black {
			continue
		}
		forbidden := 0
		b := g.Board()
		for y := range b.Size() {
			for x := range b.Size() {
				if b.Forbidden(gomoku.Renju, gomoku.Black, x, y) {
					forbidden++
				}
			}
		}
		if forbidden > most {
			best, most = b.Clone(), forbidden
		}
	}
	return best
}
