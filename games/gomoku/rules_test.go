package gomoku_test

import (
	"testing"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/gomoku"
)

// Shapes for the rule tables, drawn for black ('X') playing '?'. Each is centred
// on an empty 15x15 board unless its rows start with '|' (the left edge). The
// comments say what '?' makes by the definitions of PROTOCOLS.md §3.

// Two open threes: horizontal . X X ? . and vertical ? X X.
const doubleThree = `
	. . . . . . . . .
	. . . . . . . . .
	. . . . . . . . .
	. . X X ? . . . .
	. . . . X . . . .
	. . . . X . . . .
	. . . . . . . . .
	. . . . . . . . .
	. . . . . . . . .`

// doubleThree with the horizontal three blocked next to it by a white stone:
// O X X ? . can only become a four with one open end.
const threeBlockedByStone = `
	. . . . . . . . .
	. . . . . . . . .
	. . . . . . . . .
	. O X X ? . . . .
	. . . . X . . . .
	. . . . X . . . .
	. . . . . . . . .
	. . . . . . . . .
	. . . . . . . . .`

// doubleThree with the horizontal three against the left edge.
const threeBlockedByEdge = `
	| . . . . . . .
	| . . . . . . .
	| . . . . . . .
	| X X ? . . . .
	| . . X . . . .
	| . . X . . . .
	| . . . . . . .`

// One empty point between the three and the edge is enough: . X X X X . fits.
const threeOneFromEdge = `
	| . . . . . . .
	| . . . . . . .
	| . . . . . . .
	| . X X ? . . .
	| . . . X . . .
	| . . . X . . .
	| . . . . . . .`

// A four (O X X X ? .) and an open three.
const fourThree = `
	. . . . . . . . .
	. . . . . . . . .
	. . . . . . . . .
	. O X X X ? . . .
	. . . . . X . . .
	. . . . . X . . .
	. . . . . . . . .
	. . . . . . . . .
	. . . . . . . . .`

// A split three (X X . ?) and an open three.
const splitThree = `
	. . . . . . . . .
	. . . . . . . . .
	. . . . . . . . .
	. X X . ? . . . .
	. . . . X . . . .
	. . . . X . . . .
	. . . . . . . . .
	. . . . . . . . .
	. . . . . . . . .`

// A split three with the gap beside the point (X ? . X) and an open three.
const splitThreeGapBeside = `
	. . . . . . . . .
	. . . . . . . . .
	. . . . . . . . .
	. . X ? . X . . .
	. . . X . . . . .
	. . . X . . . . .
	. . . . . . . . .
	. . . . . . . . .
	. . . . . . . . .`

// Open threes on both diagonals.
const diagonalDoubleThree = `
	. . . . . . . . .
	. . . . . . . . .
	. . X . . . X . .
	. . . X . X . . .
	. . . . ? . . . .
	. . . . . . . . .
	. . . . . . . . .
	. . . . . . . . .
	. . . . . . . . .`

// A single open three.
const singleThree = `
	. . . . . . . . .
	. . . . . . . . .
	. . . . . . . . .
	. . X X ? . . . .
	. . . . . . . . .`

// Two fours on one line: X . X ? X . X, each gap makes a five.
const doubleFourOneLine = `
	. . . . . . . . .
	. . . . . . . . .
	. . . . . . . . .
	. X . X ? X . X .
	. . . . . . . . .`

// Two fours on one line again: X X . ? X . X X.
const doubleFourOneLineWide = `
	. . . . . . . . . .
	. . . . . . . . . .
	. X X . ? X . X X .
	. . . . . . . . . .`

// A four across and a four down, each closed at one end.
const doubleFourTwoLines = `
	. . . . . . . . .
	. . . . . O . . .
	. . . . . X . . .
	. . . . . X . . .
	. . . . . X . . .
	. O X X X ? . . .
	. . . . . . . . .
	. . . . . . . . .
	. . . . . . . . .`

// Six in a row.
const overline = `
	. . . . . . . . .
	. . . . . . . . .
	. . . . . . . . .
	. X X X ? X X . .
	. . . . . . . . .`

// Exactly five.
const five = `
	. . . . . . . . .
	. . . . . . . . .
	. . . . . . . . .
	. X X X X ? . . .
	. . . . . . . . .`

// Exactly five across, and open threes down and down-right.
const fiveAndDoubleThree = `
	. . . . . . . . .
	. . . . . . . . .
	. . . . . . . . .
	X X X X ? . . . .
	. . . . X X . . .
	. . . . X . X . .
	. . . . . . . . .
	. . . . . . . . .
	. . . . . . . . .`

// Exactly five across, and six down.
const fiveAndOverline = `
	. . . . . . . . .
	. . . . X . . . .
	. . . . X . . . .
	X X X X ? . . . .
	. . . . X . . . .
	. . . . X . . . .
	. . . . X . . . .
	. . . . . . . . .
	. . . . . . . . .`

// Exactly five across, and fours down and down-right (a double-four besides).
const fiveAndFours = `
	. . . . . . . . .
	. . . . . . . . .
	. . . . . . . . .
	X X X X ? . . . .
	. . . . X X . . .
	. . . . X . X . .
	. . . . X . . X .
	. . . . O . . . O`

// Renju's false three across: O . X X ? . . X can become a straight four only
// at the point right of '?', and that four's right end makes six. With the open
// three down it is a double-three only where an overline counts as a five.
const falseThreeOverline = `
	. . . . . . . . .
	. . . . . . . . .
	. . . . . . . . .
	O . X X ? . . X .
	. . . . X . . . .
	. . . . X . . . .
	. . . . . . . . .
	. . . . . . . . .
	. . . . . . . . .`

// The three across (O . X X ? q) becomes a straight four only at q, the point
// right of '?'; once '?' stands, q also makes a four down (O X X X q .), so q is
// a double-four for black and the three across is not a renju three. The three
// down (? X X) is real.
const threeFourPointDoubleFour = `
	. . . . . O . . .
	. . . . . X . . .
	. . . . . X . . .
	. . . . . X . . .
	O . X X ? . . . .
	. . . . X . . . .
	. . . . X . . . .
	. . . . . . . . .
	. . . . . . . . .`

// As above, but q (right of '?') is a double-three once '?' stands: a straight
// four across and open threes down (q X X) and down-right (q X X), both real.
// The three down from '?' is real.
const threeFourPointDoubleThree = `
	. . . . . . . . .
	. . . . . . . . .
	. . . . . . . . .
	. . . . . . . . .
	O . X X ? . . . .
	. . . . X X X . .
	. . . . X X . X .
	. . . . . . . . .
	. . . . . . . . .`

// The three across (. . X X ? . .) has two straight-four points. The left one
// makes six down and is forbidden for black; the right one is not, so the three
// stays a three, and with the three down it is a double-three.
const threeOneFourPointForbidden = `
	. . . . . . . . .
	. X . . . . . . .
	. X . . . . . . .
	. X . . . . . . .
	. . X X ? . . . .
	. X . . X . . . .
	. X . . X . . . .
	. . . . . . . . .
	. . . . . . . . .`

// A point with nothing around it.
const alone = `
	. . .
	. ? .
	. . .`

type ruleCase struct {
	name    string
	diagram string
	side    games.Color
	want    games.Refusal
	wins    bool
}

// checkRule asks Check, Forbidden and Wins about the '?' of every case.
func checkRule(t *testing.T, r gomoku.Rule, cases []ruleCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name+"/"+c.side.String(), func(t *testing.T) {
			b, q := position(t, c.diagram)
			if got := b.Check(r, c.side, q.X, q.Y); got != c.want {
				t.Errorf("Check(%v, %v, %d, %d) = %v, want %v on\n%s", r, c.side, q.X, q.Y, got, c.want, b)
			}
			if got, want := b.Forbidden(r, c.side, q.X, q.Y), c.want == games.Forbidden; got != want {
				t.Errorf("Forbidden(%v, %v, %d, %d) = %v, want %v on\n%s", r, c.side, q.X, q.Y, got, want, b)
			}
			if got := b.Wins(r, c.side, q.X, q.Y); got != c.wins {
				t.Errorf("Wins(%v, %v, %d, %d) = %v, want %v on\n%s", r, c.side, q.X, q.Y, got, c.wins, b)
			}
		})
	}
}

// symmetric adds each case again with the colours exchanged, for the rules that
// treat both sides alike.
func symmetric(cases []ruleCase) []ruleCase {
	out := append([]ruleCase(nil), cases...)
	for _, c := range cases {
		c.diagram = swapColours(c.diagram)
		c.side = c.side.Opponent()
		out = append(out, c)
	}
	return out
}

const (
	ok        = games.Allowed
	forbidden = games.Forbidden
	black     = gomoku.Black
	white     = gomoku.White
)

func TestSeedRule(t *testing.T) {
	checkRule(t, gomoku.Seed, symmetric([]ruleCase{
		{"nothing around", alone, black, ok, false},
		{"single three", singleThree, black, ok, false},
		{"double-three", doubleThree, black, forbidden, false},
		{"double-three on the diagonals", diagonalDoubleThree, black, forbidden, false},
		{"three blocked by a stone", threeBlockedByStone, black, ok, false},
		{"three blocked by the edge", threeBlockedByEdge, black, ok, false},
		{"three one point from the edge", threeOneFromEdge, black, forbidden, false},
		{"four-three", fourThree, black, ok, false},
		{"split three", splitThree, black, forbidden, false},
		{"split three, gap beside", splitThreeGapBeside, black, forbidden, false},
		{"double-four on one line", doubleFourOneLine, black, ok, false},
		{"double-four on two lines", doubleFourTwoLines, black, ok, false},
		{"five", five, black, ok, true},
		{"overline wins", overline, black, ok, true},
		{"five and double-three", fiveAndDoubleThree, black, ok, true},
		{"five and overline", fiveAndOverline, black, ok, true},
		// Six counts as a five here, so O . X X X X . X is a straight four.
		{"overline four is a three", falseThreeOverline, black, forbidden, false},
		// The seed server knew no RIF refinement: a three is a three.
		{"three whose four point is a double-four", threeFourPointDoubleFour, black, forbidden, false},
		{"three whose four point is a double-three", threeFourPointDoubleThree, black, forbidden, false},
		{"three with one four point forbidden", threeOneFourPointForbidden, black, forbidden, false},
	}))
}

func TestFreestyleRule(t *testing.T) {
	checkRule(t, gomoku.Freestyle, symmetric([]ruleCase{
		{"nothing around", alone, black, ok, false},
		{"double-three", doubleThree, black, ok, false},
		{"double-three on the diagonals", diagonalDoubleThree, black, ok, false},
		{"split three", splitThree, black, ok, false},
		{"four-three", fourThree, black, ok, false},
		{"double-four on one line", doubleFourOneLine, black, ok, false},
		{"double-four on two lines", doubleFourTwoLines, black, ok, false},
		{"five", five, black, ok, true},
		{"overline wins", overline, black, ok, true},
		{"five and double-three", fiveAndDoubleThree, black, ok, true},
		{"five and overline", fiveAndOverline, black, ok, true},
		{"overline four three", falseThreeOverline, black, ok, false},
	}))
}

func TestStandardRule(t *testing.T) {
	checkRule(t, gomoku.Standard, symmetric([]ruleCase{
		{"nothing around", alone, black, ok, false},
		{"double-three", doubleThree, black, ok, false},
		{"split three", splitThree, black, ok, false},
		{"four-three", fourThree, black, ok, false},
		{"double-four on one line", doubleFourOneLine, black, ok, false},
		{"double-four on two lines", doubleFourTwoLines, black, ok, false},
		{"five", five, black, ok, true},
		{"overline neither wins nor is forbidden", overline, black, ok, false},
		{"five and double-three", fiveAndDoubleThree, black, ok, true},
		// The five across wins; the six down does not matter.
		{"five and overline", fiveAndOverline, black, ok, true},
		{"five and fours", fiveAndFours, black, ok, true},
	}))
}

func TestRenjuRule(t *testing.T) {
	checkRule(t, gomoku.Renju, []ruleCase{
		{"nothing around", alone, black, ok, false},
		{"single three", singleThree, black, ok, false},
		{"double-three", doubleThree, black, forbidden, false},
		{"double-three", swapColours(doubleThree), white, ok, false},
		{"double-three on the diagonals", diagonalDoubleThree, black, forbidden, false},
		{"three blocked by a stone", threeBlockedByStone, black, ok, false},
		{"three blocked by the edge", threeBlockedByEdge, black, ok, false},
		{"three one point from the edge", threeOneFromEdge, black, forbidden, false},
		{"four-three", fourThree, black, ok, false},
		{"split three", splitThree, black, forbidden, false},
		{"split three, gap beside", splitThreeGapBeside, black, forbidden, false},
		{"split three", swapColours(splitThree), white, ok, false},
		{"double-four on one line", doubleFourOneLine, black, forbidden, false},
		{"double-four on one line, wide", doubleFourOneLineWide, black, forbidden, false},
		{"double-four on one line", swapColours(doubleFourOneLine), white, ok, false},
		{"double-four on two lines", doubleFourTwoLines, black, forbidden, false},
		{"double-four on two lines", swapColours(doubleFourTwoLines), white, ok, false},
		{"five", five, black, ok, true},
		{"five", swapColours(five), white, ok, true},
		{"overline", overline, black, forbidden, false},
		{"overline", swapColours(overline), white, ok, true},
		{"five and double-three", fiveAndDoubleThree, black, ok, true},
		{"five and overline", fiveAndOverline, black, ok, true},
		{"five and fours", fiveAndFours, black, ok, true},
		{"false three, four would be six", falseThreeOverline, black, ok, false},
		{"three whose four point is a double-four", threeFourPointDoubleFour, black, ok, false},
		{"three whose four point is a double-three", threeFourPointDoubleThree, black, ok, false},
		{"three with one four point forbidden", threeOneFourPointForbidden, black, forbidden, false},
		{"three whose four point is a double-three", swapColours(threeFourPointDoubleThree), white, ok, false},
	})
}

// The points the renju cases rest on: the straight-four points of the false
// threes really are forbidden, and the others really are not.
func TestRenjuFourPoints(t *testing.T) {
	cases := []struct {
		name    string
		diagram string
		dx, dy  int // from '?' to the point asked about, with '?' played
		want    bool
		foul    gomoku.Foul // the pattern named to a person
	}{
		{"double-four point", threeFourPointDoubleFour, 1, 0, true, gomoku.DoubleFour},
		{"double-three point", threeFourPointDoubleThree, 1, 0, true, gomoku.DoubleThree},
		{"overline point", threeOneFourPointForbidden, -3, 0, true, gomoku.Overline},
		{"other four point", threeOneFourPointForbidden, 1, 0, false, gomoku.NoFoul},
		{"three down, upper four point", threeFourPointDoubleFour, 0, -1, false, gomoku.NoFoul},
		{"three down, lower four point", threeFourPointDoubleThree, 0, 3, false, gomoku.NoFoul},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, q := position(t, c.diagram)
			b.Put(gomoku.Black, q.X, q.Y)
			x, y := q.X+c.dx, q.Y+c.dy
			if got := b.Forbidden(gomoku.Renju, gomoku.Black, x, y); got != c.want {
				t.Errorf("Forbidden(renju, black, %d, %d) = %v, want %v on\n%s", x, y, got, c.want, b)
			}
			if got := b.Foul(gomoku.Renju, gomoku.Black, x, y); got != c.foul {
				t.Errorf("Foul(renju, black, %d, %d) = %q, want %q on\n%s", x, y, got, c.foul, b)
			}
		})
	}
}

func TestCheckOccupiedAndOffBoard(t *testing.T) {
	b, q := position(t, `
		X O .
		. ? .
		. . .`)
	cases := []struct {
		x, y int
		want games.Refusal
	}{
		{q.X, q.Y, games.Allowed},
		{q.X - 1, q.Y - 1, games.Occupied},
		{q.X, q.Y - 1, games.Occupied},
		{-1, 0, games.OffBoard},
		{0, -1, games.OffBoard},
		{15, 0, games.OffBoard},
		{0, 15, games.OffBoard},
		{14, 14, games.Allowed},
		{0, 0, games.Allowed},
	}
	for _, r := range []gomoku.Rule{gomoku.Seed, gomoku.Freestyle, gomoku.Standard, gomoku.Renju} {
		for _, s := range []games.Color{gomoku.Black, gomoku.White} {
			for _, c := range cases {
				if got := b.Check(r, s, c.x, c.y); got != c.want {
					t.Errorf("Check(%v, %v, %d, %d) = %v, want %v", r, s, c.x, c.y, got, c.want)
				}
				if c.want != games.Allowed {
					if b.Forbidden(r, s, c.x, c.y) || b.Wins(r, s, c.x, c.y) {
						t.Errorf("Forbidden or Wins(%v, %v, %d, %d) true on a %v point", r, s, c.x, c.y, c.want)
					}
				}
			}
		}
	}
}

// An occupied point next to a five must not be taken for a winning move.
func TestWinsOnOccupiedPoint(t *testing.T) {
	b, q := position(t, `. X X X X ? .`)
	b.Put(gomoku.White, q.X, q.Y)
	if b.Wins(gomoku.Freestyle, gomoku.Black, q.X, q.Y) {
		t.Errorf("Wins on a point white holds = true, want false")
	}
}
