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

// MoveView is a move as people and tools read it (the API, `taikai match
// --json`, the live view): a pass has null coordinates and the text "pass".
type MoveView struct {
	Ply   int    `json:"ply,omitempty"`
	Color string `json:"color"`
	X     *int   `json:"x"`
	Y     *int   `json:"y"`
	Text  string `json:"text"`
	MS    int64  `json:"ms"`
	Auto  bool   `json:"auto,omitempty"`
}

// View renders move number ply (from 1) of a game of the given kind.
func (m Move) View(game string, ply int) MoveView {
	v := MoveView{Ply: ply, Color: m.Color.String(), Text: MoveText(game, m), MS: m.MS, Auto: m.Auto}
	if !m.Pass {
		x, y := m.X, m.Y
		v.X, v.Y = &x, &y
	}
	return v
}
