// Package othello holds the rules of Othello on bitboards: legal moves, flips,
// passes, the end of the game, the score and algebraic notation. It does no I/O.
package othello

import (
	"fmt"
	"github.com/taikai-dev/taikai/games"
	"math/bits"
)

// The two colours and the empty cell are games' colours, with the values the
// classroom protocol uses on the wire: Black (1), White (-1), Empty (0, games.None).
const (
	Empty = games.None
	Black = games.Black
	White = games.White
)

// Square is a cell index y*8+x (x = column a..h, y = row 1..8 minus one), or Pass.
type Square int8

// Pass is the move of a side that has no legal placement.
const Pass Square = 64

// At returns the square of column x and row y, both 0..7.
func At(x, y int) Square { return Square(y*8 + x) }

// X is the column, 0..7 from the left.
func (s Square) X() int { return int(s) & 7 }

// Y is the row, 0..7 from the top.
func (s Square) Y() int { return int(s) >> 3 }

// String returns the algebraic name ("f5") or "pass".
func (s Square) String() string {
	if s == Pass {
		return "pass"
	}
	if s < 0 || s > 63 {
		return fmt.Sprintf("Square(%d)", int8(s))
	}
	return string([]byte{'a' + byte(s.X()), '1' + byte(s.Y())})
}

// ParseSquare reads algebraic notation ("f5", "F5") or "pass" in any case.
func ParseSquare(s string) (Square, error) {
	if len(s) == 4 && (s[0]|0x20) == 'p' && (s[1]|0x20) == 'a' && (s[2]|0x20) == 's' && (s[3]|0x20) == 's' {
		return Pass, nil
	}
	if len(s) != 2 {
		return 0, fmt.Errorf("square %q: want a column letter a-h and a row digit 1-8", s)
	}
	c, r := s[0]|0x20, s[1]
	if c < 'a' || c > 'h' || r < '1' || r > '8' {
		return 0, fmt.Errorf("square %q: want a column letter a-h and a row digit 1-8", s)
	}
	return At(int(c-'a'), int(r-'1')), nil
}

// Board is a position: the stones of both colours and the side to move.
// The zero value is an empty board with nobody to move; use New for a game.
type Board struct {
	black, white uint64
	turn         games.Color
}

// New returns the start position: white on d4 and e5, black on e4 and d5, black to move.
func New() Board {
	return Board{
		black: bit(At(4, 3)) | bit(At(3, 4)),
		white: bit(At(3, 3)) | bit(At(4, 4)),
		turn:  Black,
	}
}

// FromBitboards builds a position from two bitboards (bit y*8+x) and the side to move.
// It panics if the bitboards overlap.
func FromBitboards(black, white uint64, turn games.Color) Board {
	if black&white != 0 {
		panic("othello: black and white overlap")
	}
	return Board{black: black, white: white, turn: turn}
}

func bit(s Square) uint64 { return 1 << uint(s) }

// Bitboards returns the black and white stones (bit y*8+x).
func (b *Board) Bitboards() (black, white uint64) { return b.black, b.white }

// Turn returns the side to move.
func (b *Board) Turn() games.Color { return b.turn }

// At returns the colour on column x, row y.
func (b *Board) At(x, y int) games.Color {
	m := bit(At(x, y))
	switch {
	case b.black&m != 0:
		return Black
	case b.white&m != 0:
		return White
	}
	return Empty
}

func (b *Board) mine() (own, opp uint64) {
	if b.turn == Black {
		return b.black, b.white
	}
	return b.white, b.black
}

// Legal returns the squares the side to move may play, as a bitboard.
func (b *Board) Legal() uint64 {
	own, opp := b.mine()
	return moves(own, opp)
}

// OpponentLegal returns the squares the side not to move could play.
func (b *Board) OpponentLegal() uint64 {
	own, opp := b.mine()
	return moves(opp, own)
}

// MustPass reports whether the side to move has no placement but the game goes on.
func (b *Board) MustPass() bool { return b.Legal() == 0 && b.OpponentLegal() != 0 }

// Over reports whether neither side can place a stone.
func (b *Board) Over() bool { return b.Legal() == 0 && b.OpponentLegal() == 0 }

// Count returns the number of black and white stones.
func (b *Board) Count() (black, white int) {
	return bits.OnesCount64(b.black), bits.OnesCount64(b.white)
}

// Empties returns the number of empty squares.
func (b *Board) Empties() int { return 64 - bits.OnesCount64(b.black|b.white) }

// Winner returns the colour with more stones, or Empty for a draw.
func (b *Board) Winner() games.Color {
	nb, nw := b.Count()
	switch {
	case nb > nw:
		return Black
	case nw > nb:
		return White
	}
	return Empty
}

// Flips returns the stones a placement on s by the side to move would turn over;
// zero means the placement is not legal (occupied, or flips nothing).
func (b *Board) Flips(s Square) uint64 {
	if s < 0 || s > 63 {
		return 0
	}
	m := bit(s)
	if (b.black|b.white)&m != 0 {
		return 0
	}
	own, opp := b.mine()
	return flips(own, opp, m)
}

// Play makes move s for the side to move and returns the stones it turned over.
// A pass is legal only when the side to move has no placement. Play reports an
// error and leaves the board unchanged for an illegal move.
func (b *Board) Play(s Square) (uint64, error) {
	if s == Pass {
		if b.Legal() != 0 {
			return 0, ErrPassNotAllowed
		}
		b.turn = -b.turn
		return 0, nil
	}
	if s < 0 || s > 63 {
		return 0, ErrOffBoard
	}
	if (b.black|b.white)&bit(s) != 0 {
		return 0, ErrOccupied
	}
	f := b.Flips(s)
	if f == 0 {
		return 0, ErrNoFlip
	}
	b.apply(bit(s), f)
	return f, nil
}

// apply places m and flips f for the side to move, then hands the move over.
func (b *Board) apply(m, f uint64) {
	if b.turn == Black {
		b.black |= m | f
		b.white &^= f
	} else {
		b.white |= m | f
		b.black &^= f
	}
	b.turn = -b.turn
}

// Errors of Play, so that a referee can tell a client why a move was refused.
var (
	ErrOffBoard       = fmt.Errorf("off the board")
	ErrOccupied       = fmt.Errorf("square occupied")
	ErrNoFlip         = fmt.Errorf("flips nothing")
	ErrPassNotAllowed = fmt.Errorf("pass while a move exists")
)

// Board edges, used to stop a shift from wrapping to the next row.
const (
	notFileA uint64 = 0xfefefefefefefefe
	notFileH uint64 = 0x7f7f7f7f7f7f7f7f
)

// The eight directions as shift amounts and wrap masks (applied after the shift).
var dirs = [8]struct {
	shift int
	mask  uint64
}{
	{1, notFileA}, {-1, notFileH}, {8, ^uint64(0)}, {-8, ^uint64(0)},
	{9, notFileA}, {7, notFileH}, {-7, notFileA}, {-9, notFileH},
}

func shift(x uint64, s int, mask uint64) uint64 {
	if s > 0 {
		return (x << uint(s)) & mask
	}
	return (x >> uint(-s)) & mask
}

// moves returns the placements of own against opp (dumb7fill in each direction).
func moves(own, opp uint64) uint64 {
	empty := ^(own | opp)
	var legal uint64
	for _, d := range dirs {
		x := shift(own, d.shift, d.mask) & opp
		x |= shift(x, d.shift, d.mask) & opp
		x |= shift(x, d.shift, d.mask) & opp
		x |= shift(x, d.shift, d.mask) & opp
		x |= shift(x, d.shift, d.mask) & opp
		x |= shift(x, d.shift, d.mask) & opp
		legal |= shift(x, d.shift, d.mask) & empty
	}
	return legal
}

// flips returns the opponent stones bracketed by a stone placed on m.
func flips(own, opp, m uint64) uint64 {
	var f uint64
	for _, d := range dirs {
		var line uint64
		x := shift(m, d.shift, d.mask)
		for x&opp != 0 {
			line |= x
			x = shift(x, d.shift, d.mask)
		}
		if x&own != 0 {
			f |= line
		}
	}
	return f
}

// Squares lists the squares of a bitboard in increasing order.
func Squares(set uint64) []Square {
	out := make([]Square, 0, bits.OnesCount64(set))
	for set != 0 {
		out = append(out, Square(bits.TrailingZeros64(set)))
		set &= set - 1
	}
	return out
}

// Perft counts the move sequences of the given depth from b. A forced pass counts
// as a move; a finished game counts as one sequence however deep it is asked.
func Perft(b Board, depth int) uint64 {
	if depth == 0 {
		return 1
	}
	legal := b.Legal()
	if legal == 0 {
		if b.OpponentLegal() == 0 {
			return 1
		}
		b.turn = -b.turn
		return Perft(b, depth-1)
	}
	if depth == 1 {
		return uint64(bits.OnesCount64(legal))
	}
	var n uint64
	own, opp := b.mine()
	for legal != 0 {
		m := legal & -legal
		legal &^= m
		c := b
		c.apply(m, flips(own, opp, m))
		n += Perft(c, depth-1)
	}
	return n
}
