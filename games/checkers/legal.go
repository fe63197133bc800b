package checkers

import "github.com/taikai-dev/taikai/games"

// Legal lists the side to move's legal moves (games.Lister): a person's
// board shows them.
func (r *rules) Legal() []games.Move {
	ms := r.legal()
	out := make([]games.Move, len(ms))
	for i, m := range ms {
		out[i] = ToMove(m)
	}
	return out
}
