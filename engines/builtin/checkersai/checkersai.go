// Package checkersai chooses checkers moves for the built-in engines:
// random, the seed's plain minimax, and an iterative-deepening alpha-beta.
package checkersai

import (
	"time"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/checkers"
)

// MinimaxDepth is the depth of checkers-minimax's search. The seed does not
// give its depth; 4 plies answer within a few milliseconds.
const MinimaxDepth = 4

// Random picks a uniformly random legal move; ok is false if there is none.
func Random(p *checkers.Position, rng games.Rand) (checkers.Move, bool) {
	moves := p.Moves(nil)
	if len(moves) == 0 {
		return checkers.Move{}, false
	}
	return moves[rng.IntN(len(moves))], true
}

// estimate is the seed's evaluation from Black's side: Black's score minus
// White's (seed 004: "先手側の得点を+、後手側の得点を-").
func estimate(p *checkers.Position) int {
	b, w := p.Score()
	return b - w
}

// Minimax is the seed's algorithm (seed 004, section 3): plain minimax to a
// fixed depth over the seed's evaluation, Black maximising and White
// minimising, a position with no move valued by the evaluation; among equal
// best moves it picks at random.
func Minimax(p *checkers.Position, depth int, rng games.Rand) (checkers.Move, bool) {
	moves := p.Moves(nil)
	if len(moves) == 0 {
		return checkers.Move{}, false
	}
	var best []checkers.Move
	bestV := 0
	for _, m := range moves {
		q := *p
		q.Play(m)
		v := minimax(&q, depth-1)
		if p.Turn == games.White {
			v = -v
		}
		switch {
		case len(best) == 0 || v > bestV:
			best, bestV = append(best[:0], m), v
		case v == bestV:
			best = append(best, m)
		}
	}
	return best[rng.IntN(len(best))], true
}

func minimax(p *checkers.Position, depth int) int {
	if depth <= 0 || (p.Rule == checkers.English && p.Quiet >= checkers.DrawPlies) {
		return estimate(p)
	}
	var buf [32]checkers.Move
	moves := p.Moves(buf[:0])
	if len(moves) == 0 {
		return estimate(p)
	}
	best := 0
	for i, m := range moves {
		q := *p
		q.Play(m)
		v := minimax(&q, depth-1)
		if i == 0 || (p.Turn == games.Black && v > best) || (p.Turn == games.White && v < best) {
			best = v
		}
	}
	return best
}

// Choice is what AlphaBeta found.
type Choice struct {
	Move  checkers.Move
	Depth int   // the deepest search completed
	Score int   // from the mover's side
	Nodes int64 // positions searched
	Only  bool  // the only legal move: no search
}

// win is a won position's value (less the plies to reach it).
const win = 1 << 20

// kingBonus is what a king is worth beyond the seed's evaluation of a man
// (English rules only): mobility and reach.
const kingBonus = 30

// evaluate values p for the side to move.
func evaluate(p *checkers.Position) int {
	v := estimate(p)
	if p.Rule == checkers.English {
		v += kingBonus * (popcount(p.Kings&p.Black) - popcount(p.Kings&p.White))
	}
	if p.Turn == games.White {
		v = -v
	}
	return v
}

func popcount(x uint32) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

// terminal values a position whose side to move has no move (or the English
// draw), for the side to move, ply plies from the root.
func terminal(p *checkers.Position, hasMoves bool, ply int) int {
	if p.Rule == checkers.English {
		if hasMoves {
			return 0 // the move-count draw
		}
		return -win + ply
	}
	b, w := p.Score()
	d := b - w
	if p.Turn == games.White {
		d = -d
	}
	switch {
	case d > 0:
		return win - ply
	case d < 0:
		return -win + ply
	}
	return 0
}

type search struct {
	deadline time.Time
	nodes    int64
	stopped  bool
}

// AlphaBeta searches deeper and deeper until the deadline (checked every
// 1,024 positions) and returns the best move of the deepest complete search,
// the previous best tried first; among equal moves at the root it picks at
// random. It stops early once the result is certain.
func AlphaBeta(p *checkers.Position, deadline time.Time, rng games.Rand) (Choice, bool) {
	moves := p.Moves(nil)
	if len(moves) == 0 {
		return Choice{}, false
	}
	// Shuffle so that equal moves are chosen at random (the first of the
	// best is kept).
	for i := len(moves) - 1; i > 0; i-- {
		j := rng.IntN(i + 1)
		moves[i], moves[j] = moves[j], moves[i]
	}
	ch := Choice{Move: moves[0]}
	if len(moves) == 1 {
		ch.Only = true
		return ch, true
	}
	s := &search{deadline: deadline}
	for depth := 1; depth <= 64; depth++ {
		alpha, bestI := -win-1, 0
		for i, m := range moves {
			q := *p
			q.Play(m)
			v := -s.negamax(&q, depth-1, -win-1, -alpha, 1)
			if s.stopped {
				break
			}
			if v > alpha {
				alpha, bestI = v, i
			}
		}
		if s.stopped {
			break
		}
		moves[0], moves[bestI] = moves[bestI], moves[0]
		ch.Move, ch.Depth, ch.Score = moves[0], depth, alpha
		if alpha > win-1000 || alpha < -win+1000 || time.Now().After(deadline) {
			break
		}
	}
	ch.Nodes = s.nodes
	return ch, true
}

func (s *search) negamax(p *checkers.Position, depth, alpha, beta, ply int) int {
	s.nodes++
	if s.nodes&1023 == 0 && time.Now().After(s.deadline) {
		s.stopped = true
	}
	if s.stopped {
		return 0
	}
	if p.Rule == checkers.English && p.Quiet >= checkers.DrawPlies {
		return terminal(p, true, ply)
	}
	var buf [32]checkers.Move
	moves := p.Moves(buf[:0])
	if len(moves) == 0 {
		return terminal(p, false, ply)
	}
	// Captures are forced and quick to resolve: search them one ply further.
	if depth <= 0 && !moves[0].IsCapture() {
		return evaluate(p)
	}
	for _, m := range moves {
		q := *p
		q.Play(m)
		v := -s.negamax(&q, depth-1, -beta, -alpha, ply+1)
		if v > alpha {
			alpha = v
			if alpha >= beta {
				break
			}
		}
	}
	return alpha
}
