package othello

import (
	"fmt"

	"github.com/taikai-dev/taikai/games"
)

// Order is the layout of a 64-cell list on the wire.
type Order int8

const (
	// ColumnMajor lists the board column by column: index 8*x + y. It is the
	// order of the classroom server's BOARD line (PROTOCOLS.md §1).
	ColumnMajor Order = iota
	// RowMajor lists the board row by row: index 8*y + x.
	RowMajor
)

// ParseOrder reads "column" or "row".
func ParseOrder(s string) (Order, error) {
	switch s {
	case "column", "":
		return ColumnMajor, nil
	case "row":
		return RowMajor, nil
	}
	return 0, fmt.Errorf("board order %q: want column or row", s)
}

// String returns "column" or "row".
func (o Order) String() string {
	if o == RowMajor {
		return "row"
	}
	return "column"
}

// Cells returns the 64 cells in the given order.
func (b *Board) Cells(order Order) [64]games.Color {
	var out [64]games.Color
	for s := Square(0); s < 64; s++ {
		c := Empty
		switch {
		case b.black&bit(s) != 0:
			c = Black
		case b.white&bit(s) != 0:
			c = White
		}
		if order == ColumnMajor {
			out[8*s.X()+s.Y()] = c
		} else {
			out[s] = c
		}
	}
	return out
}

// FromCells builds a position from 64 cells in the given order and the side to move.
func FromCells(cells [64]games.Color, order Order, turn games.Color) Board {
	var b Board
	b.turn = turn
	for i, c := range cells {
		s := Square(i)
		if order == ColumnMajor {
			s = At(i/8, i%8)
		}
		switch c {
		case Black:
			b.black |= bit(s)
		case White:
			b.white |= bit(s)
		}
	}
	return b
}
