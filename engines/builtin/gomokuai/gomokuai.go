// Package gomokuai chooses moves for taikai's built-in Gomoku engines: the seed
// 001 sample client's random player and a threat scorer after seed 003. It does
// no I/O; a client that speaks the protocol calls it with its own board.
package gomokuai

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/gomoku"
)

// Random is the seed-001 sample client's strategy: a uniformly random empty
// point next to (8-neighbourhood) any stone, the centre on an empty board. It
// ignores the rule, as the sample did, so the server may refuse its choice;
// avoid holds the points already refused this turn, which it does not choose
// again. When every point next to a stone is taken or avoided it picks any empty
// point (the sample would have stalled until the server's clock ran out).
// ok is false when no empty point is left outside avoid.
func Random(b *gomoku.Board, rng *rand.Rand, avoid []gomoku.Point) (p gomoku.Point, ok bool) {
	n := b.Size()
	if b.Stones() == 0 {
		c := gomoku.Point{X: n / 2, Y: n / 2}
		if !slices.Contains(avoid, c) {
			return c, true
		}
	}
	// Reservoir sampling: uniform over the candidates without collecting them.
	for _, nearOnly := range []bool{true, false} {
		seen := 0
		for y := range n {
			for x := range n {
				q := gomoku.Point{X: x, Y: y}
				if b.At(x, y) != gomoku.Empty || nearOnly && !touches(b, x, y) || slices.Contains(avoid, q) {
					continue
				}
				seen++
				if rng.IntN(seen) == 0 {
					p = q
				}
			}
		}
		if seen > 0 {
			return p, true
		}
	}
	return gomoku.Point{}, false
}

// touches reports whether a stone stands on one of the eight neighbours.
func touches(b *gomoku.Board, x, y int) bool {
	for dy := -1; dy <= 1; dy++ {
		for dx := -1; dx <= 1; dx++ {
			if (dx != 0 || dy != 0) && b.At(x+dx, y+dy) != gomoku.Empty {
				return true
			}
		}
	}
	return false
}

// The four lines through a point.
var dirs = [4][2]int{{1, 0}, {0, 1}, {1, 1}, {1, -1}}

// Threat scores every candidate point (empty, within two points of a stone; the
// centre on an empty board) for the lines it makes for itself and the lines it
// takes from the opponent, after seed 003's program (win 15000, block a four
// 12000, ...), and plays the best point it is allowed to: its own five first,
// then a block of the opponent's five, then its own unstoppable threats, then
// blocks of the opponent's, then building. Ties are broken with rng. It never
// plays a point Check refuses for it under r. With time left before deadline
// (it uses at most half) it first looks for a win by a chain of fours.
// It returns (-1,-1) only when no point at all is allowed for it.
func Threat(b *gomoku.Board, r gomoku.Rule, me games.Color, rng *rand.Rand, deadline time.Time) gomoku.Point {
	n := b.Size()
	if b.Stones() == 0 {
		return gomoku.Point{X: n / 2, Y: n / 2}
	}
	cands := candidates(b)
	opp := me.Opponent()
	mine, theirs := tableFor(r, me), tableFor(r, opp)
	for i := range cands {
		c := &cands[i]
		var ms, os [4]shape
		for d, dir := range dirs {
			im, io := lineIndex(b, me, c.p.X, c.p.Y, dir)
			ms[d], os[d] = mine[im], theirs[io]
		}
		c.attack, c.defence = value(ms), value(os)
		c.own, c.their = slices.Max(ms[:]), slices.Max(os[:])
		if c.defence >= blockMin && b.Forbidden(r, opp, c.p.X, c.p.Y) {
			// The opponent may not play there, so there is nothing to take away.
			c.defence = 0
		}
		c.score = c.attack + c.defence*9/10
	}

	if half := time.Until(deadline) / 2; half > 0 {
		if p, ok := fourChain(b, r, me, cands, time.Now().Add(half)); ok {
			return p
		}
	}

	// Best first, so that Check, which may have to look deep under renju, runs
	// only until the best allowed score and its ties are found.
	slices.SortFunc(cands, func(a, b candidate) int { return b.score - a.score })
	var best []gomoku.Point
	bar := -1
	for _, c := range cands {
		if c.score < bar {
			break
		}
		if b.Check(r, me, c.p.X, c.p.Y) != games.Allowed {
			continue
		}
		bar = c.score
		best = append(best, c.p)
	}
	if len(best) > 0 {
		return best[rng.IntN(len(best))]
	}
	// Every point near the stones is forbidden: anything allowed will do.
	for y := range n {
		for x := range n {
			if b.Check(r, me, x, y) == games.Allowed {
				return gomoku.Point{X: x, Y: y}
			}
		}
	}
	return gomoku.Point{X: -1, Y: -1}
}

type candidate struct {
	p               gomoku.Point
	own, their      shape // the best line a stone here makes for each side
	attack, defence int
	score           int
}

// candidates returns the empty points within two points of a stone.
func candidates(b *gomoku.Board) []candidate {
	n := b.Size()
	var near [gomoku.MaxSize * gomoku.MaxSize]bool
	for y := range n {
		for x := range n {
			if b.At(x, y) == gomoku.Empty {
				continue
			}
			for yy := max(0, y-2); yy <= min(n-1, y+2); yy++ {
				for xx := max(0, x-2); xx <= min(n-1, x+2); xx++ {
					near[yy*n+xx] = true
				}
			}
		}
	}
	var out []candidate
	for i, ok := range near[:n*n] {
		if ok && b.At(i%n, i/n) == gomoku.Empty {
			out = append(out, candidate{p: gomoku.Point{X: i % n, Y: i / n}})
		}
	}
	return out
}

// lineIndex returns the line patterns through (x,y) in direction d as seen by
// me and by the opponent.
func lineIndex(b *gomoku.Board, me games.Color, x, y int, d [2]int) (im, io int) {
	for k := range 2 * reach {
		o := offset(k)
		xx, yy := x+o*d[0], y+o*d[1]
		switch c := b.At(xx, yy); {
		case !b.On(xx, yy):
			im += int(blocked) * pow3[k]
			io += int(blocked) * pow3[k]
		case c == me:
			im += int(mine) * pow3[k]
			io += int(blocked) * pow3[k]
		case c != gomoku.Empty:
			im += int(blocked) * pow3[k]
			io += int(mine) * pow3[k]
		}
	}
	return im, io
}

// Scores of a point for one side, after seed 003's table: a five outweighs
// everything, a threat that cannot be stopped outweighs any single threat, and
// a block is worth nine tenths of the same shape made.
const (
	winScore     = 150000
	unstoppable  = 12000 // an open four or two fours: the next move wins
	fourThree    = 6000  // wins unless the block of the four makes a four
	doubleThree  = 3000  // wins unless the opponent has fours to play
	fourScore    = 500   // forces the reply
	openThreeVal = 450   // forces a reply soon
	// blockMin is the least defence worth asking whether the opponent may play
	// the point at all: below it the answer would not change the choice much.
	blockMin = doubleThree
)

var shapeScore = [...]int{
	none:      0,
	openOne:   2,
	two:       10,
	openTwo:   40,
	three:     60,
	openThree: openThreeVal,
	four:      fourScore,
	openFour:  unstoppable,
	five:      winScore,
}

// value scores the four lines a stone makes on one point, with the bonuses for
// threats that only count together.
func value(s [4]shape) int {
	v, fours, threes := 0, 0, 0
	for _, x := range s {
		v += shapeScore[x]
		switch x {
		case four:
			fours++
		case openThree:
			threes++
		}
	}
	switch {
	case fours >= 2:
		v += unstoppable
	case fours == 1 && threes >= 1:
		v += fourThree
	case threes >= 2:
		v += doubleThree
	}
	return v
}
