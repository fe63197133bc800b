package othelloai

import "math/bits"

// The search keeps a position as (p, o): the stones of the side to move and of
// its opponent, bit y*8+x as in package othello. Swapping the pair is a move
// hand-over, so one negamax routine serves both colours.

const (
	notFileA uint64 = 0xfefefefefefefefe
	notFileH uint64 = 0x7f7f7f7f7f7f7f7f
	// Opponent stones that can lie inside a horizontal or diagonal run: a run
	// never crosses file a or h, and masking them stops shifts from wrapping.
	innerCols uint64 = 0x7e7e7e7e7e7e7e7e
	innerAll  uint64 = 0x007e7e7e7e7e7e00

	cornerMask uint64 = 0x8100000000000081
)

// moves returns the placements of p against o. Each direction is a parallel
// fill through runs of up to six opponent stones; the second half of each fill
// doubles its stride so the run is covered in four steps instead of six.
func moves(p, o uint64) uint64 {
	empty := ^(p | o)
	h := o & innerCols
	d := o & innerAll
	return (fillUp(p, h, 1) | fillDown(p, h, 1) |
		fillUp(p, o, 8) | fillDown(p, o, 8) |
		fillUp(p, d, 7) | fillDown(p, d, 7) |
		fillUp(p, d, 9) | fillDown(p, d, 9)) & empty
}

// fillUp returns the squares just past runs of mask stones that start next to
// a p stone, walking towards higher bit indices by n.
func fillUp(p, mask uint64, n uint) uint64 {
	f := mask & (p << n)
	f |= mask & (f << n)
	pre := mask & (mask << n)
	f |= pre & (f << (2 * n))
	f |= pre & (f << (2 * n))
	return f << n
}

// fillDown is fillUp towards lower bit indices.
func fillDown(p, mask uint64, n uint) uint64 {
	f := mask & (p >> n)
	f |= mask & (f >> n)
	pre := mask & (mask >> n)
	f |= pre & (f >> (2 * n))
	f |= pre & (f >> (2 * n))
	return f >> n
}

// rays[sq] holds, per direction, the squares from sq (exclusive) to the board
// edge. The first four directions walk to higher bit indices, the last four to
// lower ones, which is what lets flips find the nearest blocker with a single
// lowest- or highest-bit operation instead of a loop.
var rays [64][8]uint64

func init() {
	steps := [8][2]int{{1, 0}, {0, 1}, {1, 1}, {-1, 1}, {-1, 0}, {0, -1}, {-1, -1}, {1, -1}}
	for sq := range 64 {
		for d, st := range steps {
			x, y := sq&7+st[0], sq>>3+st[1]
			for x >= 0 && x < 8 && y >= 0 && y < 8 {
				rays[sq][d] |= 1 << uint(y*8+x)
				x, y = x+st[0], y+st[1]
			}
		}
	}
}

// flips returns the o stones that a p stone placed on the empty square sq
// turns over; zero means the placement is illegal.
func flips(p, o uint64, sq int) uint64 {
	var f uint64
	r := &rays[sq]
	for d := range 4 {
		ray := r[d]
		b := ray &^ o
		b &= -b // nearest square on the ray that is not an opponent stone
		if b&p != 0 {
			f |= ray & (b - 1)
		}
	}
	for d := 4; d < 8; d++ {
		ray := r[d]
		if b := ray &^ o; b != 0 {
			hi := uint64(1) << uint(63-bits.LeadingZeros64(b))
			if hi&p != 0 {
				f |= ray &^ (hi<<1 - 1)
			}
		}
	}
	return f
}

// neighbours returns the squares adjacent to any square of x.
func neighbours(x uint64) uint64 {
	return (x<<1|x>>7|x<<9)&notFileA |
		(x>>1|x<<7|x>>9)&notFileH |
		x<<8 | x>>8
}

func popcount(x uint64) int { return bits.OnesCount64(x) }
