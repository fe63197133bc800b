package othello_test

import (
	"math/rand/v2"
	"testing"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/othello"
)

func TestPerft(t *testing.T) {
	want := []uint64{1, 4, 12, 56, 244, 1396, 8200, 55092, 390216}
	for depth, w := range want {
		if testing.Short() && depth > 6 {
			break
		}
		if got := othello.Perft(othello.New(), depth); got != w {
			t.Errorf("Perft(start, %d) = %d, want %d", depth, got, w)
		}
	}
}

func TestStartPosition(t *testing.T) {
	b := othello.New()
	if got, want := b.At(3, 3), othello.White; got != want {
		t.Errorf("d4 = %v, want %v", got, want)
	}
	if got, want := b.At(4, 4), othello.White; got != want {
		t.Errorf("e5 = %v, want %v", got, want)
	}
	if got, want := b.At(4, 3), othello.Black; got != want {
		t.Errorf("e4 = %v, want %v", got, want)
	}
	if got, want := b.At(3, 4), othello.Black; got != want {
		t.Errorf("d5 = %v, want %v", got, want)
	}
	var names []string
	for _, s := range othello.Squares(b.Legal()) {
		names = append(names, s.String())
	}
	// Squares come in index order y*8+x: d3 (3,2), c4 (2,3), f5 (5,4), e6 (4,5).
	if got, want := names, []string{"d3", "c4", "f5", "e6"}; !equal(got, want) {
		t.Errorf("legal first moves = %v, want %v", got, want)
	}
	if b.Turn() != othello.Black {
		t.Errorf("first to move = %v, want black", b.Turn())
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestPlayErrors(t *testing.T) {
	tests := []struct {
		name string
		sq   othello.Square
		want error
	}{
		{"occupied", othello.At(3, 3), othello.ErrOccupied},
		{"flips nothing", othello.At(0, 0), othello.ErrNoFlip},
		{"off board", othello.Square(70), othello.ErrOffBoard},
		{"pass with moves", othello.Pass, othello.ErrPassNotAllowed},
	}
	for _, tt := range tests {
		b := othello.New()
		before := b
		if _, err := b.Play(tt.sq); err != tt.want {
			t.Errorf("%s: Play(%v) error = %v, want %v", tt.name, tt.sq, err, tt.want)
		}
		if b != before {
			t.Errorf("%s: board changed by a refused move", tt.name)
		}
	}
}

func TestPlayFlips(t *testing.T) {
	b := othello.New()
	f, err := b.Play(othello.At(3, 2)) // d3 flips d4
	if err != nil {
		t.Fatal(err)
	}
	if got, want := othello.Squares(f), []othello.Square{othello.At(3, 3)}; len(got) != 1 || got[0] != want[0] {
		t.Errorf("d3 flipped %v, want %v", got, want)
	}
	if nb, nw := b.Count(); nb != 4 || nw != 1 {
		t.Errorf("after d3 count = %d-%d, want 4-1", nb, nw)
	}
	if b.Turn() != othello.White {
		t.Errorf("after d3 turn = %v, want white", b.Turn())
	}
}

// Wiping out a colour ends the game; a side without a placement passes only while
// the other side can still move.
func TestForcedPass(t *testing.T) {
	// Black a1, white b1: black c1 flips b1 and white has no stone left.
	b := othello.FromBitboards(uint64(1)<<othello.At(0, 0), uint64(1)<<othello.At(1, 0), othello.Black)
	if _, err := b.Play(othello.At(2, 0)); err != nil {
		t.Fatal(err)
	}
	if !b.Over() {
		t.Errorf("white wiped out: Over() = false, want true")
	}
	// Black a1 a2, white b2 c3, white to move: white brackets nothing (black is on
	// the edge), black can play d4 along the a1-d4 diagonal.
	b = othello.FromBitboards(uint64(1)<<othello.At(0, 0)|uint64(1)<<othello.At(0, 1), uint64(1)<<othello.At(1, 1)|uint64(1)<<othello.At(2, 2), othello.White)
	if b.Legal() != 0 {
		t.Fatalf("white should have no move, has %v", othello.Squares(b.Legal()))
	}
	if !b.MustPass() {
		t.Fatalf("MustPass() = false, want true (black can play %v)", othello.Squares(b.OpponentLegal()))
	}
	if _, err := b.Play(othello.Pass); err != nil {
		t.Fatalf("forced pass refused: %v", err)
	}
	if b.Turn() != othello.Black {
		t.Errorf("after pass turn = %v, want black", b.Turn())
	}
}

func TestNotation(t *testing.T) {
	for s := othello.Square(0); s < 64; s++ {
		got, err := othello.ParseSquare(s.String())
		if err != nil || got != s {
			t.Errorf("ParseSquare(%q) = %v, %v; want %v", s.String(), got, err, s)
		}
	}
	if s, err := othello.ParseSquare("F5"); err != nil || s != othello.At(5, 4) {
		t.Errorf("ParseSquare(F5) = %v, %v; want f5", s, err)
	}
	if s, err := othello.ParseSquare("PASS"); err != nil || s != othello.Pass {
		t.Errorf("ParseSquare(PASS) = %v, %v", s, err)
	}
	for _, bad := range []string{"", "i1", "a9", "a0", "aa", "f55", "pas"} {
		if _, err := othello.ParseSquare(bad); err == nil {
			t.Errorf("ParseSquare(%q) accepted", bad)
		}
	}
}

func TestCellsColumnMajor(t *testing.T) {
	b := othello.New()
	cells := b.Cells(othello.ColumnMajor)
	// index 8*x+y: d4 = (3,3) -> 27 white; e4 = (4,3) -> 35 black; d5 = (3,4) -> 28 black; e5 -> 36 white.
	want := map[int]games.Color{27: othello.White, 35: othello.Black, 28: othello.Black, 36: othello.White}
	for i, c := range cells {
		if c != want[i] {
			t.Errorf("cell %d = %v, want %v", i, c, want[i])
		}
	}
	// After d3 (3,2), index 8*3+2 = 26 is black.
	if _, err := b.Play(othello.At(3, 2)); err != nil {
		t.Fatal(err)
	}
	if got := b.Cells(othello.ColumnMajor)[26]; got != othello.Black {
		t.Errorf("after d3 column-major cell 26 = %v, want black", got)
	}
	if got := b.Cells(othello.RowMajor)[8*2+3]; got != othello.Black {
		t.Errorf("after d3 row-major cell 19 = %v, want black", got)
	}
	for _, o := range []othello.Order{othello.ColumnMajor, othello.RowMajor} {
		r := othello.FromCells(b.Cells(o), o, b.Turn())
		if r != b {
			t.Errorf("FromCells(Cells(%v)) differs from the board", o)
		}
	}
}

// Random games: the flips Play reports are exactly the stones that change colour,
// stone counts add up, and passes happen only when forced.
func TestRandomGames(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for g := 0; g < 300; g++ {
		b := othello.New()
		for ply := 0; !b.Over(); ply++ {
			if ply > 200 {
				t.Fatal("game did not end in 200 plies")
			}
			legal := othello.Squares(b.Legal())
			if len(legal) == 0 {
				if _, err := b.Play(othello.Pass); err != nil {
					t.Fatalf("forced pass refused: %v", err)
				}
				continue
			}
			s := legal[rng.IntN(len(legal))]
			nb0, nw0 := b.Count()
			mover := b.Turn()
			f, err := b.Play(s)
			if err != nil {
				t.Fatalf("legal move %v refused: %v", s, err)
			}
			nb, nw := b.Count()
			n := len(othello.Squares(f))
			if mover == othello.Black && (nb != nb0+n+1 || nw != nw0-n) {
				t.Fatalf("black %v flipping %d: %d-%d -> %d-%d", s, n, nb0, nw0, nb, nw)
			}
			if mover == othello.White && (nw != nw0+n+1 || nb != nb0-n) {
				t.Fatalf("white %v flipping %d: %d-%d -> %d-%d", s, n, nb0, nw0, nb, nw)
			}
			for _, q := range othello.Squares(f) {
				if b.At(q.X(), q.Y()) != mover {
					t.Fatalf("flipped %v is not %v", q, mover)
				}
			}
		}
	}
}

func BenchmarkLegal(b *testing.B) {
	pos := midgame()
	var sink uint64
	for b.Loop() {
		sink += pos.Legal()
	}
	_ = sink
}

func BenchmarkPlay(b *testing.B) {
	pos := midgame()
	legal := othello.Squares(pos.Legal())
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		c := pos
		if _, err := c.Play(legal[i%len(legal)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPerft6(b *testing.B) {
	for b.Loop() {
		othello.Perft(othello.New(), 6)
	}
}

func midgame() othello.Board {
	rng := rand.New(rand.NewPCG(7, 7))
	b := othello.New()
	for range 20 {
		legal := othello.Squares(b.Legal())
		if len(legal) == 0 {
			break
		}
		if _, err := b.Play(legal[rng.IntN(len(legal))]); err != nil {
			panic(err)
		}
	}
	return b
}
