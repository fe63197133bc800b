package othelloai

// Scores of the midgame search are in hundredths of a disc, so that a finished
// game (winScore plus the margin) outranks any heuristic judgement.
const (
	discUnit = 100
	winScore = 10000
	evalMax  = winScore / 2

	// Weights of the evaluation, set by hand from the usual Othello lore (a
	// corner is worth several discs, a move of mobility about one) rather
	// than fitted; they already beat the greedy engine in every game tried.
	mobilityWeight   = 70  // per legal move more than the opponent
	cornerMoveWeight = 120 // per corner the side could take next
	frontierWeight   = 25  // per stone next to an empty square
	cornerWeight     = 800
	xSquareWeight    = 350 // diagonal neighbour of an empty corner: hands it over
	cSquareWeight    = 120 // edge neighbour of an empty corner
	stableWeight     = 90
)

// corners lists each corner with its X-square and C-squares.
var corners = [4]struct{ corner, x, c uint64 }{
	{1 << 0, 1 << 9, 1<<1 | 1<<8},
	{1 << 7, 1 << 14, 1<<6 | 1<<15},
	{1 << 56, 1 << 49, 1<<48 | 1<<57},
	{1 << 63, 1 << 54, 1<<55 | 1<<62},
}

// final scores a finished game for p.
func final(p, o uint64) int {
	d := popcount(p) - popcount(o)
	switch {
	case d > 0:
		return winScore + d*discUnit
	case d < 0:
		return -winScore + d*discUnit
	}
	return 0
}

// evaluate judges the position for p, the side to move.
func evaluate(p, o uint64) int {
	mp, mo := moves(p, o), moves(o, p)
	if mp|mo == 0 {
		return final(p, o)
	}
	// Mobility dominates the middle game: the side with fewer moves is forced
	// into giving up edges and corners.
	v := mobilityWeight * (popcount(mp) - popcount(mo))
	v += cornerMoveWeight * (popcount(mp&cornerMask) - popcount(mo&cornerMask))

	// Stones next to empty squares give the opponent moves later.
	front := neighbours(^(p | o))
	v -= frontierWeight * (popcount(p&front) - popcount(o&front))

	v += cornerWeight * (popcount(p&cornerMask) - popcount(o&cornerMask))
	for _, c := range corners {
		if (p|o)&c.corner != 0 {
			continue
		}
		v -= xSquareWeight * (popcount(p&c.x) - popcount(o&c.x))
		v -= cSquareWeight * (popcount(p&c.c) - popcount(o&c.c))
	}

	if (p|o)&cornerMask != 0 {
		v += stableWeight * (popcount(stable(p, o)) - popcount(stable(o, p)))
	}

	// Discs only start to matter once the board fills up; early on, fewer
	// discs usually means more mobility later.
	if filled := popcount(p | o); filled > 40 {
		v += (filled - 40) * 4 * (popcount(p) - popcount(o))
	}

	return max(-evalMax, min(evalMax, v))
}

// Lines that a stone on them cannot be flipped along because it sits on the
// edge the line runs into.
const (
	fileAH    uint64 = 0x8181818181818181
	rank18    uint64 = 0xff000000000000ff
	border    uint64 = fileAH | rank18
	rankMask  uint64 = 0xff
	fileAMask uint64 = 0x0101010101010101
)

// stable returns a subset of p's stones that can never be flipped: a stone is
// safe along a line when the line is full, when it touches the board edge on
// that line, or when a neighbour on that line is itself a stable p stone. The
// diagonal full-line case is left out to keep this cheap, so the set is an
// underestimate, which is the safe direction for an evaluation.
func stable(p, o uint64) uint64 {
	filled := p | o
	var fullH uint64
	for r := uint(0); r < 64; r += 8 {
		if (filled>>r)&rankMask == rankMask {
			fullH |= rankMask << r
		}
	}
	c := filled & (filled >> 8)
	c &= c >> 16
	c &= c >> 32
	fullV := (c & rankMask) * fileAMask

	hSafe := fullH | fileAH
	vSafe := fullV | rank18
	st := p & hSafe & vSafe & border
	for {
		h := hSafe | (st<<1)&notFileA | (st>>1)&notFileH
		v := vSafe | st<<8 | st>>8
		d9 := border | (st<<9)&notFileA | (st>>9)&notFileH
		d7 := border | (st<<7)&notFileH | (st>>7)&notFileA
		n := st | p&h&v&d9&d7
		if n == st {
			return st
		}
		st = n
	}
}
