package tournament

import (
	"fmt"

	"github.com/taikai-dev/taikai/games"
)

// CheckRecord replays a game's moves under set, as a result handed in by
// another process (a worker) must be checked before it is stored (issue 36,
// item 4): every ply is the side to move's and legal; a game the board ended
// (a final position, or two passes in a row) ends normally with the board's
// winner, and a game that ended normally ended so on the board. An aborted
// game scores nothing and is not checked.
func CheckRecord(set Settings, rec games.Record) error {
	if rec.Outcome.Reason == games.ReasonAborted {
		return nil
	}
	if !isReason(rec.Outcome.Reason) {
		return fmt.Errorf("reason %q is not a game-end reason", rec.Outcome.Reason)
	}
	if err := set.Validate(); err != nil { // the defaults, as the game was played
		return err
	}
	rules, err := set.newRules()
	if err != nil {
		return err
	}
	passes := 0
	for i, p := range rec.Moves {
		if passes >= 2 || rules.Turn() == games.None {
			return fmt.Errorf("ply %d: after the end of the game", i+1)
		}
		if p.Color != rules.Turn() {
			return fmt.Errorf("ply %d: %v moved, %v was to move", i+1, p.Color, rules.Turn())
		}
		m := p.Move
		if m.Pass {
			m = games.PassMove
		}
		if why, ok := rules.Check(m); !ok {
			return fmt.Errorf("ply %d: %v's move refused (%v)", i+1, p.Color, why)
		}
		rules.Play(m)
		if m.Pass {
			passes++
		} else {
			passes = 0
		}
	}
	over := passes >= 2 || rules.Turn() == games.None || rules.Finished()
	switch {
	case rec.Outcome.Reason == games.ReasonNormal && !over:
		return fmt.Errorf("a normal end after %d plies, but the game is not over on the board", len(rec.Moves))
	case rec.Outcome.Reason == games.ReasonNormal && rec.Outcome.Winner != rules.Winner():
		return fmt.Errorf("a normal end won by %v, but the board's winner is %v", rec.Outcome.Winner, rules.Winner())
	}
	return nil
}

func isReason(r string) bool {
	for _, x := range games.Reasons {
		if x == r {
			return true
		}
	}
	return false
}
