package gomoku

import "github.com/taikai-dev/taikai/games"

// Foul is the pattern that makes a point forbidden, for telling a person why.
type Foul int8

// The forbidden patterns.
const (
	NoFoul      Foul = iota // the point is not forbidden
	DoubleThree             // three on two or more lines
	DoubleFour              // four on two or more lines (Renju)
	Overline                // six or more in a row (Renju)
)

// String names the pattern as a person reads it: "double three".
func (f Foul) String() string {
	switch f {
	case DoubleThree:
		return "double three"
	case DoubleFour:
		return "double four"
	case Overline:
		return "overline"
	}
	return ""
}

// doubleThree reports whether s on the empty point (x,y) makes a three on two or
// more lines and no five: the seed rule. A three here is plain: any stone that
// makes a straight four will do, forbidden or not, because the seed server knew
// nothing of renju's refinements.
func (b *Board) doubleThree(s games.Color, x, y int) bool {
	var ws [4]window
	for i, d := range dirs {
		ws[i] = b.window(s, x, y, d)
		if ws[i].length() >= 5 {
			return false
		}
	}
	threes := 0
	for i := range ws {
		if ws[i].fours(fiveOrMore) > 0 {
			continue
		}
		if _, n := ws[i].threePoints(fiveOrMore); n > 0 {
			threes++
		}
	}
	return threes >= 2
}

// renjuForbidden reports which pattern forbids black the empty point (x,y)
// under renju (NoFoul if none): overline, double-four or double-three, unless the move makes
// exactly five. A three counts only if one of the points that would make its
// straight four is itself allowed once this stone stands (RIF), which needs
// the same question asked again on a board with one more stone.
//
// scratch says b is a private copy that may be written; the first level copies
// the caller's board so that Forbidden stays a read-only call that several
// goroutines may make on one board.
func (b *Board) renjuForbidden(x, y int, scratch bool) Foul {
	var ws [4]window
	for i, d := range dirs {
		ws[i] = b.window(Black, x, y, d)
		if ws[i].length() == 5 {
			return NoFoul
		}
	}
	fours := 0
	for i := range ws {
		if ws[i].length() > 5 {
			return Overline
		}
		fours += ws[i].fours(exactlyFive)
	}
	if fours >= 2 {
		return DoubleFour
	}

	var pts [4][2]int
	var npts [4]int
	lines := 0
	for i := range ws {
		if ws[i].fours(exactlyFive) > 0 {
			continue
		}
		if pts[i], npts[i] = ws[i].threePoints(exactlyFive); npts[i] > 0 {
			lines++
		}
	}
	if lines < 2 {
		return NoFoul
	}

	if !scratch {
		c := *b
		b = &c
	}
	at := y*b.size + x
	b.cells[at] = Black
	threes := 0
	for i := range ws {
		for _, q := range pts[i][:npts[i]] {
			qx, qy := x+(q-reach)*dirs[i].dx, y+(q-reach)*dirs[i].dy
			if b.renjuForbidden(qx, qy, true) == NoFoul {
				threes++
				break
			}
		}
		if threes >= 2 {
			break
		}
	}
	b.cells[at] = Empty
	if threes >= 2 {
		return DoubleThree
	}
	return NoFoul
}
