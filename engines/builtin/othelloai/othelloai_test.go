package othelloai_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines/builtin/othelloai"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/othello"
)

// randomPositions returns n positions reached by random play from the start,
// stopping at a random ply, so they cover openings, forced passes and
// finished games.
func randomPositions(tb testing.TB, seed uint64, n int) []othello.Board {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([]othello.Board, 0, n)
	for len(out) < n {
		b := othello.New()
		plies := rng.IntN(64)
		for range plies {
			if b.Over() {
				break
			}
			play(tb, &b, othelloai.Random(&b, rng))
		}
		out = append(out, b)
	}
	return out
}

// play makes move s on b and fails the test if it is illegal.
func play(tb testing.TB, b *othello.Board, s othello.Square) {
	tb.Helper()
	before := *b
	if _, err := b.Play(s); err != nil {
		tb.Fatalf("%s plays %v: %v\n%s", before.Turn(), s, err, show(&before))
	}
}

// show draws b for failure messages, with the side to move and its moves.
func show(b *othello.Board) string {
	out := make([]byte, 0, 200)
	legal := b.Legal()
	for y := range 8 {
		for x := range 8 {
			c := byte('.')
			switch {
			case b.At(x, y) == othello.Black:
				c = 'X'
			case b.At(x, y) == othello.White:
				c = 'O'
			case legal&(1<<uint(y*8+x)) != 0:
				c = '*'
			}
			out = append(out, c)
		}
		out = append(out, '\n')
	}
	black, white := b.Bitboards()
	return string(out) + b.Turn().String() + " to move (X black, O white, * legal); " +
		"FromBitboards(" + hex(black) + ", " + hex(white) + ")"
}

func hex(x uint64) string {
	const digits = "0123456789abcdef"
	buf := []byte("0x0000000000000000")
	for i := 17; i >= 2; i-- {
		buf[i] = digits[x&15]
		x >>= 4
	}
	return string(buf)
}

// checkMove fails unless s is legal on b, or is Pass exactly when b has no
// legal move.
func checkMove(tb testing.TB, name string, b *othello.Board, s othello.Square) {
	tb.Helper()
	legal := b.Legal()
	switch {
	case legal == 0 && s != othello.Pass:
		tb.Errorf("%s = %v, want pass\n%s", name, s, show(b))
	case legal != 0 && (s == othello.Pass || s < 0 || s > 63 || legal&(1<<uint(s)) == 0):
		tb.Errorf("%s = %v, want one of %v\n%s", name, s, othello.Squares(legal), show(b))
	}
}

func TestMoveGeneratorMatchesRules(t *testing.T) {
	for _, b := range randomPositions(t, 1, 2000) {
		black, white := b.Bitboards()
		p, o := black, white
		if b.Turn() != othello.Black {
			p, o = o, p
		}
		if got, want := othelloai.Moves(p, o), b.Legal(); got != want {
			t.Fatalf("Moves = %v, want %v\n%s", othello.Squares(got), othello.Squares(want), show(&b))
		}
		for s := othello.Square(0); s < 64; s++ {
			if (p|o)&(1<<uint(s)) != 0 {
				continue
			}
			if got, want := othelloai.Flips(p, o, int(s)), b.Flips(s); got != want {
				t.Fatalf("Flips(%v) = %v, want %v\n%s", s, othello.Squares(got), othello.Squares(want), show(&b))
			}
		}
	}
}

func TestAlwaysLegal(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	positions := randomPositions(t, 2, 400)
	for i, b := range positions {
		checkMove(t, "Random", &b, othelloai.Random(&b, rng))
		checkMove(t, "Greedy", &b, othelloai.Greedy(&b, rng))
		if i%5 == 0 {
			checkMove(t, "AlphaBeta", &b, othelloai.AlphaBeta(&b, time.Now().Add(4*time.Millisecond), rng))
		}
	}
	// A deadline already past still gets a legal move.
	b := positions[len(positions)/2]
	checkMove(t, "AlphaBeta(past deadline)", &b, othelloai.AlphaBeta(&b, time.Now().Add(-time.Second), rng))
}

func TestNilRNG(t *testing.T) {
	b := othello.New()
	checkMove(t, "Random(nil rng)", &b, othelloai.Random(&b, nil))
	checkMove(t, "Greedy(nil rng)", &b, othelloai.Greedy(&b, nil))
	checkMove(t, "AlphaBeta(nil rng)", &b, othelloai.AlphaBeta(&b, time.Now().Add(4*time.Millisecond), nil))
}

// seedValue is the seed client's OthelloValue table, kept here as an
// independent copy so a typo in the package's table fails the tests.
var seedValue = [8][8]int{
	{2500, 767, 607, 642, 642, 607, 767, 2500},
	{767, 344, 284, 103, 103, 284, 344, 767},
	{607, 284, 114, 182, 182, 114, 284, 607},
	{642, 103, 182, 202, 202, 182, 103, 642},
	{642, 103, 182, 202, 202, 182, 103, 642},
	{607, 284, 114, 182, 182, 114, 284, 607},
	{767, 344, 284, 103, 103, 284, 344, 767},
	{2500, 767, 607, 642, 642, 607, 767, 2500},
}

func TestGreedyWeights(t *testing.T) {
	for x := range 8 {
		for y := range 8 {
			if seedValue[x][y] != seedValue[y][x] {
				t.Fatalf("seed table not symmetric at [%d][%d]", x, y)
			}
			s := othello.At(x, y)
			if got, want := othelloai.Weight(s), seedValue[x][y]; got != want {
				t.Errorf("weight of %v = %d, want %d", s, got, want)
			}
		}
	}
}

func TestGreedyPicksHighestWeight(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, b := range randomPositions(t, 3, 500) {
		got := othelloai.Greedy(&b, rng)
		checkMove(t, "Greedy", &b, got)
		if got == othello.Pass {
			continue
		}
		want := 0
		for _, s := range othello.Squares(b.Legal()) {
			want = max(want, seedValue[s.X()][s.Y()])
		}
		if w := seedValue[got.X()][got.Y()]; w != want {
			t.Errorf("Greedy = %v weighing %d, want a move weighing %d\n%s", got, w, want, show(&b))
		}
	}
}

func TestGreedyTakesCorner(t *testing.T) {
	// Black a1 corner reachable along the diagonal: white b2, black c3; plus
	// an ordinary centre move.
	b := othello.FromBitboards(
		1<<othello.At(2, 2)|1<<othello.At(4, 3)|1<<othello.At(3, 4),
		1<<othello.At(1, 1)|1<<othello.At(3, 3)|1<<othello.At(4, 4),
		othello.Black)
	if b.Legal()&(1<<othello.At(0, 0)) == 0 {
		t.Fatalf("test position: a1 should be legal\n%s", show(&b))
	}
	rng := rand.New(rand.NewPCG(4, 4))
	if got, want := othelloai.Greedy(&b, rng), othello.At(0, 0); got != want {
		t.Errorf("Greedy = %v, want %v\n%s", got, want, show(&b))
	}

	const cornerMask = 0x8100000000000081
	n := 0
	for _, b := range randomPositions(t, 4, 3000) {
		if b.Legal()&cornerMask == 0 {
			continue
		}
		n++
		if got := othelloai.Greedy(&b, rng); (1<<uint(got))&uint64(cornerMask) == 0 || got == othello.Pass {
			t.Errorf("Greedy = %v, want a corner of %v\n%s", got, othello.Squares(b.Legal()&cornerMask), show(&b))
		}
	}
	if n < 20 {
		t.Errorf("only %d random positions with a legal corner, want at least 20", n)
	}
}

// The seed client started its search at value 155, so when every legal move
// weighed 155 or less it sent "PUT 0 0", an illegal move.
func TestGreedyLowWeightMoves(t *testing.T) {
	tests := []struct {
		name         string
		black, white []othello.Square
		turn         games.Color
	}{
		// Found by enumerating small positions: every legal move is a
		// 103 or 114 square, so the seed would have sent PUT 0 0.
		{"c3 only", []othello.Square{othello.At(4, 4)}, []othello.Square{othello.At(3, 3)}, othello.Black},
		{"e2 g4 g5", []othello.Square{othello.At(3, 1), othello.At(4, 3)}, []othello.Square{othello.At(4, 2), othello.At(5, 3)}, othello.Black},
		{"d2 e2 b4", []othello.Square{othello.At(3, 3), othello.At(1, 4)}, []othello.Square{othello.At(3, 2), othello.At(2, 3)}, othello.Black},
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for _, tt := range tests {
		var black, white uint64
		for _, s := range tt.black {
			black |= 1 << uint(s)
		}
		for _, s := range tt.white {
			white |= 1 << uint(s)
		}
		b := othello.FromBitboards(black, white, tt.turn)
		legal := b.Legal()
		if legal == 0 {
			t.Fatalf("%s: test position has no legal move\n%s", tt.name, show(&b))
		}
		for _, s := range othello.Squares(legal) {
			if w := seedValue[s.X()][s.Y()]; w > 155 {
				t.Fatalf("%s: test position has %v weighing %d, want every move ≤ 155\n%s", tt.name, s, w, show(&b))
			}
		}
		top, ties := 0, uint64(0)
		for _, s := range othello.Squares(legal) {
			switch w := seedValue[s.X()][s.Y()]; {
			case w > top:
				top, ties = w, 1<<uint(s)
			case w == top:
				ties |= 1 << uint(s)
			}
		}
		seen := uint64(0)
		for range 60 {
			got := othelloai.Greedy(&b, rng)
			checkMove(t, tt.name+": Greedy", &b, got)
			if got == othello.At(0, 0) {
				t.Fatalf("%s: Greedy = a1, the seed's PUT 0 0\n%s", tt.name, show(&b))
			}
			if got != othello.Pass {
				seen |= 1 << uint(got)
			}
		}
		// Ties are drawn at random, so over 60 tries each should come up.
		if seen != ties {
			t.Errorf("%s: Greedy chose %v over 60 tries, want exactly the top-weight moves %v", tt.name, othello.Squares(seen), othello.Squares(ties))
		}
	}
}
