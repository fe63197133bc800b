package web

// The tournaments resource: /api/tournaments, their standings and crosstable.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/taikai-dev/taikai/tournament"
	"github.com/taikai-dev/taikai/tournament/stats"
)

func (s *Server) listTournaments(w http.ResponseWriter, r *http.Request) {
	list, err := s.DB.Tournaments(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// One query for every entrant's name, not one per entrant.
	var ids []int64
	for _, t := range list {
		ids = append(ids, t.Engines...)
	}
	names, err := s.DB.EngineNames(r.Context(), ids)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]tournamentJSON, len(list))
	for i, t := range list {
		out[i] = s.tournamentJSON(t, names)
	}
	writeJSON(w, http.StatusOK, map[string]any{"tournaments": out})
}

func (s *Server) tournament(w http.ResponseWriter, r *http.Request) (*tournament.Tournament, bool) {
	id, err := idParam(r, "id")
	if err != nil {
		s.writeError(w, r, err)
		return nil, false
	}
	t, err := s.DB.Tournament(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return nil, false
	}
	return t, true
}

func (s *Server) writeTournament(w http.ResponseWriter, r *http.Request, status int, t *tournament.Tournament) {
	names, err := s.DB.EngineNames(r.Context(), t.Engines)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, status, s.tournamentJSON(t, names))
}

func (s *Server) getTournament(w http.ResponseWriter, r *http.Request) {
	if t, ok := s.tournament(w, r); ok {
		s.writeTournament(w, r, http.StatusOK, t)
	}
}

// tournamentRequest is the body of POST /api/tournaments.
type tournamentRequest struct {
	Name         string  `json:"name"`
	Game         string  `json:"game"`
	Rule         string  `json:"rule"`
	Size         int     `json:"size"`
	Engines      []int64 `json:"engines"`
	GamesPerPair int     `json:"games_per_pair"`
	MoveTimeMS   int64   `json:"move_time_ms"`
	TotalTimeMS  int64   `json:"total_time_ms"`
	ByoyomiMS    int64   `json:"byoyomi_ms"`
	OnTimeout    string  `json:"on_timeout"`
	MaxErrors    int     `json:"max_errors"`
	MaxTimeouts  int     `json:"max_timeouts"`
	// Options are the protocols' own settings; board_order and end_message
	// are also read where the first release had them, beside the others.
	Options          map[string]string `json:"options"`
	BoardOrder       string            `json:"board_order"`
	EndMessage       bool              `json:"end_message"`
	ConnectTimeoutMS int64             `json:"connect_timeout_ms"`
	PaceMS           int64             `json:"pace_ms"`
	Concurrency      int               `json:"concurrency"`
	Start            bool              `json:"start"`
	Seed             *uint64           `json:"seed"`
	// Openings: game pairs start from a suite's openings; Pairs: games come
	// in pairs, colours swapped (always so with openings).
	Openings *tournament.Openings `json:"openings"`
	Pairs    bool                 `json:"pairs"`
	// Format: round_robin (default), gauntlet (the first engine against each
	// other), swiss (rounds), knockout (matches of games_per_pair games, a
	// tie extended by a game pair at a time, up to max_extra pairs).
	Format   string `json:"format"`
	Rounds   int    `json:"rounds"`
	MaxExtra int    `json:"max_extra"`
	// League: "entrants": "checked" (every engine of the game whose check
	// passed, those uploaded later too) instead of engines; the games a new
	// version plays first.
	Entrants       string `json:"entrants"`
	PlacementGames int    `json:"placement_games"`
	// SPRT: "elo0=0 elo1=5 alpha=0.05 beta=0.05 model=logistic", or the same
	// as an object.
	SPRT json.RawMessage `json:"sprt"`
}

// sprt reads the request's SPRT, nil if none.
func (req *tournamentRequest) sprt() (*stats.SPRT, error) {
	if len(req.SPRT) == 0 || string(req.SPRT) == "null" {
		return nil, nil
	}
	var words []string
	var text string
	if err := json.Unmarshal(req.SPRT, &text); err == nil {
		words = strings.Fields(text)
	} else {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(req.SPRT, &obj); err != nil {
			return nil, errInvalid("sprt", `sprt: want "elo0=0 elo1=5 alpha=0.05 beta=0.05" or an object with those keys`)
		}
		for k, v := range obj {
			words = append(words, k+"="+strings.Trim(string(v), `"`))
		}
	}
	t, err := stats.ParseSPRT(words...)
	if err != nil {
		return nil, errInvalid("sprt", err.Error())
	}
	return &t, nil
}

func (s *Server) createTournament(w http.ResponseWriter, r *http.Request) {
	var req tournamentRequest
	if err := decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	t, err := req.tournament()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.create(w, r, t, req.Start)
}

// tournament is the tournament a request asks for, not yet validated.
func (req *tournamentRequest) tournament() (*tournament.Tournament, error) {
	t := &tournament.Tournament{
		Name: strings.TrimSpace(req.Name), Kind: cmp.Or(req.Format, tournament.KindRoundRobin), Engines: req.Engines,
		GamesPerPair: req.GamesPerPair, Concurrency: req.Concurrency, Rounds: req.Rounds, MaxExtra: req.MaxExtra,
		PlacementGames: req.PlacementGames,
		Settings: tournament.Settings{
			Game: req.Game, Rule: req.Rule, Size: req.Size, MoveTimeMS: req.MoveTimeMS, TotalTimeMS: req.TotalTimeMS,
			ByoyomiMS: req.ByoyomiMS, OnTimeout: req.OnTimeout, MaxErrors: req.MaxErrors, MaxTimeouts: req.MaxTimeouts,
			ConnectMS: req.ConnectTimeoutMS, PaceMS: req.PaceMS, Options: req.Options,
			Openings: req.Openings, Pairs: req.Pairs,
		},
		Seed: rand.Uint64(),
	}
	if req.Seed != nil {
		t.Seed = *req.Seed
	}
	if req.BoardOrder != "" {
		t.Settings.SetOption("board_order", req.BoardOrder)
	}
	if req.EndMessage {
		t.Settings.SetOption("end_message", "true")
	}
	switch {
	case req.Entrants == "checked" && t.Kind == tournament.KindLeague:
		t.EntrantsChecked = true
	case req.Entrants == "checked":
		return nil, errInvalid("entrants", `entrants: "checked" is for a league (format "league"); list the engines`)
	case req.Entrants != "":
		return nil, errInvalid("entrants", fmt.Sprintf(`entrants %q: want "checked", or none with engines`, req.Entrants))
	case req.Engines == nil:
		return nil, errInvalid("engines", "engines: want a list of at least 2 engine ids")
	}
	if req.PlacementGames != 0 && t.Kind != tournament.KindLeague {
		return nil, errInvalid("placement_games", "placement_games: only a league has placement games")
	}
	var err error
	if t.Settings.SPRT, err = req.sprt(); err != nil {
		return nil, err
	}
	if req.Format == tournament.KindMatch {
		return nil, errInvalid("format", `format: "match" is the record of taikai match; want round_robin, gauntlet, swiss, knockout or league`)
	}
	return t, nil
}

// create validates and stores a new tournament, starts it if asked, and
// answers 201 with it.
func (s *Server) create(w http.ResponseWriter, r *http.Request, t *tournament.Tournament, start bool) {
	if err := t.Validate(); err != nil {
		s.writeError(w, r, err)
		return
	}
	if o := t.Settings.Openings; o != nil && o.File != "" {
		s.writeError(w, r, errInvalid("openings.file", "openings.file: the server reads no files; upload the suite (POST /api/openings) and give its suite_id"))
		return
	}
	if _, err := tournament.LoadSuite(r.Context(), s.DB, &t.Settings); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.DB.CreateTournament(r.Context(), t); err != nil {
		s.writeError(w, r, err)
		return
	}
	if start {
		var err error
		if t, err = s.Service.Start(r.Context(), t.ID); err != nil {
			s.writeError(w, r, err)
			return
		}
	} else if t.EntrantsChecked {
		// The entrants that joined as it was stored.
		var err error
		if t, err = s.DB.Tournament(r.Context(), t.ID); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	s.writeTournament(w, r, http.StatusCreated, t)
}

// pauseTournament is POST /api/tournaments/{id}/pause: a league starts no
// game until .../start; its running games finish and count.
func (s *Server) pauseTournament(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	t, err := s.Service.Pause(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeTournament(w, r, http.StatusOK, t)
}

// snapshotTournament is POST /api/tournaments/{id}/snapshot: a normal
// tournament (round robin, gauntlet, swiss; the body as for POST
// /api/tournaments, without engines) of a league's current versions, its
// entrants that may play now. The league's game, rule, size, clocks,
// openings and concurrency are the defaults.
func (s *Server) snapshotTournament(w http.ResponseWriter, r *http.Request) {
	league, ok := s.tournament(w, r)
	if !ok {
		return
	}
	if league.Kind != tournament.KindLeague {
		s.writeError(w, r, errInvalid("id", fmt.Sprintf("tournament %d is a %s: only a league has a snapshot", league.ID, league.Kind)))
		return
	}
	var req tournamentRequest
	if err := decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	switch {
	case req.Engines != nil:
		s.writeError(w, r, errInvalid("engines", "engines: a snapshot plays the league's current versions; list none"))
		return
	case req.Format == tournament.KindLeague || req.Format == tournament.KindKnockout:
		s.writeError(w, r, errInvalid("format", fmt.Sprintf("format %q: a snapshot is a round_robin, gauntlet or swiss", req.Format)))
		return
	case req.Game != "" && req.Game != league.Settings.Game:
		s.writeError(w, r, errInvalid("game", fmt.Sprintf("game %q: the league plays %s", req.Game, league.Settings.Game)))
		return
	}
	st, err := s.DB.LeagueState(r.Context(), league)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	req.Engines = []int64{}
	for _, k := range st.Field {
		req.Engines = append(req.Engines, k.Engine)
	}
	ls := league.Settings
	req.Game, req.Rule = ls.Game, cmp.Or(req.Rule, ls.Rule)
	req.Size = cmp.Or(req.Size, ls.Size)
	if req.MoveTimeMS == 0 && req.TotalTimeMS == 0 {
		req.MoveTimeMS, req.TotalTimeMS, req.ByoyomiMS = ls.MoveTimeMS, ls.TotalTimeMS, ls.ByoyomiMS
	}
	req.Concurrency = cmp.Or(req.Concurrency, league.Concurrency)
	if req.Openings == nil && !req.Pairs {
		req.Openings = ls.Openings
	}
	req.Name = cmp.Or(strings.TrimSpace(req.Name), league.Name+" (final)")
	t, err := req.tournament()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if req.Options == nil {
		t.Settings.Options = ls.Options
	}
	t.Settings.OnTimeout = cmp.Or(t.Settings.OnTimeout, ls.OnTimeout)
	t.Settings.ConnectMS = cmp.Or(t.Settings.ConnectMS, ls.ConnectMS)
	s.create(w, r, t, req.Start)
}

func (s *Server) startTournament(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	t, err := s.Service.Start(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeTournament(w, r, http.StatusOK, t)
}

func (s *Server) cancelTournament(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// Cancel returns once the running games are aborted and stored; the
	// live state then counts none of them.
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	t, err := s.Service.Cancel(ctx, id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if s.Live != nil {
		s.Live.Flush(ctx)
	}
	s.writeTournament(w, r, http.StatusOK, t)
}

// standings returns a tournament's table, best first.
func (s *Server) standings(r *http.Request, t *tournament.Tournament) ([]tournament.Standing, []tournament.PairResult, error) {
	return standingsOf(r.Context(), s.DB, t)
}

func (s *Server) getStandings(w http.ResponseWriter, r *http.Request) {
	t, ok := s.tournament(w, r)
	if !ok {
		return
	}
	if t.Kind == tournament.KindLeague {
		v := r.URL.Query().Get("versions")
		if v != "" && v != "all" {
			s.writeError(w, r, errInvalid("versions", fmt.Sprintf(`versions %q: want "all" or nothing`, v)))
			return
		}
		rows, err := s.DB.Ladder(r.Context(), t, v == "all")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"standings": rows, "finished_games": t.FinishedGames, "total_games": nil, "placement_games": t.PlacementGames})
		return
	}
	rows, _, err := s.standings(r, t)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"standings": nonNilStandings(rows), "finished_games": t.FinishedGames, "total_games": t.TotalGames})
}

func (s *Server) getCrosstable(w http.ResponseWriter, r *http.Request) {
	t, ok := s.tournament(w, r)
	if !ok {
		return
	}
	rows, pairs, err := s.standings(r, t)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	players := make([]playerJSON, len(rows))
	for i, s := range rows {
		players[i] = playerJSON{EngineID: s.EngineID, Name: s.Name}
	}
	writeJSON(w, http.StatusOK, map[string]any{"engines": players, "cells": crosstable(rows, pairs)})
}
