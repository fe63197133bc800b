package tournament

// Pairing is one scheduled game: the seats (indexes into the entrants) that
// play black and white.
type Pairing struct {
	Index int64 // position in the schedule
	Round int64 // round number over all legs, 0-based
	Black int
	White int
}

// RoundRobin is the schedule of a round robin in which every pair of N entrants
// plays Legs games, colours alternating from leg to leg. Games are ordered by
// rounds of the circle method (Berger tables): within a round every entrant
// plays at most once, so at any moment every entrant has played about as many
// games as the others. Game k is computed, never stored: a schedule of a
// million games costs nothing.
type RoundRobin struct {
	N    int
	Legs int
}

// Total is the number of games.
func (s RoundRobin) Total() int64 {
	if s.N < 2 || s.Legs < 1 {
		return 0
	}
	return int64(s.Legs) * int64(s.N) * int64(s.N-1) / 2
}

// perRound is the number of games in one round; rounds is the number of rounds
// in one leg.
func (s RoundRobin) shape() (perRound, rounds int64, m int) {
	m = s.N + s.N%2 // an odd field gets a bye, the fixed position
	return int64(s.N / 2), int64(m - 1), m
}

// Game returns the k-th game of the schedule, 0 <= k < Total().
func (s RoundRobin) Game(k int64) Pairing {
	perRound, rounds, m := s.shape()
	perLeg := perRound * rounds
	leg := k / perLeg
	rem := k % perLeg
	r := rem / perRound
	j := int(rem % perRound)
	if s.N%2 == 1 {
		j++ // position 0 would meet the bye
	}
	fixed := m - 1
	var a, b int
	if j == 0 {
		// The fixed entrant alternates colours from round to round.
		a, b = fixed, int(r)
		if r%2 == 1 {
			a, b = b, a
		}
	} else {
		a = int((r + int64(j)) % int64(m-1))
		b = int((r - int64(j) + int64(m-1)) % int64(m-1))
	}
	if leg%2 == 1 {
		a, b = b, a
	}
	return Pairing{Index: k, Round: leg*rounds + r, Black: a, White: b}
}
