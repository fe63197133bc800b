package gomoku_test

import (
	"github.com/taikai-dev/taikai/games/gomoku"

	"github.com/taikai-dev/taikai/games"
)

// A reference for the rules, written straight from the definitions of
// PROTOCOLS.md §3 and slow on purpose: it walks whole lines edge to edge, tries
// every empty point of a line, clones the board for every hypothetical stone and
// uses nothing of the package but the board's At, Put and Clone.

var refDirs = [4][2]int{{1, 0}, {0, 1}, {1, 1}, {1, -1}}

// refExact reports whether s needs exactly five under r.
func refExact(r gomoku.Rule, s games.Color) bool {
	return r == gomoku.Standard || r == gomoku.Renju && s == gomoku.Black
}

func refIsFive(r gomoku.Rule, s games.Color, n int) bool {
	if refExact(r, s) {
		return n == 5
	}
	return n >= 5
}

// refLine returns the whole line through p in direction d, edge to edge, and
// p's index in it.
func refLine(b *gomoku.Board, p gomoku.Point, d [2]int) (line []gomoku.Point, at int) {
	x, y := p.X, p.Y
	for inside(b, x-d[0], y-d[1]) {
		x, y = x-d[0], y-d[1]
	}
	for ; inside(b, x, y); x, y = x+d[0], y+d[1] {
		if x == p.X && y == p.Y {
			at = len(line)
		}
		line = append(line, gomoku.Point{X: x, Y: y})
	}
	return line, at
}

func inside(b *gomoku.Board, x, y int) bool {
	return x >= 0 && y >= 0 && x < b.Size() && y < b.Size()
}

// refRun returns the bounds of the maximal run of s through index i of the line.
func refRun(b *gomoku.Board, line []gomoku.Point, i int, s games.Color) (lo, hi int) {
	lo, hi = i, i
	for lo > 0 && b.At(line[lo-1].X, line[lo-1].Y) == s {
		lo--
	}
	for hi+1 < len(line) && b.At(line[hi+1].X, line[hi+1].Y) == s {
		hi++
	}
	return lo, hi
}

// refFivePoints returns the empty points of the line that would give a five
// (under r) containing index at. b has s on at.
func refFivePoints(b *gomoku.Board, r gomoku.Rule, s games.Color, line []gomoku.Point, at int) []int {
	var out []int
	for j, q := range line {
		if b.At(q.X, q.Y) != gomoku.Empty {
			continue
		}
		c := b.Clone()
		c.Put(s, q.X, q.Y)
		lo, hi := refRun(c, line, j, s)
		if lo <= at && at <= hi && refIsFive(r, s, hi-lo+1) {
			out = append(out, j)
		}
	}
	return out
}

// refFours counts the fours through index at: each five point is a four, except
// that the two ends of a straight four are one four.
func refFours(b *gomoku.Board, r gomoku.Rule, s games.Color, line []gomoku.Point, at int) int {
	f := refFivePoints(b, r, s, line, at)
	if len(f) == 2 && f[1]-f[0] == 5 {
		return 1
	}
	return len(f)
}

// refStraightFour reports whether the run through index at is four in a row
// whose ends are both five points.
func refStraightFour(b *gomoku.Board, r gomoku.Rule, s games.Color, line []gomoku.Point, at int) bool {
	lo, hi := refRun(b, line, at, s)
	if hi-lo+1 != 4 {
		return false
	}
	f := refFivePoints(b, r, s, line, at)
	return len(f) == 2 && f[0] == lo-1 && f[1] == hi+1
}

// refThree reports whether the line through index at (s already there) is a
// three: no four, and one more stone of the line makes a straight four holding
// that stone; under renju that stone must not be forbidden itself.
func refThree(b *gomoku.Board, r gomoku.Rule, s games.Color, line []gomoku.Point, at int) bool {
	if refFours(b, r, s, line, at) > 0 {
		return false
	}
	for j, q := range line {
		if b.At(q.X, q.Y) != gomoku.Empty {
			continue
		}
		c := b.Clone()
		c.Put(s, q.X, q.Y)
		lo, hi := refRun(c, line, at, s)
		if j < lo || j > hi || !refStraightFour(c, r, s, line, at) {
			continue
		}
		if r == gomoku.Renju && refForbidden(b, r, s, q) {
			continue
		}
		return true
	}
	return false
}

// refWins reports whether s on the empty point p makes a winning five.
func refWins(b *gomoku.Board, r gomoku.Rule, s games.Color, p gomoku.Point) bool {
	c := b.Clone()
	c.Put(s, p.X, p.Y)
	for _, d := range refDirs {
		line, at := refLine(c, p, d)
		lo, hi := refRun(c, line, at, s)
		if refIsFive(r, s, hi-lo+1) {
			return true
		}
	}
	return false
}

// refForbidden reports whether s on the empty point p is forbidden under r.
func refForbidden(b *gomoku.Board, r gomoku.Rule, s games.Color, p gomoku.Point) bool {
	if r != gomoku.Seed && !(r == gomoku.Renju && s == gomoku.Black) {
		return false
	}
	if refWins(b, r, s, p) {
		return false
	}
	c := b.Clone()
	c.Put(s, p.X, p.Y)
	fours, threes := 0, 0
	for _, d := range refDirs {
		line, at := refLine(c, p, d)
		lo, hi := refRun(c, line, at, s)
		if r == gomoku.Renju && hi-lo+1 > 5 {
			return true
		}
		fours += refFours(c, r, s, line, at)
		if refThree(c, r, s, line, at) {
			threes++
		}
	}
	if r == gomoku.Renju && fours >= 2 {
		return true
	}
	return threes >= 2
}

// refCheck is Board.Check by the reference.
func refCheck(b *gomoku.Board, r gomoku.Rule, s games.Color, p gomoku.Point) games.Refusal {
	switch {
	case !inside(b, p.X, p.Y):
		return games.OffBoard
	case b.At(p.X, p.Y) != gomoku.Empty:
		return games.Occupied
	case refForbidden(b, r, s, p):
		return games.Forbidden
	}
	return games.Allowed
}

// refWinner scans the whole board for a winning five and returns its colour,
// or Empty.
func refWinner(b *gomoku.Board, r gomoku.Rule) games.Color {
	for y := range b.Size() {
		for x := range b.Size() {
			s := b.At(x, y)
			if s == gomoku.Empty {
				continue
			}
			for _, d := range refDirs {
				// Start of a maximal run only.
				if inside(b, x-d[0], y-d[1]) && b.At(x-d[0], y-d[1]) == s {
					continue
				}
				n := 0
				for inside(b, x+n*d[0], y+n*d[1]) && b.At(x+n*d[0], y+n*d[1]) == s {
					n++
				}
				if refIsFive(r, s, n) {
					return s
				}
			}
		}
	}
	return gomoku.Empty
}
