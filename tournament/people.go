package tournament

import (
	"context"
	"sync"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
)

// KindPlay is a game between a person and an engine, or two people (issue
// 39): a tournament of one game whose entrants are black and white, kept
// out of standings and ratings.
const KindPlay = "play"

// People are the persons' seats of the games being played: the runner opens
// a seat for each entrant of protocol engines.Human, and the API finds it by
// game to play the person's moves.
type People struct {
	mu    sync.Mutex
	seats map[int64]*[2]*engines.Person // by game id
	games map[int64]int64               // game id by tournament id
	added chan struct{}                 // closed and replaced when a game opens
}

// open makes the seat of a person playing color c in a game.
func (pp *People) open(spec GameSpec, c games.Color) *engines.Person {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	pp.init()
	s := pp.seats[spec.ID]
	if s == nil {
		s = new([2]*engines.Person)
		pp.seats[spec.ID] = s
	}
	p := engines.NewPerson(c)
	s[c.Index()] = p
	pp.games[spec.TournamentID] = spec.ID
	close(pp.added)
	pp.added = make(chan struct{})
	return p
}

func (pp *People) init() {
	if pp.seats == nil {
		pp.seats = map[int64]*[2]*engines.Person{}
		pp.games = map[int64]int64{}
		pp.added = make(chan struct{})
	}
}

// closeGame forgets a game's seats once it is over.
func (pp *People) closeGame(spec GameSpec) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	// games keeps the game's id: the API may ask for it after a game that
	// ended at once (its engine did not start).
	delete(pp.seats, spec.ID)
}

// Seat returns the seat of the person playing c in a game being played.
func (pp *People) Seat(gameID int64, c games.Color) (*engines.Person, bool) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	s := pp.seats[gameID]
	if s == nil || s[c.Index()] == nil {
		return nil, false
	}
	return s[c.Index()], true
}

// Playing reports whether a game with a person is being played.
func (pp *People) Playing(gameID int64) bool {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	return pp.seats[gameID] != nil
}

// Game waits until the game of a play tournament has opened its persons'
// seats and returns its id, or ctx's error.
func (pp *People) Game(ctx context.Context, tournamentID int64) (int64, error) {
	for {
		pp.mu.Lock()
		pp.init()
		id, ok := pp.games[tournamentID]
		added := pp.added
		pp.mu.Unlock()
		if ok {
			return id, nil
		}
		select {
		case <-added:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}
