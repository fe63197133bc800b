package gomoku_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/gomoku"
)

func TestParseRule(t *testing.T) {
	good := []struct {
		in   string
		want gomoku.Rule
	}{
		{"", gomoku.Seed},
		{"seed", gomoku.Seed},
		{"freestyle", gomoku.Freestyle},
		{"standard", gomoku.Standard},
		{"renju", gomoku.Renju},
	}
	for _, c := range good {
		got, err := gomoku.ParseRule(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseRule(%q) = %v, %v, want %v", c.in, got, err, c.want)
		}
		if c.in != "" && got.String() != c.in {
			t.Errorf("ParseRule(%q).String() = %q, want %q", c.in, got.String(), c.in)
		}
	}
	for _, in := range []string{"Renju", "gomoku", "three-three", " seed"} {
		_, err := gomoku.ParseRule(in)
		if err == nil {
			t.Errorf("ParseRule(%q) = nil error, want one", in)
			continue
		}
		msg := err.Error()
		for _, want := range []string{in, "seed", "freestyle", "standard", "renju"} {
			if !strings.Contains(msg, want) {
				t.Errorf("ParseRule(%q) error %q does not mention %q", in, msg, want)
			}
		}
	}
	if got, want := gomoku.Rule(9).String(), "Rule(9)"; got != want {
		t.Errorf("Rule(9).String() = %q, want %q", got, want)
	}
}

func TestNames(t *testing.T) {
	cases := []struct{ got, want string }{
		{gomoku.Black.String(), "black"},
		{gomoku.White.String(), "white"},
		{gomoku.Empty.String(), "none"}, // games.None
		{gomoku.Black.Opponent().String(), "white"},
		{gomoku.White.Opponent().String(), "black"},
		{games.Occupied.String(), "occupied"},
		{games.OffBoard.String(), "off_board"},
		{games.Forbidden.String(), "forbidden"},
		{games.NotYourTurn.String(), "out_of_turn"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestBoardSizes(t *testing.T) {
	for _, size := range []int{gomoku.MinSize, gomoku.DefaultSize, 16, gomoku.MaxSize} {
		b, err := gomoku.NewBoard(size)
		if err != nil {
			t.Errorf("NewBoard(%d): %v", size, err)
			continue
		}
		if b.Size() != size || b.Stones() != 0 || b.Full() {
			t.Errorf("NewBoard(%d): size %d, %d stones, full %v", size, b.Size(), b.Stones(), b.Full())
		}
		if got := b.Check(gomoku.Seed, gomoku.Black, size-1, size-1); got != games.Allowed {
			t.Errorf("NewBoard(%d): Check of the far corner = %v, want ok", size, got)
		}
		if got := b.Check(gomoku.Seed, gomoku.Black, size, 0); got != games.OffBoard {
			t.Errorf("NewBoard(%d): Check(%d, 0) = %v, want off board", size, size, got)
		}
		g, err := gomoku.NewGame(size, gomoku.Renju)
		if err != nil || g.Board().Size() != size {
			t.Errorf("NewGame(%d, renju) = %v", size, err)
		}
	}
	for _, size := range []int{-1, 0, 4, 26, 100} {
		if _, err := gomoku.NewBoard(size); err == nil {
			t.Errorf("NewBoard(%d) = nil error, want one", size)
		}
		if _, err := gomoku.NewGame(size, gomoku.Seed); err == nil {
			t.Errorf("NewGame(%d, seed) = nil error, want one", size)
		}
	}
	if _, err := gomoku.NewGame(15, gomoku.Rule(4)); err == nil {
		t.Errorf("NewGame(15, Rule(4)) = nil error, want one")
	}
}

func TestBoardPutCloneString(t *testing.T) {
	b, _ := gomoku.NewBoard(5)
	b.Put(gomoku.Black, 0, 0)
	b.Put(gomoku.White, 4, 1)
	b.Put(gomoku.White, 0, 0) // replaces, count unchanged
	c := b.Clone()
	c.Put(gomoku.Empty, 0, 0)
	c.Put(gomoku.Black, 2, 2)
	if got, want := b.String(), "O....\n....O\n.....\n.....\n.....\n"; got != want {
		t.Errorf("board = %q, want %q", got, want)
	}
	if got, want := c.String(), ".....\n....O\n..X..\n.....\n.....\n"; got != want {
		t.Errorf("clone = %q, want %q", got, want)
	}
	if b.Stones() != 2 || c.Stones() != 2 {
		t.Errorf("Stones() = %d and %d, want 2 and 2", b.Stones(), c.Stones())
	}
	if got := b.At(-1, 0); got != gomoku.Empty {
		t.Errorf("At(-1, 0) = %v, want empty", got)
	}
	for _, bad := range []func(){
		func() { b.Put(gomoku.Black, 5, 0) },
		func() { b.Put(gomoku.Black, 0, -1) },
		func() { b.Put(games.Color(3), 0, 0) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Put off the board or of a bad stone did not panic")
				}
			}()
			bad()
		}()
	}
}

func TestGameTurnsAndRefusals(t *testing.T) {
	g, _ := gomoku.NewGame(15, gomoku.Seed)
	if g.Turn() != gomoku.Black || g.Rule() != gomoku.Seed || g.Over() {
		t.Fatalf("new game: turn %v, rule %v, over %v", g.Turn(), g.Rule(), g.Over())
	}
	play(t, g, pts(7, 7, 8, 8)...)
	if g.Turn() != gomoku.Black {
		t.Errorf("after two moves Turn() = %v, want black", g.Turn())
	}
	for _, c := range []struct {
		x, y int
		want games.Refusal
	}{
		{7, 7, games.Occupied},
		{8, 8, games.Occupied},
		{15, 7, games.OffBoard},
		{-1, 7, games.OffBoard},
	} {
		refused(t, g, gomoku.Point{X: c.x, Y: c.y}, c.want)
	}
	// Black builds . X X ? . across and ? X X down around (9,5): a double-three.
	play(t, g, pts(7, 5, 0, 0, 8, 5, 0, 2, 9, 6, 0, 4, 9, 7, 14, 14)...)
	if got := g.Check(9, 5); got != games.Forbidden {
		t.Fatalf("Check(9, 5) = %v, want forbidden on\n%s", got, g.Board())
	}
	refused(t, g, gomoku.Point{X: 9, Y: 5}, games.Forbidden)
	if slices.Contains(g.Allowed(nil), gomoku.Point{X: 9, Y: 5}) {
		t.Errorf("Allowed holds the forbidden (9, 5)")
	}
	if got, want := g.Moves(), pts(7, 7, 8, 8, 7, 5, 0, 0, 8, 5, 0, 2, 9, 6, 0, 4, 9, 7, 14, 14); !slices.Equal(got, want) {
		t.Errorf("Moves() = %v, want %v", got, want)
	}
	// The record is a copy.
	g.Moves()[0] = gomoku.Point{}
	if g.Moves()[0] != (gomoku.Point{X: 7, Y: 7}) {
		t.Errorf("changing Moves() changed the game")
	}
}

func TestGameAllowedOrder(t *testing.T) {
	g, _ := gomoku.NewGame(5, gomoku.Freestyle)
	play(t, g, pts(1, 0, 0, 1)...)
	got := g.Allowed([]gomoku.Point{{X: 9, Y: 9}})
	if len(got) != 24 || got[0] != (gomoku.Point{X: 9, Y: 9}) {
		t.Fatalf("Allowed appended %d points after %v, want 23 after the given one", len(got)-1, got[:1])
	}
	want := append(pts(9, 9, 0, 0), pts(2, 0, 3, 0, 4, 0, 1, 1)...)
	if !slices.Equal(got[:6], want) {
		t.Errorf("Allowed starts %v, want %v (raster order)", got[:6], want)
	}
}

func TestGameFive(t *testing.T) {
	cases := []struct {
		name  string
		rule  gomoku.Rule
		moves []gomoku.Point
		five  []gomoku.Point
	}{
		{
			name:  "across",
			rule:  gomoku.Seed,
			moves: pts(3, 7, 0, 0, 4, 7, 0, 2, 6, 7, 0, 4, 7, 7, 0, 6, 5, 7),
			five:  pts(3, 7, 4, 7, 5, 7, 6, 7, 7, 7),
		},
		{
			name:  "up-right diagonal, from its lower end",
			rule:  gomoku.Renju,
			moves: pts(2, 10, 0, 0, 4, 8, 0, 2, 3, 9, 0, 4, 6, 6, 0, 6, 5, 7),
			five:  pts(2, 10, 3, 9, 4, 8, 5, 7, 6, 6),
		},
		{
			name:  "freestyle overline, all six",
			rule:  gomoku.Freestyle,
			moves: pts(0, 7, 0, 0, 1, 7, 2, 0, 2, 7, 4, 0, 4, 7, 6, 0, 5, 7, 8, 0, 3, 7),
			five:  pts(0, 7, 1, 7, 2, 7, 3, 7, 4, 7, 5, 7),
		},
		{
			name:  "white wins down",
			rule:  gomoku.Standard,
			moves: pts(0, 0, 9, 1, 2, 0, 9, 2, 4, 0, 9, 4, 6, 0, 9, 5, 8, 0, 9, 3),
			five:  pts(9, 1, 9, 2, 9, 3, 9, 4, 9, 5),
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, _ := gomoku.NewGame(15, c.rule)
			play(t, g, c.moves[:len(c.moves)-1]...)
			if g.Over() || g.Five() != nil {
				t.Fatalf("over %v, five %v before the last move", g.Over(), g.Five())
			}
			play(t, g, c.moves[len(c.moves)-1])
			winner := gomoku.Black
			if len(c.moves)%2 == 0 {
				winner = gomoku.White
			}
			if !g.Over() || g.Winner() != winner {
				t.Errorf("over %v, winner %v, want true, %v", g.Over(), g.Winner(), winner)
			}
			if got := g.Five(); !slices.Equal(got, c.five) {
				t.Errorf("Five() = %v, want %v", got, c.five)
			}
			if got := g.Check(14, 14); got != games.NotYourTurn {
				t.Errorf("Check after the end = %v, want %v", got, games.NotYourTurn)
			}
		})
	}
}

// Under standard and renju (for black) six in a row is not a win: the game goes on.
func TestGameOverlineGoesOn(t *testing.T) {
	for _, r := range []gomoku.Rule{gomoku.Standard, gomoku.Renju} {
		g, _ := gomoku.NewGame(15, r)
		// Black X X X . X X across row 7; in renju the gap is forbidden for
		// black, so only standard plays it.
		play(t, g, pts(0, 7, 0, 0, 1, 7, 2, 0, 2, 7, 4, 0, 4, 7, 6, 0, 5, 7, 8, 0)...)
		v := g.Play(3, 7)
		switch r {
		case gomoku.Standard:
			if v != games.Allowed || g.Over() || g.Five() != nil {
				t.Errorf("%v: overline gave %v, over %v, five %v; want ok and the game going on", r, v, g.Over(), g.Five())
			}
		case gomoku.Renju:
			if v != games.Forbidden || g.Over() {
				t.Errorf("%v: overline gave %v, over %v; want forbidden", r, v, g.Over())
			}
		}
	}
}

// A full board with no five is a draw.
func TestGameDrawOnFullBoard(t *testing.T) {
	final := []string{
		"XXOOX",
		"OOXXO",
		"XXOOX",
		"OOXXO",
		"XOXOX",
	}
	var black, white []gomoku.Point
	for y, row := range final {
		for x, c := range row {
			if c == 'X' {
				black = append(black, gomoku.Point{X: x, Y: y})
			} else {
				white = append(white, gomoku.Point{X: x, Y: y})
			}
		}
	}
	for _, r := range allRules {
		g, _ := gomoku.NewGame(5, r)
		for i := range white {
			play(t, g, black[i], white[i])
		}
		play(t, g, black[len(black)-1])
		if !g.Over() || g.Winner() != gomoku.Empty || g.Five() != nil || !g.Board().Full() {
			t.Errorf("%v: full board: over %v, winner %v, five %v, full %v; want a draw", r, g.Over(), g.Winner(), g.Five(), g.Board().Full())
		}
		if got := g.Board().String(); got != strings.Join(final, "\n")+"\n" {
			t.Errorf("%v: final board\n%s", r, got)
		}
	}
}

// When every empty point is forbidden for black, white moves again.
func TestGameRenjuBlackSkipped(t *testing.T) {
	// Before black's twelfth move (the three '.' are left):
	//	. X X X .
	//	X O X X O
	//	X X X O O
	//	X X O O O
	//	. O O O O
	// (0,0), (4,0) and (0,4) each make two fours for black: row 0, column 0 and
	// the up-right diagonal each hold three black stones and two of the points.
	black := pts(1, 0, 2, 0, 3, 0, 0, 1, 2, 1, 3, 1, 0, 2, 1, 2, 2, 2, 0, 3, 1, 3)
	white := pts(1, 1, 4, 1, 3, 2, 4, 2, 2, 3, 3, 3, 4, 3, 1, 4, 2, 4, 3, 4, 4, 4)
	g, _ := gomoku.NewGame(5, gomoku.Renju)
	for i := range black {
		play(t, g, black[i], white[i])
	}
	for _, p := range pts(0, 0, 4, 0, 0, 4) {
		if got := g.Board().Check(gomoku.Renju, gomoku.Black, p.X, p.Y); got != games.Forbidden {
			t.Errorf("black on %v: %v, want forbidden", p, got)
		}
	}
	if g.Over() || g.Turn() != gomoku.White {
		t.Fatalf("over %v, turn %v; want white to move again", g.Over(), g.Turn())
	}
	if got, want := g.Allowed(nil), pts(0, 0, 4, 0, 0, 4); !slices.Equal(got, want) {
		t.Errorf("white may play %v, want %v", got, want)
	}
	// White's stone on (0,0) breaks two of black's fours, so black moves again.
	play(t, g, gomoku.Point{X: 0, Y: 0})
	if g.Over() || g.Turn() != gomoku.Black {
		t.Fatalf("over %v, turn %v; want black to move", g.Over(), g.Turn())
	}
	play(t, g, gomoku.Point{X: 4, Y: 0})
	play(t, g, gomoku.Point{X: 0, Y: 4})
	if !g.Over() || g.Winner() != gomoku.White {
		t.Errorf("over %v, winner %v; want white's five along row 4", g.Over(), g.Winner())
	}
}
