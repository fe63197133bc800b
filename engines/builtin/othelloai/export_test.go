package othelloai

import (
	"math/rand/v2"
	"time"

	"github.com/taikai-dev/taikai/games/othello"
)

// Internals opened to the external tests, which check them against package
// othello and measure them.
var (
	// Moves is the search's move generator.
	Moves = moves
	// Flips is the search's flip function.
	Flips = flips
	// Weight is Greedy's weight of a square.
	Weight = func(s othello.Square) int { return weights[s.X()][s.Y()] }
)

// Decision is what one AlphaBeta call decided.
type Decision struct {
	Move   othello.Square // the move returned
	Depth  int            // depth of the last complete midgame iteration
	Solved bool           // Move comes from a finished exact solve
	Score  int            // the final disc difference, when Solved
	Nodes  uint64         // nodes searched
}

// Decide is AlphaBeta reporting how it got its answer.
func Decide(b *othello.Board, deadline time.Time, rng *rand.Rand) Decision {
	c := choose(b, deadline, rng, -1)
	return Decision{c.sq, c.depth, c.solved, c.score, c.nodes}
}

// SearchDepth runs a midgame search of fixed depth with no clock.
func SearchDepth(b *othello.Board, depth int) Decision {
	c := choose(b, time.Time{}, rand.New(rand.NewPCG(1, 2)), depth)
	return Decision{c.sq, c.depth, c.solved, c.score, c.nodes}
}

// Solve solves b exactly with no clock and no preliminary midgame search.
func Solve(b *othello.Board) Decision {
	legal := b.Legal()
	if legal == 0 {
		return Decision{Move: othello.Pass}
	}
	p, o := b.Bitboards()
	if b.Turn() != othello.Black {
		p, o = o, p
	}
	s := searchers.Get().(*searcher)
	defer searchers.Put(s)
	s.rng, s.nodes = rand.New(rand.NewPCG(1, 2)), 0
	s.fillRoot(p, o)
	s.clearTT()
	s.timed, s.aborted = false, false
	sq, v, _ := s.searchRoot(p, o, 0)
	return Decision{Move: othello.Square(sq), Solved: true, Score: v, Nodes: s.nodes}
}
