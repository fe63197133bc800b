package web_test

// The games and protocols taikai registers, as the taikai binary has them.
import (
	_ "github.com/taikai-dev/taikai/engines/protocol/all"
	_ "github.com/taikai-dev/taikai/games/all"
)
