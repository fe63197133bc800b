package tournament

import (
	"context"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
)

// Tournament statuses.
const (
	StatusPending   = "pending"
	StatusRunning   = "running"
	StatusFinished  = "finished"
	StatusCancelled = "cancelled"
	StatusPaused    = "paused" // a league that starts no game until it is started again
)

// Game statuses.
const (
	GameScheduled = "scheduled"
	GameRunning   = "running"
	GameFinished  = "finished"
	GameAborted   = "aborted"
)

// Kinds of tournament: its format (REST "format"), or a match.
const (
	KindRoundRobin = "round_robin"
	KindGauntlet   = "gauntlet" // the first engine against each of the others
	KindSwiss      = "swiss"    // Rounds rounds, paired within score groups
	KindKnockout   = "knockout" // a bracket of matches
	KindMatch      = "match"    // the games of `taikai match --db`
	KindLeague     = "league"   // never finishes: each entrant's current version plays the field
)

// Dynamic reports whether the tournament pairs each round from the results of
// the last (swiss, knockout): it has a Plan, not a Schedule.
func (t *Tournament) Dynamic() bool { return dynamic(t.Kind) }

// dynamic reports whether a kind pairs each round from the results of the
// last (a Plan), rather than by a fixed schedule.
func dynamic(kind string) bool { return kind == KindSwiss || kind == KindKnockout }

// Tournament is a set of engines playing a schedule under one set of settings.
type Tournament struct {
	ID           int64    `json:"id"`
	Name         string   `json:"name"`
	Kind         string   `json:"kind"`
	Settings     Settings `json:"settings"`
	Engines      []int64  `json:"engines"`             // entrants, in schedule order
	GamesPerPair int      `json:"games_per_pair"`      // games each pair of engines plays (swiss, knockout: each match)
	Rounds       int      `json:"rounds,omitempty"`    // swiss: the number of rounds
	MaxExtra     int      `json:"max_extra,omitempty"` // knockout: game pairs a tied match may add
	// League: the games a new version plays first (in pairs, spread over
	// the field), and whether its entrants are every engine of its game
	// whose check passed (new uploads join by themselves).
	PlacementGames  int        `json:"placement_games,omitempty"`
	EntrantsChecked bool       `json:"entrants_checked,omitempty"`
	Concurrency     int        `json:"concurrency"`
	Status          string     `json:"status"`
	TotalGames      int64      `json:"total_games"`
	FinishedGames   int64      `json:"finished_games"`
	NextIndex       int64      `json:"-"`
	Seed            uint64     `json:"seed"`
	CreatedAt       time.Time  `json:"created_at"`
	StartedAt       *time.Time `json:"started_at,omitempty"`
	FinishedAt      *time.Time `json:"finished_at,omitempty"`
}

// Schedule is the tournament's fixed schedule (round robin, gauntlet); with
// game pairs (openings), a schedule of pairs. Swiss and knockout have none:
// see Plan.
func (t *Tournament) Schedule() Schedule {
	if t.Kind == KindMatch || t.Kind == KindPlay {
		return Match{Games: int64(t.GamesPerPair), Pairs: t.Settings.Paired()}
	}
	legs := t.GamesPerPair
	if t.Settings.Paired() {
		legs /= 2
	}
	var s Schedule = RoundRobin{N: len(t.Engines), Legs: legs}
	if t.Kind == KindGauntlet {
		s = Gauntlet{N: len(t.Engines), Legs: legs}
	}
	if t.Settings.Paired() {
		s = Paired{s}
	}
	return s
}

// Plan is the pairing of a swiss or knockout tournament.
func (t *Tournament) Plan() (Plan, error) {
	return NewPlan(t.Kind, len(t.Engines), t.GamesPerPair, t.Rounds, t.MaxExtra)
}

// Limits on what a tournament may ask for.
const (
	MaxEntrants     = 5000
	MaxGamesPerPair = 1000
	MaxMatchGames   = 1000000 // the games of one `taikai match`
	MaxConcurrency  = 64
)

// Validate checks a new tournament and fills in defaults. It reports every
// field in error at once (games.Errors), not only the first.
func (t *Tournament) Validate() error {
	var errs games.Errors
	switch {
	case t.Name == "":
		errs = errs.Add(games.Invalid("name", "must not be empty"))
	case len(t.Name) > 200:
		errs = errs.Add(games.Invalid("name", "must be at most 200 bytes").With("too_long", map[string]any{"max": 200}))
	}
	errs = errs.Add(t.Settings.Validate())
	seen := make(map[int64]bool, len(t.Engines))
	for _, id := range t.Engines {
		if seen[id] {
			errs = errs.Add(games.Invalid("engines", "engine %d is listed twice", id).With("listed_twice", map[string]any{"id": id}))
		}
		seen[id] = true
	}
	switch {
	case t.Kind == KindLeague && t.EntrantsChecked:
		if len(t.Engines) > 0 {
			errs = errs.Add(games.Invalid("engines", `a league of "entrants": "checked" takes its engines itself: list none`))
		}
	case t.Kind == KindLeague && len(t.Engines) < 2:
		errs = errs.Add(games.Invalid("engines", "need at least 2 engines, got %d (or \"entrants\": \"checked\")", len(t.Engines)).With("too_few_engines", map[string]any{"min": 2, "got": len(t.Engines)}))
	case len(t.Engines) < 2:
		errs = errs.Add(games.Invalid("engines", "need at least 2 engines, got %d", len(t.Engines)).With("too_few_engines", map[string]any{"min": 2, "got": len(t.Engines)}))
	case t.Settings.SPRT != nil && len(t.Engines) != 2:
		errs = errs.Add(games.Invalid("sprt", "an SPRT decides between two engines, this tournament has %d", len(t.Engines)))
	case len(t.Engines) > MaxEntrants:
		errs = errs.Add(games.Invalid("engines", "at most %d engines", MaxEntrants).With("too_many_engines", map[string]any{"max": MaxEntrants, "got": len(t.Engines)}))
	}
	if t.GamesPerPair == 0 {
		t.GamesPerPair = 2
	}
	maxGames := MaxGamesPerPair
	if t.Kind == KindMatch {
		maxGames = MaxMatchGames // `taikai match --sprt` plays up to 20000 by default
	}
	if t.GamesPerPair < 1 || t.GamesPerPair > maxGames {
		errs = errs.Add(games.OutOfRange("games_per_pair", int64(t.GamesPerPair), 1, int64(maxGames), ""))
	}
	if t.Settings.Paired() && t.GamesPerPair%2 == 1 {
		errs = errs.Add(games.Invalid("games_per_pair", "%d: games come in pairs (openings), so want an even number", t.GamesPerPair).With("even", map[string]any{"value": t.GamesPerPair}))
	}
	if t.Concurrency == 0 {
		t.Concurrency = 1
	}
	if t.Concurrency < 1 || t.Concurrency > MaxConcurrency {
		errs = errs.Add(games.OutOfRange("concurrency", int64(t.Concurrency), 1, MaxConcurrency, ""))
	}
	if t.Kind == "" {
		t.Kind = KindRoundRobin
	}
	var plan Plan
	switch t.Kind {
	case KindRoundRobin, KindGauntlet, KindMatch, KindPlay:
		if t.Rounds != 0 {
			errs = errs.Add(games.Invalid("rounds", "only a swiss tournament has rounds"))
		}
		if t.MaxExtra != 0 {
			errs = errs.Add(games.Invalid("max_extra", "only a knockout tournament has extra game pairs"))
		}
	case KindLeague:
		errs = errs.Add(t.validateLeague())
	case KindSwiss, KindKnockout:
		if t.Settings.SPRT != nil {
			errs = errs.Add(games.Invalid("sprt", "an SPRT stops a match between two engines, not a %s", t.Kind))
		}
		if len(t.Engines) >= 2 {
			var err error
			if plan, err = t.Plan(); err != nil {
				errs = errs.Add(err)
			}
		}
	default:
		errs = errs.Add(games.Invalid("format", "%q: want round_robin, gauntlet, swiss, knockout or league", t.Kind))
	}
	if err := errs.Err(); err != nil {
		return err
	}
	switch {
	case t.Kind == KindLeague:
		t.TotalGames = 0 // never finishes: no total
	case plan != nil:
		t.TotalGames = plan.Total(nil)
	default:
		t.TotalGames = t.Schedule().Total()
	}
	return nil
}

// Player is one side of a game as shown.
type Player struct {
	EngineID int64  `json:"engine_id"`
	Name     string `json:"name"`
	Nick     string `json:"nick,omitempty"` // the name the client gave itself
	// WireName is the name as the opponent's client was sent it, where its
	// protocol had to change it (othello-move: "n6321120" for "6321120").
	WireName string `json:"wire_name,omitempty"`
	// Human: a person played this side (issue 39), Name is theirs.
	Human bool `json:"human,omitempty"`
	// Version: the engine's version this side played (its newest at the
	// game's start); 0 when not known.
	Version int `json:"version,omitempty"`
}

// Game is a stored game.
type Game struct {
	ID           int64               `json:"id"`
	TournamentID int64               `json:"tournament_id"`
	Index        int64               `json:"index"`
	Game         string              `json:"game"`
	Rule         string              `json:"rule,omitempty"`
	Size         int                 `json:"size"`
	Black        Player              `json:"black"`
	White        Player              `json:"white"`
	Status       string              `json:"status"`
	Result       games.Result        `json:"result,omitempty"`
	Reason       string              `json:"reason,omitempty"`
	Cause        string              `json:"cause,omitempty"`
	Plies        int                 `json:"plies"`
	Pair         int64               `json:"pair,omitempty"`    // the game pair it is one of, from 1
	Slot         string              `json:"slot,omitempty"`    // swiss, knockout: round, match and game ("r2m3g1")
	Opening      *SuiteLine          `json:"opening,omitempty"` // the opening it started from
	Worker       string              `json:"worker,omitempty"`  // the taikai worker that played it; "" for the server
	Attempt      int                 `json:"attempt,omitempty"` // which delivery of the game its worker played, from 1
	Moves        []games.Ply         `json:"-"`
	Violations   [2]games.Violations `json:"-"`
	Stones       [2]int              `json:"-"`
	Seed         uint64              `json:"-"`
	Logs         string              `json:"-"` // directory of the output logs, relative to the data dir
	Detail       string              `json:"detail,omitempty"`
	// Refused: the move refused before the timeout that ended the game
	// (cause after_refused).
	Refused   *RefusedMove      `json:"refused,omitempty"`
	Sandbox   string            `json:"-"` // on or off; "" for games stored before sandboxes
	Usage     [2]*engines.Usage `json:"-"` // black's and white's, nil if not started or not known
	ConnectMS [2]int64          `json:"-"` // black's and white's time to connect; 0 if it did not, or is not known
	StartedAt *time.Time        `json:"started_at,omitempty"`
	EndedAt   *time.Time        `json:"ended_at,omitempty"`
}

// SuiteLine is the opening a game started from: a line of an opening suite
// (games/openings.Line), named by suite and index.
type SuiteLine struct {
	Suite string       `json:"suite"` // "builtin:othello", or an uploaded suite's name
	Index int          `json:"index"` // 0-based, in the suite
	Plies int          `json:"plies"` // the game's first plies are the opening's
	Text  string       `json:"text"`  // the moves in the suite's notation
	Moves []games.Move `json:"-"`
}

// Standing is an engine's line in a tournament's table.
type Standing struct {
	EngineID int64   `json:"engine_id"`
	Name     string  `json:"name"`
	Games    int64   `json:"games"`
	Wins     int64   `json:"wins"`
	Draws    int64   `json:"draws"`
	Losses   int64   `json:"losses"`
	Points   float64 `json:"points"`
	ScorePct float64 `json:"score_pct"`
	Elo      float64 `json:"elo"`
	EloError float64 `json:"elo_error"` // 95% half-width; 0 when unknown
	DiscDiff int64   `json:"disc_diff"`
	// Swiss: the byes it had (each worth a match's games won, in Points) and
	// its Buchholz score, the tie-break after points.
	Byes     int     `json:"byes,omitempty"`
	Buchholz float64 `json:"buchholz,omitempty"`
}

// PairResult is the record between two engines, A < B.
type PairResult struct {
	A, B  int64
	AWins int64
	Draws int64
	BWins int64
	// Penta counts the game pairs (one opening, colours swapped) by A's
	// points in them: 0, 0.5, 1, 1.5 and 2.
	Penta [5]int64
}

// From returns the record from engine id's view: as it is if id is A, else
// with the sides swapped.
func (p PairResult) From(id int64) PairResult {
	if id == p.A {
		return p
	}
	q := PairResult{A: p.B, B: p.A, AWins: p.BWins, Draws: p.Draws, BWins: p.AWins}
	for i, n := range p.Penta {
		q.Penta[4-i] = n
	}
	return q
}

// Store is what the tournament service needs from storage.
type Store interface {
	Engine(ctx context.Context, id int64) (engines.Engine, error)
	Tournament(ctx context.Context, id int64) (*Tournament, error)
	// TournamentsWithStatus lists the tournaments in a status.
	TournamentsWithStatus(ctx context.Context, status string) ([]*Tournament, error)
	SetTournamentStatus(ctx context.Context, id int64, status string) error
	// NextIndex is the next schedule index to start: an aborted game's index that
	// has not been played again, else the first never started; ok is false when
	// every game has been started.
	NextIndex(ctx context.Context, t *Tournament) (idx int64, ok bool, err error)
	// StartGame stores a running game and returns its id.
	StartGame(ctx context.Context, t *Tournament, p Pairing, black, white int64, seed uint64) (int64, error)
	// FinishGame stores a played game, its standings and pair results in one
	// transaction, and finishes the tournament with its last game. An aborted game
	// is stored as aborted and not scored.
	FinishGame(ctx context.Context, p *Played) error
	// Standings returns a tournament's table rows (unsorted) and pair results.
	Standings(ctx context.Context, id int64) ([]Standing, []PairResult, error)
	// Slots returns the started slots of a swiss or knockout tournament and
	// the results of the finished ones.
	Slots(ctx context.Context, t *Tournament) (map[string]bool, []SlotResult, error)
	// SetTotal records the games a swiss or knockout tournament now expects.
	SetTotal(ctx context.Context, id, total int64) error
	// Tallies returns the tournament records of two engines (othello-move's BYE).
	Tallies(ctx context.Context, tournamentID int64, engineIDs [2]int64) ([2]engines.Tally, error)
}
