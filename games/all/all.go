// Package all registers every game taikai plays: import it for its effect.
// Adding a game is its own package and one line here.
package all

import (
	_ "github.com/taikai-dev/taikai/games/checkers" // registers checkers
	_ "github.com/taikai-dev/taikai/games/gomoku"   // registers gomoku
	_ "github.com/taikai-dev/taikai/games/othello"  // registers othello
)
