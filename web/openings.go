package web

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/openings"
	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/tournament"
	"github.com/taikai-dev/taikai/tournament/stats"
)

// maxSuite bounds an uploaded opening suite (a JSON body with its text).
const maxSuite = 4 << 20

// suiteRequest is the body of POST /api/openings.
type suiteRequest struct {
	Name string `json:"name"`
	Game string `json:"game"`
	Rule string `json:"rule"`
	Size int    `json:"size"`
	Text string `json:"text"` // one opening a line, in the game's notation
	// Format: "" for that text, or a record format of the game ("ggf",
	// "psq") whose games become the openings, each cut to Plies moves (0:
	// whole).
	Format string `json:"format"`
	Plies  int    `json:"plies"`
}

// createSuite checks an opening suite line by line against its game, rule and
// board size, and stores it.
func (s *Server) createSuite(w http.ResponseWriter, r *http.Request) {
	var req suiteRequest
	r.Body = http.MaxBytesReader(w, r.Body, maxSuite)
	if err := decodeJSON(r.Body, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	req.Name = strings.TrimSpace(req.Name)
	set := tournament.Settings{Game: req.Game, Rule: req.Rule, Size: req.Size}
	var errs games.Errors
	if req.Name == "" {
		errs = errs.Add(errInvalid("name", "name: must not be empty"))
	} else if len(req.Name) > 200 {
		errs = errs.Add(errInvalid("name", "name: must be at most 200 bytes"))
	}
	if err := set.Validate(); err != nil {
		errs = errs.Add(err)
	}
	if err := errs.Err(); err != nil {
		s.writeError(w, r, err)
		return
	}
	if req.Format != "" {
		text, err := openings.FromRecords(set.Game, set.Size, req.Format, strings.NewReader(req.Text), req.Plies)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		req.Text = text // stored as taikai's text: the suite is what was checked
	}
	suite, err := openings.Parse(req.Name, set.Game, set.Rule, set.Size, strings.NewReader(req.Text))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	info := tournament.SuiteInfo{Name: req.Name, Game: set.Game, Rule: set.Rule, Size: set.Size, Openings: len(suite.Openings)}
	if err := s.DB.CreateSuite(r.Context(), &info, req.Text); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, info)
}

// listSuites lists the uploaded suites and the built-in ones.
func (s *Server) listSuites(w http.ResponseWriter, r *http.Request) {
	list, err := s.DB.Suites(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	type builtinJSON struct {
		Suite    string `json:"suite"` // "builtin", as a tournament's openings.suite names it
		Name     string `json:"name"`
		Game     string `json:"game"`
		Rule     string `json:"rule,omitempty"`
		Size     int    `json:"size"`
		Openings int    `json:"openings"`
	}
	var builtins []builtinJSON
	for _, name := range games.Names() {
		g, _ := games.Lookup(name)
		rules := g.Rules
		if rules == nil {
			rules = []string{""}
		}
		for _, rule := range rules {
			if b, err := openings.Builtin(name, rule, g.Size); err == nil {
				builtins = append(builtins, builtinJSON{"builtin", b.Name, b.Game, b.Rule, b.Size, len(b.Openings)})
			}
		}
	}
	if list == nil {
		list = []tournament.SuiteInfo{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"suites": list, "builtin": builtins})
}

// getSuite returns an uploaded suite with its openings.
func (s *Server) getSuite(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	info, text, err := s.DB.Suite(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"suite": info, "text": text})
}

// pairJSON is the record between two engines of a tournament, from the
// first one's view, with its statistics: by game pairs (pentanomial) when the
// tournament plays them, else by games (trinomial).
type pairJSON struct {
	A           playerJSON `json:"a"`
	B           playerJSON `json:"b"`
	Games       int64      `json:"games"`
	Wins        int64      `json:"wins"`
	Draws       int64      `json:"draws"`
	Losses      int64      `json:"losses"`
	Pentanomial []int64    `json:"pentanomial,omitempty"` // A's complete game pairs scoring 0, 0.5, 1, 1.5, 2 points
	Elo         *float64   `json:"elo"`
	EloError    *float64   `json:"elo_error"`
	NElo        *float64   `json:"nelo"`
	NEloError   *float64   `json:"nelo_error"`
	LOS         *float64   `json:"los"`        // percent
	DrawRatio   *float64   `json:"draw_ratio"` // percent
	SPRT        *sprtJSON  `json:"sprt,omitempty"`
}

// sprtJSON is the state of a tournament's SPRT between its two engines.
type sprtJSON struct {
	LLR    float64        `json:"llr"`
	Lower  float64        `json:"lower"`
	Upper  float64        `json:"upper"`
	Result stats.Decision `json:"result"` // H0, H1 or continue
	// History is the LLR after each game pair (each game without pairs),
	// in the order they were completed: [[pairs, llr], ...].
	History [][2]float64 `json:"history"`
}

// getPairs answers GET /api/tournaments/{id}/pairs.
func (s *Server) getPairs(w http.ResponseWriter, r *http.Request) {
	t, ok := s.tournament(w, r)
	if !ok {
		return
	}
	_, pairs, err := s.DB.Standings(r.Context(), t.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	names, err := s.DB.EngineNames(r.Context(), t.Engines)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]pairJSON, 0, len(pairs))
	for _, p := range pairs {
		j := pairJSON{
			A: playerJSON{EngineID: p.A, Name: names[p.A]}, B: playerJSON{EngineID: p.B, Name: names[p.B]},
			Games: p.AWins + p.Draws + p.BWins, Wins: p.AWins, Draws: p.Draws, Losses: p.BWins,
		}
		var est stats.Estimate
		if t.Settings.Paired() {
			j.Pentanomial = p.Penta[:]
			est = stats.FromPenta(stats.Penta(p.Penta))
		} else {
			est = stats.FromWDL(stats.WDL{W: p.AWins, D: p.Draws, L: p.BWins})
		}
		if est.Games > 0 {
			j.Elo, j.EloError, j.NElo, j.NEloError = rounded(est.Elo), rounded(est.EloError), rounded(est.NElo), rounded(est.NEloError)
			j.LOS, j.DrawRatio = rounded(100*est.LOS), rounded(100*est.DrawRatio)
		}
		if sp := t.Settings.SPRT; sp != nil {
			// The test is about the tournament's first engine.
			first := t.Engines[0]
			llr := tournament.PairLLR(sp, t.Settings.Paired(), p.From(first))
			lo, hi := sp.Bounds()
			j.SPRT = &sprtJSON{LLR: round2(llr), Lower: round2(lo), Upper: round2(hi), Result: sp.Result(llr)}
			if j.SPRT.History, err = s.llrHistory(r, t, first); err != nil {
				s.writeError(w, r, err)
				return
			}
		}
		out = append(out, j)
	}
	writeJSON(w, http.StatusOK, map[string]any{"pairs": out})
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// rounded is f to one decimal, nil if it is not finite (JSON has no infinity).
func rounded(f float64) *float64 {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil
	}
	r := math.Round(f*10) / 10
	return &r
}

// llrHistory replays a two-engine tournament's finished games in the order
// they ended and returns the SPRT's LLR after each game pair (each game
// without pairs), from engine a's view.
func (s *Server) llrHistory(r *http.Request, t *tournament.Tournament, a int64) ([][2]float64, error) {
	list, err := s.DB.Games(r.Context(), t.ID, storage.GameFilter{Status: tournament.GameFinished, Limit: 100000})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(list, func(x, y *tournament.Game) int {
		if x.EndedAt == nil || y.EndedAt == nil {
			return 0
		}
		return x.EndedAt.Compare(*y.EndedAt)
	})
	var (
		count  stats.Counter
		n      float64
		out    = [][2]float64{}
		paired = t.Settings.Paired()
	)
	for _, g := range list {
		half := 1
		if g.Result != games.Drawn {
			half = 0
			if (g.Result == games.BlackWon) == (g.Black.EngineID == a) {
				half = 2
			}
		}
		llr := 0.0
		if paired {
			if !count.Add(g.Pair, half) {
				continue
			}
			llr = t.Settings.SPRT.LLR(count.Penta)
		} else {
			count.Add(0, half)
			llr = t.Settings.SPRT.LLRWDL(count.WDL)
		}
		n++
		out = append(out, [2]float64{n, round2(llr)})
	}
	return out, nil
}

// getBracket answers GET /api/tournaments/{id}/bracket: a knockout's rounds,
// each match's entrants, scores and winner (entrant indexes into "engines").
func (s *Server) getBracket(w http.ResponseWriter, r *http.Request) {
	t, ok := s.tournament(w, r)
	if !ok {
		return
	}
	if t.Kind != tournament.KindKnockout {
		s.writeError(w, r, &games.Error{Code: games.ENotFound, Message: fmt.Sprintf("tournament %d is a %s, not a knockout: it has no bracket", t.ID, t.Kind)})
		return
	}
	plan, err := t.Plan()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	_, finished, err := s.DB.Slots(r.Context(), t)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	b, ok := plan.(interface {
		Bracket([]tournament.SlotResult) []tournament.BracketRound
	})
	if !ok {
		s.writeError(w, r, fmt.Errorf("knockout plan %T draws no bracket", plan))
		return
	}
	names, err := s.DB.EngineNames(r.Context(), t.Engines)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	engines := make([]playerJSON, len(t.Engines))
	for i, id := range t.Engines {
		engines[i] = playerJSON{EngineID: id, Name: names[id]}
	}
	writeJSON(w, http.StatusOK, map[string]any{"engines": engines, "rounds": b.Bracket(finished)})
}
