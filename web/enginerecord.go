package web

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/tournament"
)

// An engine's record across every tournament it played (GET
// /api/engines/{id}/record) and its games (GET /api/engines/{id}/games), for
// the engine's page. The record is computed from the tables the standings
// use, with the standings' rating model: nothing is stored twice.

// engineRecordJSON is GET /api/engines/{id}/record.
type engineRecordJSON struct {
	Engine engineJSON `json:"engine"`
	// Games counts its stored games by status (finished, running, aborted).
	Games map[string]int64 `json:"games"`
	// Rating is its Elo over every finished game of its game on this
	// server; null before its first finished game.
	Rating      *engineRatingJSON      `json:"rating"`
	Tournaments []engineTournamentJSON `json:"tournaments"`
	Opponents   []opponentJSON         `json:"opponents"`
	Violations  engineViolationsJSON   `json:"violations"`
	Time        engineTimeJSON         `json:"time"`
}

// engineRatingJSON is an engine's rating in the pool of every engine of its
// game: tournament.Ratings (the standings' model) over the pair results of
// every tournament of that game, 0 being the pool's average.
type engineRatingJSON struct {
	Elo      float64 `json:"elo"`
	EloError float64 `json:"elo_error"` // 95% half-width
	Rank     int     `json:"rank"`      // 1 for the best rated of the pool
	Engines  int     `json:"engines"`   // engines in the pool
	Games    int64   `json:"games"`     // finished games in the pool
}

// engineTournamentJSON is one tournament the engine entered, with its line
// of that tournament's table.
type engineTournamentJSON struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	Format   string `json:"format"`
	Status   string `json:"status"`
	Entrants int    `json:"entrants"`
	Rank     int    `json:"rank"` // its place in the table (0: not in it)
	scoreJSON
	Elo      float64 `json:"elo"`
	EloError float64 `json:"elo_error"`
	Created  *string `json:"created_at"`
}

// scoreJSON is a record of games, as a table's line shows it.
type scoreJSON struct {
	Games    int64   `json:"games"`
	Wins     int64   `json:"wins"`
	Draws    int64   `json:"draws"`
	Losses   int64   `json:"losses"`
	Points   float64 `json:"points"`
	ScorePct float64 `json:"score_pct"`
}

// opponentJSON is the engine's record against one opponent, over every
// tournament, from the engine's side.
type opponentJSON struct {
	EngineID int64  `json:"engine_id"`
	Name     string `json:"name"`
	scoreJSON
	// EloDiff is the Elo difference its score implies (tournament.EloDiff)
	// and EloMargin the half-width of its 95% interval.
	EloDiff   float64 `json:"elo_diff"`
	EloMargin float64 `json:"elo_margin"`
}

// engineViolationsJSON sums the engine's faults over its finished games.
type engineViolationsJSON struct {
	// Refused counts its refused commands by kind (as a game's violations:
	// occupied, timeout, ...), over every game.
	Refused map[string]int `json:"refused"`
	// GamesWithViolations is how many of its games had at least one.
	GamesWithViolations int64 `json:"games_with_violations"`
	// LostBy counts the games it lost for a reason other than the end of
	// the game (timeout, illegal, crash, no_connect, memory, ...).
	LostBy map[string]int64 `json:"lost_by"`
}

// engineTimeJSON is the engine's time use over its finished games: its own
// moves only (not the opening's, not those the server made for it).
type engineTimeJSON struct {
	Moves     int64    `json:"moves"`
	TotalMS   int64    `json:"total_ms"`
	MeanMS    *float64 `json:"mean_ms"` // null without a move
	MaxMS     int64    `json:"max_ms"`
	MaxGameID *int64   `json:"max_game_id"` // the game of its slowest move
	// From the sandbox's measures, where games have them: the largest peak
	// memory of its process and the mean CPU time per game.
	GamesMeasured   int64    `json:"games_measured"`
	PeakMemoryBytes int64    `json:"peak_memory_bytes"`
	MeanCPUMS       *float64 `json:"mean_cpu_ms"`
}

func (s *Server) getEngineRecord(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rec, err := s.engineRecord(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rec)
}

// engineRecord reads everything the engine's page shows but its games.
func (s *Server) engineRecord(ctx context.Context, id int64) (*engineRecordJSON, error) {
	row, err := s.DB.EngineRow(ctx, id)
	if err != nil {
		return nil, err
	}
	rec := &engineRecordJSON{Engine: s.engineJSON(row), Tournaments: []engineTournamentJSON{}, Opponents: []opponentJSON{}}
	if rec.Games, err = s.DB.CountEngineGames(ctx, id); err != nil {
		return nil, err
	}
	if err := s.engineTournaments(ctx, rec); err != nil {
		return nil, err
	}
	pairs, err := s.DB.GamePairs(ctx, row.Game)
	if err != nil {
		return nil, err
	}
	rec.Rating = engineRating(id, pairs)
	if rec.Opponents, err = s.opponents(ctx, id, pairs); err != nil {
		return nil, err
	}
	rec.Violations, rec.Time, err = s.engineFaults(ctx, id)
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// engineTournaments adds the engine's line of each tournament's table.
func (s *Server) engineTournaments(ctx context.Context, rec *engineRecordJSON) error {
	list, err := s.DB.EngineTournaments(ctx, rec.Engine.ID)
	if err != nil {
		return err
	}
	for _, t := range list {
		rows, _, err := standingsOf(ctx, s.DB, t)
		if err != nil {
			return err
		}
		j := engineTournamentJSON{ID: t.ID, Name: t.Name, Format: t.Kind, Status: t.Status, Entrants: len(t.Engines), Created: timeOrNil(&t.CreatedAt)}
		for i, st := range rows {
			if st.EngineID == rec.Engine.ID {
				j.Rank, j.Elo, j.EloError = i+1, st.Elo, st.EloError
				j.scoreJSON = scoreJSON{Games: st.Games, Wins: st.Wins, Draws: st.Draws, Losses: st.Losses, Points: st.Points, ScorePct: st.ScorePct}
				break
			}
		}
		rec.Tournaments = append(rec.Tournaments, j)
	}
	return nil
}

// engineRating rates every engine of the pool with tournament.Ratings, the
// model of the standings, and returns the engine's rating; nil if it has no
// finished game.
func engineRating(id int64, pairs []tournament.PairResult) *engineRatingJSON {
	seen := map[int64]bool{}
	var ids []int64
	var games int64
	played := false
	for _, p := range pairs {
		for _, e := range []int64{p.A, p.B} {
			if !seen[e] {
				seen[e] = true
				ids = append(ids, e)
			}
		}
		n := p.AWins + p.Draws + p.BWins
		games += n
		if n > 0 && (p.A == id || p.B == id) {
			played = true
		}
	}
	if !played {
		return nil
	}
	elo, errs := tournament.Ratings(ids, pairs)
	rank := 1
	for _, e := range ids {
		if elo[e] > elo[id] {
			rank++
		}
	}
	return &engineRatingJSON{
		Elo: math.Round(elo[id]*10) / 10, EloError: math.Round(errs[id]*10) / 10,
		Rank: rank, Engines: len(ids), Games: games,
	}
}

// opponents turns the pair results that involve the engine into its record
// against each opponent, most games first.
func (s *Server) opponents(ctx context.Context, id int64, pairs []tournament.PairResult) ([]opponentJSON, error) {
	out := []opponentJSON{}
	var ids []int64
	for _, p := range pairs {
		if p.A != id && p.B != id {
			continue
		}
		q := p.From(id)
		n := q.AWins + q.Draws + q.BWins
		if n == 0 {
			continue
		}
		o := opponentJSON{EngineID: q.B, scoreJSON: scoreJSON{Games: n, Wins: q.AWins, Draws: q.Draws, Losses: q.BWins}}
		o.Points = float64(o.Wins) + float64(o.Draws)/2
		o.ScorePct = math.Round(1000*o.Points/float64(n)) / 10
		diff, margin := tournament.EloDiff(o.Wins, o.Draws, o.Losses)
		o.EloDiff, o.EloMargin = math.Round(diff*10)/10, math.Round(margin*10)/10
		out = append(out, o)
		ids = append(ids, q.B)
	}
	names, err := s.DB.EngineNames(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Name = names[out[i].EngineID]
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Games != out[j].Games {
			return out[i].Games > out[j].Games
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// engineFaults walks the engine's finished games for its violations, the
// games it lost other than by the end of the game, and its time use.
func (s *Server) engineFaults(ctx context.Context, id int64) (engineViolationsJSON, engineTimeJSON, error) {
	v := engineViolationsJSON{Refused: map[string]int{}, LostBy: map[string]int64{}}
	var tm engineTimeJSON
	var cpu float64
	err := s.DB.EachEngineGame(ctx, id, func(g *tournament.Game) error {
		side, color := 0, games.Black
		if g.Black.EngineID != id {
			side, color = 1, games.White
		}
		if g.Black.EngineID == id && g.White.EngineID == id {
			return nil // an engine against itself has no side of its own
		}
		if len(g.Violations[side]) > 0 {
			v.GamesWithViolations++
		}
		for k, n := range g.Violations[side] {
			v.Refused[k] += n
		}
		if g.Reason != games.ReasonNormal && g.Result != "" && g.Result != games.Drawn && g.Result != games.ResultOf(color) {
			v.LostBy[g.Reason]++
		}
		opening := 0
		if g.Opening != nil {
			opening = g.Opening.Plies
		}
		for i, m := range g.Moves {
			if m.Color != color || m.Auto || i < opening {
				continue
			}
			tm.Moves++
			tm.TotalMS += m.MS
			if m.MS > tm.MaxMS || tm.MaxGameID == nil {
				tm.MaxMS = m.MS
				gid := g.ID
				tm.MaxGameID = &gid
			}
		}
		if u := g.Usage[side]; u != nil {
			tm.GamesMeasured++
			tm.PeakMemoryBytes = max(tm.PeakMemoryBytes, u.PeakMemory)
			cpu += float64(u.CPUTime.Milliseconds())
		}
		return nil
	})
	if tm.Moves > 0 {
		mean := math.Round(10*float64(tm.TotalMS)/float64(tm.Moves)) / 10
		tm.MeanMS = &mean
	}
	if tm.GamesMeasured > 0 {
		mean := math.Round(cpu / float64(tm.GamesMeasured))
		tm.MeanCPUMS = &mean
	}
	return v, tm, err
}

// engineGameJSON is one of an engine's games, from its side.
type engineGameJSON struct {
	gameJSON
	Color    string     `json:"color"`             // the colour it played
	Version  int        `json:"version,omitempty"` // the version of the engine that played it
	Opponent playerJSON `json:"opponent"`
	// Outcome is win, draw or loss for a finished game, absent otherwise.
	Outcome engineResult `json:"outcome,omitempty"`
	// Log is its captured output in this game, absent when none was kept.
	Log string `json:"log,omitempty"`
}

// getEngineGames lists an engine's games, newest first: ?limit= (default
// 50, at most 500) and ?offset=.
func (s *Server) getEngineGames(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	limit, offset := 50, 0
	q := r.URL.Query()
	for _, p := range []struct {
		name     string
		dst      *int
		min, max int
	}{{"limit", &limit, 1, 500}, {"offset", &offset, 0, math.MaxInt32}} {
		if v := q.Get(p.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < p.min || n > p.max {
				s.writeError(w, r, errInvalid(p.name, fmt.Sprintf("%s %q: want an integer from %d to %d", p.name, v, p.min, p.max)))
				return
			}
			*p.dst = n
		}
	}
	if _, err := s.DB.EngineRow(r.Context(), id); err != nil {
		s.writeError(w, r, err)
		return
	}
	counts, err := s.DB.CountEngineGames(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var total int64
	for _, n := range counts {
		total += n
	}
	list, err := s.DB.EngineGames(r.Context(), id, limit, offset)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]engineGameJSON, 0, len(list))
	for _, g := range list {
		j := engineGameJSON{gameJSON: toGameJSON(g), Color: "black", Opponent: playerJSON(g.White)}
		j.Version = g.Black.Version
		if g.Black.EngineID != id {
			j.Color, j.Opponent, j.Version = "white", playerJSON(g.Black), g.White.Version
		}
		if g.Status == tournament.GameRunning && s.Live != nil {
			if n, ok := s.Live.LivePlies(g.ID); ok {
				j.Plies = n
			}
		}
		if g.Status == tournament.GameFinished {
			switch g.Result {
			case games.Drawn:
				j.Outcome = engineDrew
			case games.Result(j.Color):
				j.Outcome = engineWon
			default:
				j.Outcome = engineLost
			}
		}
		if g.Logs != "" {
			j.Log = fmt.Sprintf("/api/games/%d/log/%s", g.ID, j.Color)
		}
		out = append(out, j)
	}
	writeJSON(w, http.StatusOK, map[string]any{"games": out, "total": total, "limit": limit, "offset": offset})
}
