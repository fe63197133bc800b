// Package othelloai chooses Othello moves: uniformly at random, greedily by the
// weighted-square table of the seed classroom client, or by an alpha-beta
// search with an exact endgame solver. It only computes; it does no I/O and
// starts no goroutines. Every function draws its random choices from the rng
// it is given, so that a tournament can replay games from a seed; a nil rng
// means the global source.
package othelloai

import (
	"math/bits"
	"math/rand/v2"

	"github.com/taikai-dev/taikai/games/othello"
)

// Random returns a uniformly random legal move, or othello.Pass if there is none.
func Random(b *othello.Board, rng *rand.Rand) othello.Square {
	legal := b.Legal()
	if legal == 0 {
		return othello.Pass
	}
	return nthSquare(legal, intN(rng, bits.OnesCount64(legal)))
}

// nthSquare returns the square of the n-th set bit of set, counting from 0.
func nthSquare(set uint64, n int) othello.Square {
	for range n {
		set &= set - 1
	}
	return othello.Square(bits.TrailingZeros64(set))
}

// weights is the seed client's OthelloValue table. It is symmetric about its
// diagonal, so indexing it [x][y] like the seed's Check_Put(j, i) loop, or the
// other way round, gives the same value.
var weights = [8][8]int{
	{2500, 767, 607, 642, 642, 607, 767, 2500},
	{767, 344, 284, 103, 103, 284, 344, 767},
	{607, 284, 114, 182, 182, 114, 284, 607},
	{642, 103, 182, 202, 202, 182, 103, 642},
	{642, 103, 182, 202, 202, 182, 103, 642},
	{607, 284, 114, 182, 182, 114, 284, 607},
	{767, 344, 284, 103, 103, 284, 344, 767},
	{2500, 767, 607, 642, 642, 607, 767, 2500},
}

// Greedy returns the legal move weighing most in the seed client's table, ties drawn at random, or othello.Pass if there is none.
func Greedy(b *othello.Board, rng *rand.Rand) othello.Square {
	// The seed started from a weight of 155 and sent "PUT 0 0", an illegal
	// move, when nothing beat it; starting below every weight means any legal
	// move beats no move.
	best, ties := othello.Pass, 0
	bestWeight := -1
	for legal := b.Legal(); legal != 0; legal &= legal - 1 {
		sq := othello.Square(bits.TrailingZeros64(legal))
		w := weights[sq.X()][sq.Y()]
		switch {
		case w > bestWeight:
			best, bestWeight, ties = sq, w, 1
		case w == bestWeight:
			// Reservoir sampling: the k-th tie replaces the choice with
			// probability 1/k, which leaves every tie equally likely.
			ties++
			if intN(rng, ties) == 0 {
				best = sq
			}
		}
	}
	return best
}
