package gomokuai

import (
	"slices"
	"time"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/gomoku"
)

// Limits of the search for a chain of fours. The clock is the real limit; the
// others keep one call's cost bounded when the deadline is far away.
const (
	chainDepth = 12   // fours in a row
	chainNodes = 4000 // positions looked at
)

// fourChain looks for a win by fours alone (VCF): every move a four, so the
// opponent's reply is forced, ending in two five points at once or a five point
// the opponent may not block (renju). It gives up at stop. The opponent must
// have no five point of its own, or a four would not force anything.
func fourChain(b *gomoku.Board, r gomoku.Rule, me games.Color, cands []candidate, stop time.Time) (gomoku.Point, bool) {
	var roots []gomoku.Point
	for _, c := range cands {
		if c.their == five {
			return gomoku.Point{}, false
		}
		if c.own >= four {
			roots = append(roots, c.p)
		}
	}
	if len(roots) == 0 {
		return gomoku.Point{}, false
	}
	s := chain{b: b.Clone(), r: r, me: me, opp: me.Opponent(), mine: tableFor(r, me), stop: stop}
	// Deepening finds the shortest chain, which leaves an opponent that does not
	// answer as expected the fewest chances.
	for depth := 1; depth <= chainDepth; depth++ {
		if p, ok := s.search(roots, depth); ok {
			return p, true
		}
		if s.over {
			break
		}
	}
	return gomoku.Point{}, false
}

type chain struct {
	b       *gomoku.Board // a copy the search plays on
	r       gomoku.Rule
	me, opp games.Color
	mine    *[patterns]shape
	stop    time.Time
	nodes   int
	over    bool // out of time or nodes: unwind without looking further
}

// out reports whether the search has used up its nodes or its time.
func (c *chain) out() bool {
	if !c.over && (c.nodes > chainNodes || time.Now().After(c.stop)) {
		c.over = true
	}
	return c.over
}

// fourAt reports whether c.me on (x,y) would make a four (or better) on a line.
func (c *chain) fourAt(x, y int) bool {
	for _, d := range dirs {
		im, _ := lineIndex(c.b, c.me, x, y, d)
		if c.mine[im] >= four {
			return true
		}
	}
	return false
}

// search tries each point of points that makes a four for c.me and reports the
// first that wins by fours within depth.
func (c *chain) search(points []gomoku.Point, depth int) (gomoku.Point, bool) {
	c.nodes++
	if depth == 0 || c.out() {
		return gomoku.Point{}, false
	}
	var fours []gomoku.Point
	for _, p := range points {
		if c.b.At(p.X, p.Y) != gomoku.Empty || slices.Contains(fours, p) {
			continue
		}
		if c.b.Wins(c.r, c.me, p.X, p.Y) {
			return p, true
		}
		if c.fourAt(p.X, p.Y) {
			fours = append(fours, p)
		}
	}
	for _, p := range fours {
		if c.over {
			break
		}
		if c.b.Check(c.r, c.me, p.X, p.Y) != games.Allowed {
			continue
		}
		c.b.Put(c.me, p.X, p.Y)
		won := c.forced(p, fours, depth)
		c.b.Put(gomoku.Empty, p.X, p.Y)
		if won {
			return p, true
		}
	}
	return gomoku.Point{}, false
}

// forced plays the opponent's only answer to the four just made on p and goes
// on searching; it reports whether the four wins.
func (c *chain) forced(p gomoku.Point, fours []gomoku.Point, depth int) bool {
	fives := c.fivePoints(c.me, p)
	switch {
	case len(fives) >= 2:
		return true
	case len(fives) == 0:
		return false // a four the table saw but the rule does not (renju overline)
	}
	q := fives[0]
	if c.b.Forbidden(c.r, c.opp, q.X, q.Y) {
		return true
	}
	c.b.Put(c.opp, q.X, q.Y)
	defer c.b.Put(gomoku.Empty, q.X, q.Y)
	if len(c.fivePoints(c.opp, q)) > 0 {
		// The block made a four: answering it is no longer a chain of fours.
		return false
	}
	next := append(append([]gomoku.Point(nil), fours...), c.linePoints(p)...)
	_, won := c.search(next, depth-1)
	return won
}

// fivePoints returns the empty points on the lines through p where s would make
// a winning five.
func (c *chain) fivePoints(s games.Color, p gomoku.Point) []gomoku.Point {
	var dst []gomoku.Point
	for _, d := range dirs {
		for o := -4; o <= 4; o++ {
			x, y := p.X+o*d[0], p.Y+o*d[1]
			if o != 0 && c.b.Wins(c.r, s, x, y) {
				dst = append(dst, gomoku.Point{X: x, Y: y})
			}
		}
	}
	return dst
}

// linePoints returns the empty points within four of p on its lines: the only
// places where p's stone can have made new fours possible.
func (c *chain) linePoints(p gomoku.Point) []gomoku.Point {
	var out []gomoku.Point
	for _, d := range dirs {
		for o := -4; o <= 4; o++ {
			x, y := p.X+o*d[0], p.Y+o*d[1]
			if o != 0 && c.b.On(x, y) && c.b.At(x, y) == gomoku.Empty {
				out = append(out, gomoku.Point{X: x, Y: y})
			}
		}
	}
	return out
}
