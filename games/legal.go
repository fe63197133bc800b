package games

// Lister is implemented by Rules whose moves cannot be found by trying each
// point (checkers' moves are paths): it lists the legal moves of the side
// to move.
type Lister interface {
	Legal() []Move
}

// Explainer is implemented by Rules that can say more of a refused move than
// its Refusal: which pattern forbids a point ("double three").
type Explainer interface {
	Explain(m Move) string
}

// Choices are the moves the side to move may make, for a person choosing
// one on a board: the legal moves, and the empty points the rules forbid it
// (Renju's forbidden points for black), to be marked.
type Choices struct {
	Legal     []Move
	Forbidden []Point
	// Fouls says, beside each forbidden point, why it is (Explainer), or "".
	Fouls []string
}

// Foul is why p is forbidden, as Choices list it; "" if it is not or the
// rules do not say.
func (c Choices) Foul(p Point) string {
	for i, q := range c.Forbidden {
		if q == p && i < len(c.Fouls) {
			return c.Fouls[i]
		}
	}
	return ""
}

// ChoicesOf lists the moves of the side to move in r: by Lister where the
// rules have it, else by checking every point and the pass. A finished
// position has none.
func ChoicesOf(r Rules) Choices {
	var c Choices
	if r.Turn() == None || r.Finished() && !r.CanPass() {
		return c
	}
	if l, ok := r.(Lister); ok {
		c.Legal = l.Legal()
		return c
	}
	n := r.Size()
	for y := range n {
		for x := range n {
			if r.At(x, y) != 0 {
				continue
			}
			switch why, ok := r.Check(Move{X: x, Y: y}); {
			case ok:
				c.Legal = append(c.Legal, Move{X: x, Y: y})
			case why == Forbidden:
				c.Forbidden = append(c.Forbidden, Point{x, y})
				foul := ""
				if e, ok := r.(Explainer); ok {
					foul = e.Explain(Move{X: x, Y: y})
				}
				c.Fouls = append(c.Fouls, foul)
			}
		}
	}
	if _, ok := r.Check(PassMove); ok && r.CanPass() {
		c.Legal = append(c.Legal, PassMove)
	}
	return c
}
