package othelloai

import (
	"math/bits"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/taikai-dev/taikai/games/othello"
)

const (
	inf      = 1 << 20
	maxMoves = 40 // no Othello position has more than 33 legal moves
	noMove   = 64

	// checkEvery is how many nodes pass between clock reads: a read costs
	// about as much as a few nodes, and even under the race detector a few
	// thousand nodes take well under a millisecond or two.
	checkEvery = 2048

	ttBits = 17

	// evalOrderDepth is the remaining depth from which moves are ordered by
	// evaluating each child rather than by counting its replies; shallower,
	// the evaluation costs more than the better order saves.
	evalOrderDepth = 4
)

// Bound kinds of a transposition-table score.
const (
	boundExact uint8 = iota + 1
	boundLower
	boundUpper
)

type ttEntry struct {
	p, o  uint64
	score int16
	depth int8
	bound uint8
	move  uint8
}

type move struct {
	f   uint64 // stones flipped
	key int32  // ordering key, higher first
	sq  uint8
}

type rootMove struct {
	move
	score int
}

// searcher holds one AlphaBeta call's state. It is pooled because the
// transposition table is large enough that allocating it per move would show
// up in the garbage collector.
type searcher struct {
	tt      []ttEntry
	nodes   uint64
	timed   bool
	hard    time.Time
	aborted bool
	rng     *rand.Rand
	root    [maxMoves]rootMove
	nroot   int
}

var searchers = sync.Pool{New: func() any {
	return &searcher{tt: make([]ttEntry, 1<<ttBits)}
}}

func (s *searcher) clearTT() { clear(s.tt) }

func (s *searcher) probe(p, o uint64) *ttEntry {
	h := p*0x9e3779b97f4a7c15 ^ (o+0x632be59bd9b4e019)*0xc2b2ae3d27d4eb4f
	h ^= h >> 29
	return &s.tt[h>>(64-ttBits)]
}

// tick counts a node and reports whether the search has run out of time.
func (s *searcher) tick() bool {
	s.nodes++
	if s.nodes%checkEvery == 0 && s.timed && time.Now().After(s.hard) {
		s.aborted = true
	}
	return s.aborted
}

// squareBonus orders moves cheaply near the leaves: corners first, squares
// that give corners away last.
var squareBonus = [64]int8{
	20, -4, 4, 2, 2, 4, -4, 20,
	-4, -12, -1, -1, -1, -1, -12, -4,
	4, -1, 1, 0, 0, 1, -1, 4,
	2, -1, 0, 0, 0, 0, -1, 2,
	2, -1, 0, 0, 0, 0, -1, 2,
	4, -1, 1, 0, 0, 1, -1, 4,
	-4, -12, -1, -1, -1, -1, -12, -4,
	20, -4, 4, 2, 2, 4, -4, 20,
}

// mobilityKey rates a move by how few replies it leaves (corner replies count
// double), the fastest-first rule that keeps alpha-beta trees narrow.
func mobilityKey(np, no uint64) int32 {
	m := moves(no, np)
	return -int32(popcount(m) + popcount(m&cornerMask))
}

// genMoves fills list with the moves of p and returns how many there are,
// sorted by key. ttMove, if legal, is placed first. depth is the remaining
// midgame depth, or 0 for the exact solver.
func genMoves(list *[maxMoves]move, p, o, mv uint64, ttMove uint8, depth int) int {
	n := 0
	for ; mv != 0; mv &= mv - 1 {
		sq := bits.TrailingZeros64(mv)
		f := flips(p, o, sq)
		np, no := p|f|1<<uint(sq), o&^f
		var key int32
		switch {
		case uint8(sq) == ttMove:
			key = 1 << 30
		case depth >= evalOrderDepth:
			key = -int32(evaluate(no, np))
		case depth == 0:
			// The exact solver, which sorts at nearly every node: replies
			// now and empties next to our stones (the opponent's later
			// replies), weighed as measured on a set of 12-19 empty
			// positions.
			pot := neighbours(np) &^ (np | no)
			key = 16*mobilityKey(np, no) - 8*int32(popcount(pot)) + int32(squareBonus[sq])
		default:
			key = 16*mobilityKey(np, no) + int32(squareBonus[sq])
		}
		i := n
		for i > 0 && list[i-1].key < key {
			list[i] = list[i-1]
			i--
		}
		list[i] = move{f: f, key: key, sq: uint8(sq)}
		n++
	}
	return n
}

// search is fail-soft negamax alpha-beta with principal variation search and
// a transposition table. passed says the previous ply was a pass.
func (s *searcher) search(p, o uint64, depth, alpha, beta int, passed bool) int {
	if s.tick() {
		return 0
	}
	if depth <= 0 {
		return evaluate(p, o)
	}
	mv := moves(p, o)
	if mv == 0 {
		if passed {
			return final(p, o)
		}
		return -s.search(o, p, depth, -beta, -alpha, true)
	}

	e := s.probe(p, o)
	ttMove := uint8(noMove)
	if e.p == p && e.o == o && e.bound != 0 {
		ttMove = e.move
		if int(e.depth) >= depth {
			v := int(e.score)
			switch {
			case e.bound == boundExact,
				e.bound == boundLower && v >= beta,
				e.bound == boundUpper && v <= alpha:
				return v
			}
		}
	}

	var list [maxMoves]move
	n := genMoves(&list, p, o, mv, ttMove, depth)
	best, bestSq := -inf, uint8(noMove)
	a := alpha
	for i := range n {
		m := &list[i]
		np, no := p|m.f|1<<m.sq, o&^m.f
		var v int
		if i == 0 {
			v = -s.search(no, np, depth-1, -beta, -a, false)
		} else {
			v = -s.search(no, np, depth-1, -a-1, -a, false)
			if v > a && v < beta {
				v = -s.search(no, np, depth-1, -beta, -a, false)
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

	*e = ttEntry{p: p, o: o, score: int16(best), depth: int8(depth), bound: boundOf(best, alpha, beta), move: bestSq}
	return best
}

// boundOf says what a search result bounds: the exact value inside the
// window, an upper bound if it failed low, a lower bound if it failed high.
func boundOf(best, alpha, beta int) uint8 {
	switch {
	case best <= alpha:
		return boundUpper
	case best >= beta:
		return boundLower
	}
	return boundExact
}

// fillRoot lists the root moves, best first by a one-ply evaluation.
func (s *searcher) fillRoot(p, o uint64) {
	var list [maxMoves]move
	s.nroot = genMoves(&list, p, o, moves(p, o), noMove, evalOrderDepth)
	for i := range s.nroot {
		s.root[i] = rootMove{move: list[i], score: int(list[i].key)}
	}
}

// searchRoot runs one iteration over the root moves, a midgame search of the
// given depth or, with depth 0, an exact endgame solve. It returns the chosen
// move and its score, or ok false if the clock ran out first. Moves after the
// first are tested against a window just below the best score, so that a move
// that merely ties gets an exact score and can join the random draw among
// equals.
func (s *searcher) searchRoot(p, o uint64, depth int) (sq uint8, score int, ok bool) {
	child := func(np, no uint64, alpha, beta int) int {
		if depth == 0 {
			return -s.solve(no, np, -beta, -alpha, false)
		}
		return -s.search(no, np, depth-1, -beta, -alpha, false)
	}
	best, ties := -inf, 0
	for i := range s.nroot {
		m := &s.root[i]
		np, no := p|m.f|1<<m.sq, o&^m.f
		var v int
		if i == 0 {
			v = child(np, no, -inf, inf)
		} else {
			v = child(np, no, best-1, best)
			if v >= best && !s.aborted {
				v = child(np, no, best-1, inf)
			}
		}
		if s.aborted {
			return 0, 0, false
		}
		m.score = v
		switch {
		case v > best:
			best, sq, ties = v, m.sq, 1
		case v == best:
			ties++
			if intN(s.rng, ties) == 0 {
				sq = m.sq
			}
		}
	}
	return sq, best, true
}

// orderRoot sorts the root moves by their last scores with the chosen move
// first; the insertion sort is stable so earlier favourites stay ahead of
// equals.
func (s *searcher) orderRoot(first uint8) {
	r := s.root[:s.nroot]
	key := func(m *rootMove) int {
		if m.sq == first {
			return inf
		}
		return m.score
	}
	for i := 1; i < len(r); i++ {
		m := r[i]
		j := i
		for j > 0 && key(&r[j-1]) < key(&m) {
			r[j] = r[j-1]
			j--
		}
		r[j] = m
	}
}

// midgame deepens the heuristic search until the clock passes stop (abandoning
// the running iteration) or another iteration is unlikely to finish by then.
// It returns the choice of the last complete iteration and its depth; the
// first iteration is never abandoned, so there always is one.
func (s *searcher) midgame(p, o uint64, start, stop time.Time, maxDepth int) (sq uint8, depth int) {
	s.clearTT()
	s.hard, s.timed, s.aborted = stop, false, false
	last := start
	for d := 1; d <= max(1, maxDepth); d++ {
		best, _, ok := s.searchRoot(p, o, d)
		if !ok {
			break
		}
		sq, depth = best, d
		s.orderRoot(best)
		s.timed = true
		now := time.Now()
		// An iteration costs a few times the one before; when even twice the
		// last one would overrun, starting it is wasted time.
		if now.Add(2 * now.Sub(last)).After(stop) {
			break
		}
		last = now
	}
	return sq, depth
}

// chosen is what one AlphaBeta call decided, for tests and benchmarks.
type chosen struct {
	sq     othello.Square
	depth  int  // depth of the last complete midgame iteration
	solved bool // the move comes from an exact endgame solve
	score  int  // exact final disc difference when solved
	nodes  uint64
}

// AlphaBeta returns the move an iterative-deepening alpha-beta search prefers, exact in the endgame, using about half the time until deadline; othello.Pass if there is none.
func AlphaBeta(b *othello.Board, deadline time.Time, rng *rand.Rand) othello.Square {
	return choose(b, deadline, rng, -1).sq
}

// Choice is AlphaBeta's move and how it was found, for the engine's log.
type Choice struct {
	Square othello.Square
	Depth  int    // depth of the last complete midgame iteration
	Solved bool   // the move comes from an exact endgame solve
	Score  int    // exact final disc difference when solved
	Nodes  uint64 // positions searched
}

// AlphaBetaChoice is AlphaBeta with how the move was found.
func AlphaBetaChoice(b *othello.Board, deadline time.Time, rng *rand.Rand) Choice {
	c := choose(b, deadline, rng, -1)
	return Choice{Square: c.sq, Depth: c.depth, Solved: c.solved, Score: c.score, Nodes: c.nodes}
}

// choose is AlphaBeta; a depth of 0 or more replaces the clock with a fixed
// midgame depth and no endgame solve, for repeatable measurements.
func choose(b *othello.Board, deadline time.Time, rng *rand.Rand, fixedDepth int) chosen {
	legal := b.Legal()
	if legal == 0 {
		return chosen{sq: othello.Pass}
	}
	// A forced move needs no thought, and the time saved is the opponent's.
	if legal&(legal-1) == 0 && fixedDepth < 0 {
		return chosen{sq: othello.Square(bits.TrailingZeros64(legal))}
	}
	p, o := b.Bitboards()
	if b.Turn() != othello.Black {
		p, o = o, p
	}
	s := searchers.Get().(*searcher)
	defer searchers.Put(s)
	s.rng, s.nodes = rng, 0
	defer func() { s.rng = nil }()
	s.fillRoot(p, o)

	start := time.Now()
	if fixedDepth >= 0 {
		sq, depth := s.midgame(p, o, start, start.Add(time.Hour), fixedDepth)
		return chosen{sq: othello.Square(sq), depth: depth, nodes: s.nodes}
	}

	stop := start.Add(deadline.Sub(start) / 2)
	empties := 64 - popcount(p|o)
	if empties > solvable(stop.Sub(start)) {
		sq, depth := s.midgame(p, o, start, stop, empties)
		return chosen{sq: othello.Square(sq), depth: depth, nodes: s.nodes}
	}

	// A short midgame search first: it orders the root for the solver and is
	// the answer if the solve cannot finish in time.
	sq, depth := s.midgame(p, o, start, start.Add(stop.Sub(start)/4), empties-1)
	s.clearTT()
	s.hard, s.timed, s.aborted = stop, true, false
	if best, v, ok := s.searchRoot(p, o, 0); ok {
		return chosen{sq: othello.Square(best), depth: depth, solved: true, score: v, nodes: s.nodes}
	}
	return chosen{sq: othello.Square(sq), depth: depth, nodes: s.nodes}
}

func intN(rng *rand.Rand, n int) int {
	if rng == nil {
		return rand.IntN(n)
	}
	return rng.IntN(n)
}
