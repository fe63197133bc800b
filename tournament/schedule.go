package tournament

// Pairing is one scheduled game: the seats (indexes into the entrants) that
// play black and white.
type Pairing struct {
	Index int64 // position in the schedule
	Round int64 // round number over all legs, 0-based
	Black int
	White int
	Pair  int64  // the game pair it is one of, from 1 (both games start from one opening); 0: none
	Slot  string // the format's slot it fills (swiss, knockout: Slot.Key), "" for a fixed schedule
}

// Schedule is a tournament's games in order: game k is computed, never stored.
type Schedule interface {
	Total() int64
	Game(k int64) Pairing // 0 <= k < Total()
}

// Paired plays every game of a schedule twice in a row, the second time with
// colours swapped: games 2j and 2j+1 are game pair j+1.
type Paired struct{ Of Schedule }

// Total is twice the games of the schedule.
func (s Paired) Total() int64 { return 2 * s.Of.Total() }

// Game returns the k-th game.
func (s Paired) Game(k int64) Pairing {
	p := s.Of.Game(k / 2)
	if k%2 == 1 {
		p.Black, p.White = p.White, p.Black
	}
	p.Index, p.Pair = k, k/2+1
	return p
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

// Gauntlet is the schedule of a gauntlet: entrant 0 plays each of the others
// Legs games, colours alternating from leg to leg; each leg meets the
// opponents in turn.
type Gauntlet struct {
	N    int
	Legs int
}

// Total is the number of games.
func (s Gauntlet) Total() int64 {
	if s.N < 2 || s.Legs < 1 {
		return 0
	}
	return int64(s.Legs) * int64(s.N-1)
}

// Game returns the k-th game, 0 <= k < Total().
func (s Gauntlet) Game(k int64) Pairing {
	n := int64(s.N - 1)
	leg, j := k/n, int(k%n)+1
	p := Pairing{Index: k, Round: leg, Black: 0, White: j}
	if leg%2 == 1 {
		p.Black, p.White = j, 0
	}
	return p
}

// Match is the schedule of `taikai match`: Games games between two
// entrants, the first black in the even ones; with Pairs, games 2j and 2j+1
// are game pair j+1.
type Match struct {
	Games int64
	Pairs bool
}

// Total is the number of games.
func (s Match) Total() int64 { return s.Games }

// Game returns the k-th game, 0 <= k < Total().
func (s Match) Game(k int64) Pairing {
	p := Pairing{Index: k, Round: k, Black: int(k % 2), White: 1 - int(k%2)}
	if s.Pairs {
		p.Pair = k/2 + 1
	}
	return p
}
