package gomoku_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/gomoku"
)

var allRules = []gomoku.Rule{gomoku.Seed, gomoku.Freestyle, gomoku.Standard, gomoku.Renju}

// randomPosition scatters stones over a patch of the board, dense enough for
// threes, fours and overlines to be common, black a little more often than
// white so that renju's black-only rules get exercised.
func randomPosition(tb testing.TB, rng *rand.Rand, size int) *gomoku.Board {
	tb.Helper()
	b, err := gomoku.NewBoard(size)
	if err != nil {
		tb.Fatal(err)
	}
	patch := min(size, 7+rng.IntN(5))
	ox, oy := rng.IntN(size-patch+1), rng.IntN(size-patch+1)
	n := patch * patch * (30 + rng.IntN(40)) / 100
	for range n {
		s := gomoku.Black
		if rng.IntN(5) < 2 {
			s = gomoku.White
		}
		b.Put(s, ox+rng.IntN(patch), oy+rng.IntN(patch))
	}
	return b
}

// TestAgainstReference compares Check and Wins with the reference on every
// point of random positions, for both colours and every rule.
func TestAgainstReference(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	positions := 300
	if testing.Short() {
		positions = 20
	}
	forbiddenSeen := map[string]int{}
	for i := range positions {
		size := []int{5, 9, 11, 15}[i%4]
		b := randomPosition(t, rng, size)
		for y := -1; y <= size; y++ {
			for x := -1; x <= size; x++ {
				p := gomoku.Point{X: x, Y: y}
				for _, r := range allRules {
					for _, s := range []games.Color{gomoku.Black, gomoku.White} {
						want := refCheck(b, r, s, p)
						if got := b.Check(r, s, x, y); got != want {
							t.Fatalf("position %d: Check(%v, %v, %d, %d) = %v, reference %v on\n%s", i, r, s, x, y, got, want, b)
						}
						if want == games.Forbidden {
							forbiddenSeen[fmt.Sprint(r, " ", s)]++
						}
						if want != games.Allowed {
							continue
						}
						if got, want := b.Wins(r, s, x, y), refWins(b, r, s, p); got != want {
							t.Fatalf("position %d: Wins(%v, %v, %d, %d) = %v, reference %v on\n%s", i, r, s, x, y, got, want, b)
						}
					}
				}
			}
		}
	}
	t.Logf("forbidden points seen: %v", forbiddenSeen)
	for _, k := range []string{"seed black", "seed white", "renju black"} {
		if forbiddenSeen[k] == 0 {
			t.Errorf("no forbidden point for %s in %d positions: the test proves nothing", k, positions)
		}
	}
}

// TestRandomGames plays random games (fixed seeds, every rule, sizes 6, 15 and
// 16) with Allowed and checks every step against the reference: nothing is
// placed on a stone, Play refuses what Check refuses and changes nothing then,
// the game ends exactly at the first winning five, and a game without one ends
// only when neither side has an allowed point.
func TestRandomGames(t *testing.T) {
	games := 32
	if testing.Short() {
		games = 4
	}
	for _, r := range allRules {
		t.Run(r.String(), func(t *testing.T) {
			t.Parallel()
			var wins, draws, passes int
			// 6x6 fills up often, which tries the draws and skipped turns.
			for _, size := range []int{6, 15, 16} {
				for seed := range games {
					rng := rand.New(rand.NewPCG(uint64(seed), uint64(size)<<8|uint64(r)))
					w, d, p := randomGame(t, rng, r, size)
					wins, draws, passes = wins+w, draws+d, passes+p
				}
			}
			t.Logf("%d games: %d won, %d drawn, %d turns skipped", 3*games, wins, draws, passes)
		})
	}
}

func randomGame(tb testing.TB, rng *rand.Rand, r gomoku.Rule, size int) (won, drawn, passes int) {
	tb.Helper()
	g, err := gomoku.NewGame(size, r)
	if err != nil {
		tb.Fatal(err)
	}
	b := g.Board()
	var allowed []gomoku.Point
	for !g.Over() {
		s := g.Turn()
		allowed = g.Allowed(allowed[:0])
		if len(allowed) == 0 {
			tb.Fatalf("%v %dx%d: game not over but %v has no allowed point after %v\n%s", r, size, size, s, g.Moves(), b)
		}
		// Every allowed point is empty; a few are checked with the reference,
		// and so are a few points anywhere (TestAgainstReference does all).
		for _, p := range allowed {
			if b.At(p.X, p.Y) != gomoku.Empty {
				tb.Fatalf("%v: Allowed holds occupied %v", r, p)
			}
		}
		for range 2 {
			p := allowed[rng.IntN(len(allowed))]
			if want := refCheck(b, r, s, p); want != games.Allowed {
				tb.Fatalf("%v: Allowed holds %v, reference %v for %v on\n%s", r, p, want, s, b)
			}
		}
		for range 3 {
			p := gomoku.Point{X: rng.IntN(size+2) - 1, Y: rng.IntN(size+2) - 1}
			want := refCheck(b, r, s, p)
			if got := g.Check(p.X, p.Y); got != want {
				tb.Fatalf("%v: Check(%d, %d) for %v = %v, reference %v on\n%s", r, p.X, p.Y, s, got, want, b)
			}
			if want != games.Allowed {
				refused(tb, g, p, want)
			}
		}

		p := pick(rng, b, allowed)
		moves := len(g.Moves())
		if v := g.Play(p.X, p.Y); v != games.Allowed {
			tb.Fatalf("%v: Play(%v) of an allowed point = %v", r, p, v)
		}
		if got := b.At(p.X, p.Y); got != s {
			tb.Fatalf("%v: after Play(%v) the point holds %v, want %v", r, p, got, s)
		}
		if got, want := len(g.Moves()), moves+1; got != want {
			tb.Fatalf("%v: %d moves recorded, want %d", r, got, want)
		}

		winner := refWinner(b, r)
		switch {
		case winner != gomoku.Empty:
			if !g.Over() || g.Winner() != winner {
				tb.Fatalf("%v: reference winner %v, game over %v winner %v after %v\n%s", r, winner, g.Over(), g.Winner(), g.Moves(), b)
			}
			checkFive(tb, g)
			won++
		case g.Over():
			if g.Winner() != gomoku.Empty || g.Five() != nil {
				tb.Fatalf("%v: no five on the board but winner %v, five %v\n%s", r, g.Winner(), g.Five(), b)
			}
			if !b.Full() {
				// Neither side may have an allowed point left.
				for _, side := range []games.Color{gomoku.Black, gomoku.White} {
					for y := range size {
						for x := range size {
							if refCheck(b, r, side, gomoku.Point{X: x, Y: y}) == games.Allowed {
								tb.Fatalf("%v: drawn with %v allowed for %v\n%s", r, gomoku.Point{X: x, Y: y}, side, b)
							}
						}
					}
				}
			}
			drawn++
		case g.Turn() == s:
			passes++
		}
	}
	if v := g.Play(0, 0); v != games.NotYourTurn {
		tb.Fatalf("%v: Play after the end = %v, want %v", r, v, games.NotYourTurn)
	}
	if got := g.Allowed(nil); got != nil {
		tb.Fatalf("%v: Allowed after the end = %v, want none", r, got)
	}
	return won, drawn, passes
}

// pick chooses a random allowed point, usually one near a stone, as players do,
// so that games make fives instead of filling the board.
func pick(rng *rand.Rand, b *gomoku.Board, allowed []gomoku.Point) gomoku.Point {
	if rng.IntN(10) < 9 {
		var near []gomoku.Point
		for _, p := range allowed {
			if hasNeighbour(b, p) {
				near = append(near, p)
			}
		}
		if len(near) > 0 {
			return near[rng.IntN(len(near))]
		}
	}
	return allowed[rng.IntN(len(allowed))]
}

func hasNeighbour(b *gomoku.Board, p gomoku.Point) bool {
	for dy := -1; dy <= 1; dy++ {
		for dx := -1; dx <= 1; dx++ {
			if b.At(p.X+dx, p.Y+dy) != gomoku.Empty {
				return true
			}
		}
	}
	return false
}

// refused checks that Play on p returns want and changes nothing.
func refused(tb testing.TB, g *gomoku.Game, p gomoku.Point, want games.Refusal) {
	tb.Helper()
	before, turn, moves := g.Board().String(), g.Turn(), len(g.Moves())
	if got := g.Play(p.X, p.Y); got != want {
		tb.Fatalf("Play(%d, %d) = %v, want %v", p.X, p.Y, got, want)
	}
	if g.Board().String() != before || g.Turn() != turn || len(g.Moves()) != moves || g.Over() {
		tb.Fatalf("refused Play(%d, %d) changed the game", p.X, p.Y)
	}
}

// checkFive checks that Five is a straight, unbroken line of the winner's stones
// through the last move, whole from end to end.
func checkFive(tb testing.TB, g *gomoku.Game) {
	tb.Helper()
	five, b, w := g.Five(), g.Board(), g.Winner()
	moves := g.Moves()
	last := moves[len(moves)-1]
	if len(five) < 5 {
		tb.Fatalf("Five() = %v, want five or more points", five)
	}
	dx, dy := five[1].X-five[0].X, five[1].Y-five[0].Y
	through := false
	for i, p := range five {
		if b.At(p.X, p.Y) != w {
			tb.Fatalf("Five() = %v: %v is not %v", five, p, w)
		}
		if i > 0 && (p.X-five[i-1].X != dx || p.Y-five[i-1].Y != dy) {
			tb.Fatalf("Five() = %v is not a line", five)
		}
		through = through || p == last
	}
	if !through {
		tb.Fatalf("Five() = %v does not hold the last move %v", five, last)
	}
	first, end := five[0], five[len(five)-1]
	if b.At(first.X-dx, first.Y-dy) == w || b.At(end.X+dx, end.Y+dy) == w {
		tb.Fatalf("Five() = %v is not the whole run", five)
	}
}
