// Package all registers every wire protocol taikai speaks: import it for its
// effect. Adding a protocol is its own package and one line here.
package all

import (
	_ "github.com/taikai-dev/taikai/engines/protocol/checkersboard" // registers checkers-board
	_ "github.com/taikai-dev/taikai/engines/protocol/gomokuturn"    // registers gomoku-turn
	_ "github.com/taikai-dev/taikai/engines/protocol/nboard"        // registers nboard
	_ "github.com/taikai-dev/taikai/engines/protocol/othelloboard"  // registers othello-board
	_ "github.com/taikai-dev/taikai/engines/protocol/othellomove"   // registers othello-move
	_ "github.com/taikai-dev/taikai/engines/protocol/pbrain"        // registers pbrain
)
