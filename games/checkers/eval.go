package checkers

import (
	"math/bits"

	"github.com/taikai-dev/taikai/games"
)

// The seed's evaluation (seed 004, section 2), per piece of a side:
const (
	PiecePoints  = 20 // every piece
	RowPoints    = 5  // per row advanced from its own back row (0 on it, 35 on the far row)
	GuardPoints  = 10 // per friendly piece on the two squares diagonally behind it
	ThreatPoints = 10 // taken off if an enemy piece could capture it now
	FarRowPoints = 50 // standing on the far row (in addition to its 35 row points)
)

// Score is the seed's evaluation of each side: the sum over its pieces of
// PiecePoints, RowPoints per row advanced, GuardPoints per friendly piece
// diagonally behind it ("protected from behind": the two squares toward its
// own back row, each friendly piece counted), minus ThreatPoints if an enemy
// piece could capture it now whoever is to move (an enemy man or king next
// to it, able to jump in that direction, with the square beyond empty; once
// per piece however many could), plus FarRowPoints on the far row; the row
// points and the far-row points add. Kings (English rules only) count as men
// of their row. Under the seed rules the higher Score wins a finished game.
func (p *Position) Score() (black, white int) {
	return p.side(games.Black), p.side(games.White)
}

func (p *Position) side(c games.Color) int {
	own, enemy := p.Black, p.White
	behind, farY := upDirs, 7
	if c == games.White {
		own, enemy = p.White, p.Black
		behind, farY = downDirs, 0
	}
	occ := p.Black | p.White
	total := 0
	for b := own; b != 0; b &= b - 1 {
		s := Square(bits.TrailingZeros32(b))
		v := PiecePoints
		if c == games.Black {
			v += RowPoints * s.Y()
		} else {
			v += RowPoints * (7 - s.Y())
		}
		for _, d := range behind {
			if t := step[s][d]; t != NoSquare && own&bit(t) != 0 {
				v += GuardPoints
			}
		}
		if p.threatened(s, enemy, occ, c) {
			v -= ThreatPoints
		}
		if s.Y() == farY {
			v += FarRowPoints
		}
		total += v
	}
	return total
}

// threatened reports whether a piece of enemy could jump the piece of c on s.
func (p *Position) threatened(s Square, enemy, occ uint32, c games.Color) bool {
	for d := range 4 {
		a, land := step[s][d], step[s][3-d]
		if a == NoSquare || land == NoSquare || enemy&bit(a) == 0 || occ&bit(land) != 0 {
			continue
		}
		// The attacker on a jumps in direction 3-d: up (0, 1) for a white
		// man, down (2, 3) for a black man, any way for a king.
		up := 3-d < 2
		if p.Kings&bit(a) != 0 || (c == games.Black) == up {
			return true
		}
	}
	return false
}
