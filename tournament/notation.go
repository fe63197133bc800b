package tournament

import (
	"strconv"

	"github.com/taikai-dev/taikai/games/othello"
)

// MoveText names a move for people: Othello in algebraic notation ("f5"),
// Gomoku as "x,y" in the protocol's coordinates, a pass as "pass".
func MoveText(game string, m Move) string {
	switch {
	case m.Pass:
		return "pass"
	case game == "othello":
		return othello.At(m.X, m.Y).String()
	}
	return strconv.Itoa(m.X) + "," + strconv.Itoa(m.Y)
}
