package tournament

import (
	"context"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/openings"
)

// DefaultPlacementGames is the games a new version of a league plays first.
const DefaultPlacementGames = 20

// MaxPlacementGames bounds placement_games.
const MaxPlacementGames = 1000

// validateLeague checks a league's own fields and fills in their defaults:
// its games come in pairs, colours swapped.
func (t *Tournament) validateLeague() error {
	var errs games.Errors
	if t.PlacementGames == 0 {
		t.PlacementGames = DefaultPlacementGames
	}
	if t.PlacementGames < 2 || t.PlacementGames > MaxPlacementGames {
		errs = errs.Add(games.OutOfRange("placement_games", int64(t.PlacementGames), 2, MaxPlacementGames, ""))
	} else if t.PlacementGames%2 == 1 {
		errs = errs.Add(games.Invalid("placement_games", "%d: a league plays game pairs (colours swapped), so want an even number", t.PlacementGames).With("even", map[string]any{"value": t.PlacementGames}))
	}
	if t.Settings.SPRT != nil {
		errs = errs.Add(games.Invalid("sprt", "an SPRT stops a match between two engines, not a league"))
	}
	if t.Rounds != 0 {
		errs = errs.Add(games.Invalid("rounds", "only a swiss tournament has rounds"))
	}
	if t.MaxExtra != 0 {
		errs = errs.Add(games.Invalid("max_extra", "only a knockout tournament has extra game pairs"))
	}
	if t.GamesPerPair != 2 { // 0 was made 2
		errs = errs.Add(games.Invalid("games_per_pair", "a league plays game pairs, as many as its ratings need: leave games_per_pair out"))
	}
	t.Settings.Pairs = true
	return errs.Err()
}

// VersionKey names one version of an engine: in a league each is a player
// of its own.
type VersionKey struct {
	Engine  int64
	Version int
}

// less orders versions by engine, then version.
func (k VersionKey) less(o VersionKey) bool {
	if k.Engine != o.Engine {
		return k.Engine < o.Engine
	}
	return k.Version < o.Version
}

// VersionResult is the record between two versions of a league, A before B
// by engine id.
type VersionResult struct {
	A, B  VersionKey
	AWins int64
	Draws int64
	BWins int64
}

// LeagueState is what a league's scheduler reads from the store before each
// game: its status, its entrants, the current versions that may play, the
// results between versions and the games running.
type LeagueState struct {
	Status   string
	Entrants []int64      // every entrant, in seat order (those that joined last at the end)
	Field    []VersionKey // the current versions that may play, by engine id
	Results  []VersionResult
	Running  [][2]VersionKey // black, white of each running game
}

// LeagueStore is what a league needs from the store besides Store.
type LeagueStore interface {
	// LeagueState reads a league's state; with entrants "checked", the
	// engines that qualified since are made entrants first.
	LeagueState(ctx context.Context, t *Tournament) (*LeagueState, error)
	// LeagueHalfPairs lists the game pairs of which one game was played and
	// the other never finished (the server stopped): the game to play, with
	// its pair and versions.
	LeagueHalfPairs(ctx context.Context, t *Tournament) ([]LeagueGame, error)
}

// LeagueGame is a league game to start: its versions, colours and pair.
type LeagueGame struct {
	Black, White VersionKey
	Pair         int64
}

// NextLeaguePair chooses the next game pair of a league, or ok false when
// fewer than two versions may play. busy are the games started and not yet
// finished (running, or waiting for a free slot), counted as played.
//
// A version with fewer than placement games (finished or busy) is placed
// first: the one with fewest games, against the version of the field it has
// played least (then the one with fewest games, then the lowest engine id).
// Otherwise the pair is the one whose ratings are least certain for what
// they have played together: the largest (err_a² + err_b²) / (1 + n_ab),
// err the half-width of each rating's 95% interval and n_ab their games
// together, finished or busy; ties go to the lower engine ids. The version
// first in the pair plays black in the pair's first game.
func NextLeaguePair(st *LeagueState, busy [][2]VersionKey, placement int) (a, b VersionKey, ok bool) {
	field := st.Field
	if len(field) < 2 {
		return a, b, false
	}
	current := make(map[VersionKey]int, len(field))
	for i, k := range field {
		current[k] = i
	}
	n := len(field)
	games := make([]int64, n)
	together := make([]int64, n*n) // games between field[i] and field[j]
	add := func(x, y VersionKey, count int64) {
		i, ok1 := current[x]
		j, ok2 := current[y]
		if ok1 {
			games[i] += count
		}
		if ok2 {
			games[j] += count
		}
		if ok1 && ok2 {
			together[i*n+j] += count
			together[j*n+i] += count
		}
	}
	for _, r := range st.Results {
		add(r.A, r.B, r.AWins+r.Draws+r.BWins)
	}
	for _, g := range busy {
		add(g[0], g[1], 1)
	}
	// Placement: the version with fewest games, if it has fewer than
	// placement.
	p := -1
	for i := range field {
		if games[i] < int64(placement) && (p < 0 || games[i] < games[p]) {
			p = i
		}
	}
	if p >= 0 {
		o := -1
		for j := range field {
			if j == p {
				continue
			}
			if o < 0 || together[p*n+j] < together[p*n+o] || together[p*n+j] == together[p*n+o] && games[j] < games[o] {
				o = j
			}
		}
		return field[p], field[o], true
	}
	_, errs := VersionRatings(st.Results)
	best, bi, bj := -1.0, 0, 1
	for i := range field {
		ei := errOf(errs, field[i])
		for j := i + 1; j < n; j++ {
			ej := errOf(errs, field[j])
			v := (ei*ei + ej*ej) / float64(1+together[i*n+j])
			if v > best {
				best, bi, bj = v, i, j
			}
		}
	}
	return field[bi], field[bj], true
}

// errOf is a version's rating interval; a version without games has the
// prior's alone.
func errOf(errs map[VersionKey]float64, k VersionKey) float64 {
	if e, ok := errs[k]; ok {
		return e
	}
	_, e := Ratings([]int64{0}, nil)
	return e[0]
}

// VersionRatings rates every version that played in results, each as a
// player of its own (Ratings: Bradley-Terry, draws half, the same prior).
func VersionRatings(results []VersionResult) (elo, errs map[VersionKey]float64) {
	var keys []VersionKey
	at := map[VersionKey]int64{}
	key := func(k VersionKey) int64 {
		i, ok := at[k]
		if !ok {
			i = int64(len(keys))
			at[k] = i
			keys = append(keys, k)
		}
		return i
	}
	pairs := make([]PairResult, 0, len(results))
	for _, r := range results {
		pairs = append(pairs, PairResult{A: key(r.A), B: key(r.B), AWins: r.AWins, Draws: r.Draws, BWins: r.BWins})
	}
	ids := make([]int64, len(keys))
	for i := range ids {
		ids[i] = int64(i)
	}
	e, x := Ratings(ids, pairs)
	elo, errs = make(map[VersionKey]float64, len(keys)), make(map[VersionKey]float64, len(keys))
	for i, k := range keys {
		elo[k], errs[k] = e[int64(i)], x[int64(i)]
	}
	return elo, errs
}

// LadderRow is a version's line in a league's ladder.
type LadderRow struct {
	EngineID  int64       `json:"engine_id"`
	Name      string      `json:"name"`
	Version   int         `json:"version"`
	Elo       float64     `json:"elo"`
	EloError  float64     `json:"elo_error"`
	Games     int64       `json:"games"`
	Wins      int64       `json:"wins"`
	Draws     int64       `json:"draws"`
	Losses    int64       `json:"losses"`
	Points    float64     `json:"points"`
	ScorePct  float64     `json:"score_pct"`
	Current   bool        `json:"current"`   // the engine's version that plays now
	Placement bool        `json:"placement"` // still playing its placement games
	Previous  *PrevRating `json:"previous"`  // the engine's version before, in this league; nil if none
	EloChange *float64    `json:"elo_change"`
}

// PrevRating is the rating of an engine's version before the current one.
type PrevRating struct {
	Version  int     `json:"version"`
	Elo      float64 `json:"elo"`
	EloError float64 `json:"elo_error"`
	Games    int64   `json:"games"`
}

// Ladder is a league's table: a row for each version that played or plays
// now (current: the engines' current versions), best rating first. names
// are the engines' names, current their current versions (those that may
// play and those that may not: a withdrawn engine's last version is not
// current), placement the league's placement games.
func Ladder(results []VersionResult, current map[int64]int, names map[int64]string, placement int) []LadderRow {
	elo, errs := VersionRatings(results)
	rows := map[VersionKey]*LadderRow{}
	row := func(k VersionKey) *LadderRow {
		r, ok := rows[k]
		if !ok {
			r = &LadderRow{EngineID: k.Engine, Name: names[k.Engine], Version: k.Version}
			rows[k] = r
		}
		return r
	}
	for _, res := range results {
		a, b := row(res.A), row(res.B)
		a.Wins, a.Draws, a.Losses = a.Wins+res.AWins, a.Draws+res.Draws, a.Losses+res.BWins
		b.Wins, b.Draws, b.Losses = b.Wins+res.BWins, b.Draws+res.Draws, b.Losses+res.AWins
	}
	for id, v := range current {
		row(VersionKey{id, v}).Current = true
	}
	_, prior := Ratings([]int64{0}, nil)
	out := make([]LadderRow, 0, len(rows))
	for k, r := range rows {
		r.Games = r.Wins + r.Draws + r.Losses
		r.Points = float64(r.Wins) + float64(r.Draws)/2
		if r.Games > 0 {
			r.ScorePct = round1(100 * r.Points / float64(r.Games))
		}
		r.Elo, r.EloError = round1(elo[k]), round1(prior[0])
		if e, ok := errs[k]; ok {
			r.EloError = round1(e)
		}
		r.Placement = r.Current && r.Games < int64(placement)
		out = append(out, *r)
	}
	// Each engine's version before: the highest version below it that
	// played here.
	for i := range out {
		r := &out[i]
		for _, o := range out {
			if o.EngineID == r.EngineID && o.Version < r.Version && o.Games > 0 && (r.Previous == nil || o.Version > r.Previous.Version) {
				r.Previous = &PrevRating{Version: o.Version, Elo: o.Elo, EloError: o.EloError, Games: o.Games}
			}
		}
		if r.Previous != nil {
			d := round1(r.Elo - r.Previous.Elo)
			r.EloChange = &d
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case a.Elo != b.Elo:
			return a.Elo > b.Elo
		case a.Games != b.Games:
			return a.Games > b.Games
		case a.Name != b.Name:
			return a.Name < b.Name
		}
		return a.Version > b.Version
	})
	return out
}

func round1(x float64) float64 { return math.Round(x*10) / 10 }

// scheduleLeague plays a league: before each game it reads the league's
// state (so that new versions and entrants, a pause and a restart are seen),
// chooses the next game pair (NextLeaguePair) and starts its games, up to
// the league's concurrency. A paused league starts no game and waits; the
// league never finishes by itself: a cancel ends it.
func (s *Service) scheduleLeague(ctx context.Context, t *Tournament, suite *openings.Suite, wake <-chan struct{}) {
	log := s.log().With("tournament", t.ID)
	ls, ok := s.Store.(LeagueStore)
	if !ok {
		log.Error("league cannot run: its store keeps no leagues")
		return
	}
	cur, err := s.Store.Tournament(ctx, t.ID)
	if err != nil {
		log.Error("league cannot run", "err", err)
		return
	}
	next := cur.NextIndex // games are numbered as they start
	// queue holds the games chosen and not yet started (a pair's second
	// game, a game to play again); what the running games hold is in
	// the store. Games may put their own back (aborted, not stopped), so
	// it has a lock.
	var qmu sync.Mutex
	queue, err := ls.LeagueHalfPairs(ctx, t)
	if err != nil {
		log.Error("league: the pairs the last run left half played are not read (they stay so)", "err", err)
	}
	run := newRunning(t.Concurrency)
	var played sync.WaitGroup
	defer played.Wait()
	idle := func() bool {
		// Nothing to start: wait for a game to end, a wake (a new version,
		// a resume), or at most a few seconds (a check stored by a path
		// that does not wake the league).
		timer := time.NewTimer(5 * time.Second)
		defer timer.Stop()
		select {
		case <-run.ended:
			run.n--
		case <-wake:
		case <-timer.C:
		case <-ctx.Done():
			return false
		}
		return true
	}
	for {
		run.collect()
		if ctx.Err() != nil {
			return
		}
		if run.full() {
			if !run.wait(ctx) {
				return
			}
			continue
		}
		st, err := ls.LeagueState(ctx, t)
		if err != nil {
			if !s.failedNext(ctx, log, "league state", err, "tournament", t.ID) {
				return
			}
			continue
		}
		if st.Status != StatusRunning {
			if st.Status == StatusFinished || st.Status == StatusCancelled {
				return
			}
			if !idle() {
				return
			}
			continue
		}
		current := make(map[VersionKey]bool, len(st.Field))
		for _, k := range st.Field {
			current[k] = true
		}
		qmu.Lock()
		// A queued game of a version replaced (or withdrawn) meanwhile is
		// not played.
		queue = slices.DeleteFunc(queue, func(g LeagueGame) bool { return !current[g.Black] || !current[g.White] })
		var g LeagueGame
		if len(queue) > 0 {
			g, queue = queue[0], queue[1:]
		} else {
			busy := slices.Clone(st.Running)
			a, b, ok := NextLeaguePair(st, busy, t.PlacementGames)
			if ok {
				g = LeagueGame{Black: a, White: b, Pair: next + 1}
				queue = append(queue, LeagueGame{Black: b, White: a, Pair: next + 1})
			}
		}
		qmu.Unlock()
		if g.Pair == 0 {
			if !idle() {
				return
			}
			continue
		}
		lt := *t
		lt.Engines = st.Entrants
		seat := make(map[int64]int, len(lt.Engines))
		for i, id := range lt.Engines {
			seat[id] = i
		}
		p := Pairing{Index: next, Black: seat[g.Black.Engine], White: seat[g.White.Engine], Pair: g.Pair}
		spec, err := s.prepare(ctx, &lt, p, map[int64]engines.Engine{}, suite)
		if err != nil {
			qmu.Lock()
			queue = append([]LeagueGame{g}, queue...)
			qmu.Unlock()
			if !s.failedNext(ctx, log, "start game", err, "tournament", t.ID) {
				return
			}
			continue
		}
		s.storeOK()
		next++
		run.start(&played, func() {
			if !s.play(ctx, &lt, spec) && ctx.Err() == nil {
				// Aborted though nobody stopped it (not stored): played
				// again, after a pause so as not to loop.
				qmu.Lock()
				queue = append(queue, g)
				qmu.Unlock()
				sleepCtx(ctx, time.Second)
			}
		})
	}
}
