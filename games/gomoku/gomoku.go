// Package gomoku holds the rules of Gomoku on an N x N board under the four rule
// sets of the gomoku-turn protocol (seed, freestyle, standard, renju): fives,
// overlines, and the forbidden double-three, double-four and overline with the
// RIF refinement for renju. It does no I/O.
//
// Every rule question is answered by looking only along the four lines through
// the point asked about, so a referee can check a move in well under a
// microsecond.
//
// Where PROTOCOLS.md §3 leaves a point open, this package decides:
//   - A five, four or three is counted only on a line through the new stone and
//     must hold it. A "five" is what wins for that side under the rule, so under
//     standard, and for black under renju, a four whose only completion makes six
//     is no four, and a three whose straight four would have an overline end is
//     no three.
//   - Fours on one line are counted by the points that complete them: a straight
//     four (two completions around four in a row) is one four; two completions
//     around a shorter run (X X X . ? . X X X, X . X ? X . X) are two fours, a
//     double-four on one line.
//   - A line on which the stone makes a four does not also count as a three, so a
//     four-three is one four and one three.
//   - Under seed a three is plain: any stone that makes a straight four will do,
//     allowed or not (the seed server knew no RIF refinement). Double-fours and
//     overlines are allowed under seed, and under seed a five is five or more.
//   - Under renju the refinement recurses: a three counts only if one of its
//     straight-four points is itself allowed for black once the stone stands.
//   - A five wins even if the same stone makes an overline, double-four or
//     double-three elsewhere.
//   - When every empty point is forbidden for the side to move, that side is
//     skipped; when neither side has an allowed point, the game is a draw.
package gomoku

import (
	"fmt"

	"github.com/taikai-dev/taikai/games"
)

// The two colours and the empty point are games' colours, with the values of
// the classroom protocols: Black (player 0, moves first) 1, White (player 1)
// -1, Empty (no stone, games.None) 0. A point's content is a games.Color too.
const (
	Empty = games.None
	Black = games.Black
	White = games.White
)

// wall is what lies beyond the edge; it blocks a line like an opponent stone.
const wall games.Color = 2

// Rule is a rule set: who wins and which moves are forbidden.
type Rule uint8

// The rule sets of PROTOCOLS.md §3. Seed is the zero value because it is the
// default of the gomoku-turn protocol.
const (
	// Seed: five or more wins; double-three is forbidden for both sides unless
	// the move makes five.
	Seed Rule = iota
	// Freestyle: five or more wins; nothing is forbidden.
	Freestyle
	// Standard: exactly five wins; an overline neither wins nor is forbidden.
	Standard
	// Renju: black wins with exactly five and may not make a double-three,
	// double-four or overline; white wins with five or more.
	Renju
)

var ruleNames = [...]string{Seed: "seed", Freestyle: "freestyle", Standard: "standard", Renju: "renju"}

// ParseRule reads a rule name; the empty string means Seed.
func ParseRule(s string) (Rule, error) {
	if s == "" {
		return Seed, nil
	}
	for r, name := range ruleNames {
		if s == name {
			return Rule(r), nil
		}
	}
	return 0, fmt.Errorf("gomoku rule %q: want seed, freestyle, standard or renju", s)
}

// String returns the name ParseRule reads.
func (r Rule) String() string {
	if int(r) < len(ruleNames) {
		return ruleNames[r]
	}
	return fmt.Sprintf("Rule(%d)", uint8(r))
}

// Board sizes accepted by NewBoard and NewGame (the gomoku-turn option size).
const (
	MinSize     = 5  // smallest board with room for a five
	MaxSize     = 25 // largest board the protocol allows
	DefaultSize = 15 // the seed server's board
)

// Point is a cell: X is the column from the left, Y the row from the top, (0,0)
// the top-left corner.
type Point struct{ X, Y int }
