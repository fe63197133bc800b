package gomoku

import "github.com/taikai-dev/taikai/games"

// A direction of one of the four lines through a point.
type dir struct{ dx, dy int }

// dirs are the four lines: horizontal, vertical, diagonal down-right, diagonal up-right.
var dirs = [4]dir{{1, 0}, {0, 1}, {1, 1}, {1, -1}}

// goal is what counts as a five for one side under one rule.
type goal uint8

const (
	fiveOrMore  goal = iota // an overline is a five too
	exactlyFive             // an overline is not a five
)

func goalOf(r Rule, s games.Color) goal {
	if r == Standard || r == Renju && s == Black {
		return exactlyFive
	}
	return fiveOrMore
}

// five reports whether a run of n stones is a five under g.
func (g goal) five(n int) bool {
	if g == exactlyFive {
		return n == 5
	}
	return n >= 5
}

// reach is how far a window looks each way. Every four or three through a
// point fits in ±4, and one more cell each side tells a five from an overline.
const (
	reach = 5
	span  = 2*reach + 1
)

// Cell classes in a window, from the point of view of the side asked about.
const (
	vacant  int8 = iota
	mine         // a stone of the side, or the point asked about
	blocked      // an opponent stone or the edge
)

// window is one line through a point, the point at index reach counted as the
// side's stone. Cells past the first blocked one each way are blocked too: nothing
// behind an opponent stone or the edge can change what the point makes.
type window [span]int8

func (b *Board) window(s games.Color, x, y int, d dir) window {
	var w window
	w[reach] = mine
	for side := -1; side <= 1; side += 2 {
		dx, dy := side*d.dx, side*d.dy
		i := 1
		for ; i <= reach; i++ {
			c := b.at(x+i*dx, y+i*dy)
			if c == s {
				w[reach+side*i] = mine
			} else if c != Empty {
				break
			}
		}
		for ; i <= reach; i++ {
			w[reach+side*i] = blocked
		}
	}
	return w
}

// around returns the bounds of the run of mine cells through i.
func (w *window) around(i int) (lo, hi int) {
	lo, hi = i, i
	for lo > 0 && w[lo-1] == mine {
		lo--
	}
	for hi < span-1 && w[hi+1] == mine {
		hi++
	}
	return lo, hi
}

// length returns the length of the run through the point. A run that reaches the
// window's end holds the point and five more cells, so it is an overline whatever
// lies beyond.
func (w *window) length() int {
	lo, hi := w.around(reach)
	return hi - lo + 1
}

// completions reports whether the vacant cell just left (lo-1) and just right
// (hi+1) of the run through the point would make a five under g. Only those two
// cells can: a five through the point that needs one more stone has every other
// cell between that stone and the point filled.
func (w *window) completions(g goal) (left, right bool) {
	lo, hi := w.around(reach)
	n := hi - lo + 1
	if lo > 0 && w[lo-1] == vacant {
		m := n + 1
		for i := lo - 2; i >= 0 && w[i] == mine; i-- {
			m++
		}
		left = g.five(m)
	}
	if hi < span-1 && w[hi+1] == vacant {
		m := n + 1
		for i := hi + 2; i < span && w[i] == mine; i++ {
			m++
		}
		right = g.five(m)
	}
	return left, right
}

// fours returns how many fours the point makes on this line: a straight four
// (four in a row, both ends make five) is one four; two completions around a
// shorter run (X X X . ? . X X X) are two fours on one line.
func (w *window) fours(g goal) int {
	left, right := w.completions(g)
	switch {
	case left && right:
		if w.length() == 4 {
			return 1
		}
		return 2
	case left || right:
		return 1
	}
	return 0
}

// straightFour reports whether the run through the point is four in a row whose
// two ends both make a five under g.
func (w *window) straightFour(g goal) bool {
	if w.length() != 4 {
		return false
	}
	left, right := w.completions(g)
	return left && right
}

// threePoints returns the window indices of the vacant cells that would turn the
// stones through the point into a straight four, for a line that makes no four.
// Only the cells touching the run can: a stone anywhere else leaves the run as it
// is. At most two exist.
func (w *window) threePoints(g goal) (pts [2]int, n int) {
	lo, hi := w.around(reach)
	if hi-lo+1 >= 4 {
		return pts, 0
	}
	for _, q := range [2]int{lo - 1, hi + 1} {
		if q < 0 || q >= span || w[q] != vacant {
			continue
		}
		w[q] = mine
		if w.straightFour(g) {
			pts[n] = q
			n++
		}
		w[q] = vacant
	}
	return pts, n
}
