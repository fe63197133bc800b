package othelloai

import (
	"math/bits"
	"time"
)

// Endgame scores are exact final disc differences for the side to move,
// counting stones only, as othello.Board.Count does.

const (
	// At or below this many empties the solver stops generating and sorting
	// moves and simply tries the empty squares, which is cheaper than
	// ordering so small a tree. Measured on 12-19 empty positions, as was
	// using the transposition table at every node above it.
	smallSolve = 5
)

// solvable returns how many empties the exact solver can be trusted to finish
// within budget on an ordinary machine; a solve that overruns is abandoned
// anyway, so this only avoids starting hopeless ones.
func solvable(budget time.Duration) int {
	// Measured on a 2-core Xeon over positions from self-play: 14 empties
	// take 3 ms (6 ms for the slowest tenth), 16 take 12 ms (30 ms), 18 take
	// 85 ms (210 ms), so the tree grows about 2.5-fold per empty. The solve
	// gets three quarters of budget.
	n := 12
	for t := 3 * time.Millisecond; t <= budget && n < 24; t = t * 5 / 2 {
		n++
	}
	return n
}

// quadrants splits the board so that the parity rule can prefer regions with
// an odd number of empties: playing there tends to leave the last move in the
// region to us.
var quadrants = [4]uint64{0x000000000f0f0f0f, 0x00000000f0f0f0f0, 0x0f0f0f0f00000000, 0xf0f0f0f000000000}

// solve returns the exact final disc difference for p with alpha-beta bounds
// (fail-soft). passed says the previous ply was a pass.
func (s *searcher) solve(p, o uint64, alpha, beta int, passed bool) int {
	empties := 64 - popcount(p|o)
	switch {
	case empties == 0:
		s.nodes++
		return popcount(p) - popcount(o)
	case empties == 1:
		s.nodes++
		return solve1(p, o)
	case empties <= smallSolve:
		return s.solveSmall(p, o, alpha, beta, passed)
	}
	if s.tick() {
		return 0
	}
	mv := moves(p, o)
	if mv == 0 {
		if passed {
			return popcount(p) - popcount(o)
		}
		return -s.solve(o, p, -beta, -alpha, true)
	}

	// Stones o can never lose cap what p can score; when the cap is already
	// no better than alpha the subtree cannot matter.
	// Below a clear win for p the cap is seldom low enough to pay for
	// computing it.
	if alpha >= 16 && (p|o)&cornerMask != 0 {
		if hi := 64 - 2*popcount(stable(o, p)); hi <= alpha {
			return hi
		}
	}

	e := s.probe(p, o)
	ttMove := uint8(noMove)
	if e.p == p && e.o == o && e.bound != 0 {
		ttMove = e.move
		v := int(e.score)
		switch {
		case e.bound == boundExact,
			e.bound == boundLower && v >= beta,
			e.bound == boundUpper && v <= alpha:
			return v
		}
	}

	var list [maxMoves]move
	n := genMoves(&list, p, o, mv, ttMove, 0)
	best, bestSq := -inf, uint8(noMove)
	a := alpha
	for i := range n {
		m := &list[i]
		np, no := p|m.f|1<<m.sq, o&^m.f
		var v int
		if i == 0 {
			v = -s.solve(no, np, -beta, -a, false)
		} else {
			v = -s.solve(no, np, -a-1, -a, false)
			if v > a && v < beta {
				v = -s.solve(no, np, -beta, -a, false)
			}
		}
		if s.aborted {
			return 0
		}
		if v > best {
			best, bestSq = v, m.sq
			if v > a {
				a = v
				if a >= beta {
					break
				}
			}
		}
	}
	*e = ttEntry{p: p, o: o, score: int16(best), depth: int8(empties), bound: boundOf(best, alpha, beta), move: bestSq}
	return best
}

// solveSmall is solve for a handful of empties: it tries each empty square
// directly, odd-parity quadrants first.
func (s *searcher) solveSmall(p, o uint64, alpha, beta int, passed bool) int {
	if s.tick() {
		return 0
	}
	empty := ^(p | o)
	var odd uint64
	for _, q := range quadrants {
		if popcount(empty&q)&1 == 1 {
			odd |= q
		}
	}
	best := -inf
	last := popcount(empty) == 2
	for _, set := range [2]uint64{empty & odd, empty &^ odd} {
		for ; set != 0; set &= set - 1 {
			sq := bits.TrailingZeros64(set)
			f := flips(p, o, sq)
			if f == 0 {
				continue
			}
			np, no := p|f|1<<uint(sq), o&^f
			var v int
			if last {
				s.nodes++
				v = -solve1(no, np)
			} else {
				v = -s.solveSmall(no, np, -beta, -alpha, false)
			}
			if v > best {
				best = v
				if v > alpha {
					alpha = v
					if alpha >= beta {
						return best
					}
				}
			}
		}
	}
	if best == -inf {
		if passed {
			return popcount(p) - popcount(o)
		}
		return -s.solveSmall(o, p, -beta, -alpha, true)
	}
	return best
}

// solve1 scores the last empty square: p plays it if it can, else o does,
// else the game ends with the square empty.
func solve1(p, o uint64) int {
	sq := bits.TrailingZeros64(^(p | o))
	n := popcount(p)
	if f := flips(p, o, sq); f != 0 {
		return 2*(n+popcount(f)) - 62
	}
	if f := flips(o, p, sq); f != 0 {
		return 2*(n-popcount(f)) - 64
	}
	return 2*n - 63
}
