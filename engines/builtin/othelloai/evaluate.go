package othelloai

import "github.com/taikai-dev/taikai/games/othello"

// Evaluate is the alpha-beta search's score of a position at a fixed depth,
// for the side to move (the units of its evaluation; a finished position
// scores its disc difference times a large constant's sign). It does not
// depend on the clock or the machine: the opening suites' generator uses it
// to keep balanced openings only.
func Evaluate(b *othello.Board, depth int) int {
	p, o := b.Bitboards()
	if b.Turn() != othello.Black {
		p, o = o, p
	}
	s := searchers.Get().(*searcher)
	defer searchers.Put(s)
	s.rng, s.nodes = nil, 0
	s.clearTT()
	s.timed, s.aborted = false, false
	if b.Legal() == 0 {
		return -s.search(o, p, depth, -inf, inf, true)
	}
	s.fillRoot(p, o)
	var score int
	for d := 1; d <= max(1, depth); d++ {
		best, v, _ := s.searchRoot(p, o, d)
		score = v
		s.orderRoot(best)
	}
	return score
}
