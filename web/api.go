package web

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/tournament"
	"github.com/taikai-dev/taikai/tournament/stats"
)

// ---- engines ----

type engineJSON struct {
	ID          int64    `json:"id"`
	Name        string   `json:"name"`
	Game        string   `json:"game"`
	Protocol    string   `json:"protocol"`
	Command     []string `json:"command"`
	CommandLine string   `json:"command_line"`
	Port        int      `json:"port,omitempty"`
	Builtin     string   `json:"builtin,omitempty"`
	MemoryMB    int      `json:"memory_mb,omitempty"`
	MaxProcs    int      `json:"max_procs,omitempty"`
	ConnectMS   int64    `json:"connect_timeout_ms,omitempty"`
	Uploaded    bool     `json:"uploaded"`
	// PlayableByOthers: other participants may play it in the browser.
	PlayableByOthers bool       `json:"playable_by_others"`
	Files            []string   `json:"files,omitempty"`
	CreatedAt        time.Time  `json:"created_at"`
	DeletedAt        *time.Time `json:"deleted_at,omitempty"` // deleted engines keep their games
	// Owner is the participant who submitted the engine, null for the admin's.
	Owner *participantRef `json:"owner"`
	// Version is the engine's newest version (replacing an engine adds one),
	// SubmittedAt when it was uploaded.
	Version     int        `json:"version,omitempty"`
	SubmittedAt *time.Time `json:"submitted_at,omitempty"`
	// Check is the engine's last pre-flight check, for those who may read
	// it (everyone for the admin's engines, the owner and the admin for a
	// participant's).
	Check *checkSummaryJSON `json:"check,omitempty"`
}

// checkSummaryJSON is an engine's last check in the engine list.
type checkSummaryJSON struct {
	Status  string `json:"status"` // queued, running, done
	Version int    `json:"version"`
	OK      bool   `json:"ok"`
	Message string `json:"message,omitempty"`
	// Result, Reason and LegalMoves are the check game's (as in the check's
	// answer), for a dashboard that says the message in another language.
	Result     string `json:"result,omitempty"`
	Reason     string `json:"reason,omitempty"`
	LegalMoves int    `json:"legal_moves,omitempty"`
	// MessageKey and MessageParams: Message as a catalog message and its
	// facts (as in the check's answer).
	MessageKey    string         `json:"message_key,omitempty"`
	MessageParams map[string]any `json:"message_params,omitempty"`
}

// engineExtras are what an engine list shows beside the engines: owners'
// names, newest versions, last checks.
type engineExtras struct {
	owners   map[int64]string
	versions map[int64]storage.EngineVersion
	checks   map[int64]storage.EngineCheck
	caller   caller
}

func (s *Server) loadEngineExtras(r *http.Request) (engineExtras, error) {
	x := engineExtras{owners: map[int64]string{}, versions: map[int64]storage.EngineVersion{}, caller: s.softCaller(r)}
	ps, err := s.DB.Participants(r.Context())
	if err != nil {
		return x, err
	}
	for _, p := range ps {
		x.owners[p.ID] = p.Name
	}
	vs, err := s.DB.EngineVersions(r.Context(), 0)
	if err != nil {
		return x, err
	}
	for _, v := range vs {
		if _, ok := x.versions[v.EngineID]; !ok {
			x.versions[v.EngineID] = v
		}
	}
	x.checks, err = s.DB.Checks(r.Context())
	return x, err
}

// add fills in an engine's owner, version and check.
func (x engineExtras) add(j *engineJSON, owner int64) {
	if owner > 0 {
		j.Owner = &participantRef{ID: owner, Name: x.owners[owner]}
	}
	if v, ok := x.versions[j.ID]; ok {
		t := v.CreatedAt
		j.Version, j.SubmittedAt = v.Version, &t
	}
	if c, ok := x.checks[j.ID]; ok && mayRead(x.caller, owner) == nil {
		sum := &checkSummaryJSON{Status: c.Status, Version: c.Version}
		if c.Result != nil {
			var res checkJSON
			if json.Unmarshal(c.Result, &res) == nil {
				sum.OK, sum.Message = res.OK, res.Message
				sum.Result, sum.Reason, sum.LegalMoves = res.Result, res.Reason, res.LegalMoves
				sum.MessageKey, sum.MessageParams = res.MessageKey, res.MessageParams
			}
		}
		j.Check = sum
	}
}

func (s *Server) engineJSON(e storage.EngineRow) engineJSON {
	j := engineJSON{
		ID: e.ID, Name: e.Name, Game: e.Game, Protocol: e.Protocol, Command: e.Command,
		CommandLine: engines.QuoteCommand(e.Command), Port: e.Port, Builtin: e.Builtin,
		MemoryMB: e.MemoryMB, MaxProcs: e.MaxProcs, ConnectMS: e.ConnectTimeoutMS, Uploaded: e.Dir != "", CreatedAt: e.CreatedAt, DeletedAt: e.DeletedAt,
		PlayableByOthers: e.PlayableByOthers,
	}
	if e.Builtin != "" {
		j.CommandLine = "taikai engine " + e.Builtin
	}
	return j
}

func (s *Server) listEngines(w http.ResponseWriter, r *http.Request) {
	list, err := s.DB.Engines(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	x, err := s.loadEngineExtras(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]engineJSON, len(list))
	for i, e := range list {
		out[i] = s.engineJSON(e)
		x.add(&out[i], e.OwnerID)
	}
	writeJSON(w, http.StatusOK, map[string]any{"engines": out})
}

func (s *Server) getEngine(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeEngine(w, r, http.StatusOK, id)
}

// engineRequest is the body of POST /api/engines (or its multipart "meta" part).
type engineRequest struct {
	Name     string          `json:"name"`
	Game     string          `json:"game"`
	Protocol string          `json:"protocol"`
	Command  json.RawMessage `json:"command"`
	Port     int             `json:"port"`
	Builtin  string          `json:"builtin"`
	MemoryMB int             `json:"memory_mb"`
	MaxProcs int             `json:"max_procs"`
	// ConnectTimeoutMS is the time the engine has to connect after its start.
	ConnectTimeoutMS int64 `json:"connect_timeout_ms"`
}

// engine turns a request into a validated engine definition.
func (req *engineRequest) engine() (engines.Engine, error) {
	e := engines.Engine{Name: strings.TrimSpace(req.Name), Game: req.Game, Protocol: req.Protocol, Port: req.Port, Builtin: req.Builtin,
		MemoryMB: req.MemoryMB, MaxProcs: req.MaxProcs, ConnectTimeoutMS: req.ConnectTimeoutMS}
	if len(req.Command) > 0 && string(req.Command) != "null" {
		var line string
		var argv []string
		switch {
		case json.Unmarshal(req.Command, &line) == nil:
			var err error
			if argv, err = engines.SplitCommand(line); err != nil {
				return e, errInvalid("command", "command: "+err.Error())
			}
		case json.Unmarshal(req.Command, &argv) == nil:
		default:
			return e, errInvalid("command", "command: want a string or an array of strings")
		}
		e.Command = argv
	}
	if e.Game == "" {
		return e, errInvalid("game", "game: must be one of "+strings.Join(games.Names(), ", "))
	}
	return e, e.Validate()
}

// createEngine is POST /api/engines: the admin registers an engine of
// their own, a participant one they own (until submissions close). Every
// engine but a built-in is checked in the background.
func (s *Server) createEngine(w http.ResponseWriter, r *http.Request) {
	c := callerOf(r)
	if err := s.submissionsOpen(r.Context(), c); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.receiveEngine(w, r, c.ID, 0, nil, func(e *engines.Engine, up storage.Upload) (int, error) {
		if err := s.DB.RegisterEngine(r.Context(), e, storage.Submission{Owner: c.ID, By: c.ID, MaxOwned: s.participantLimits().Engines, Upload: up}); err != nil {
			return 0, err
		}
		if e.Builtin == "" {
			s.startCheck(*e, c.ID, 1)
		}
		return http.StatusCreated, nil
	})
}

// writeEngine answers with an engine and the files of its upload.
func (s *Server) writeEngine(w http.ResponseWriter, r *http.Request, status int, id int64) {
	row, err := s.DB.EngineRow(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	j := s.engineJSON(row)
	if row.Dir != "" {
		// The list stored at upload: no walk of what the engine's directory
		// holds now (issue 36, item 5).
		files, err := s.DB.UploadedFiles(r.Context(), id)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if len(files) == 0 {
			files = listFiles(row.Dir, maxListed) // uploaded before the list was stored
		}
		j.Files = files
	}
	x, err := s.loadEngineExtras(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	x.add(&j, row.OwnerID)
	writeJSON(w, status, j)
}

// deleteEngine is DELETE /api/engines/{id}: the admin deletes any engine, a
// participant withdraws their own (until submissions close).
func (s *Server) deleteEngine(w http.ResponseWriter, r *http.Request) {
	row, ok := s.ownedEngine(w, r)
	if !ok {
		return
	}
	if err := s.submissionsOpen(r.Context(), callerOf(r)); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.DB.DeleteEngine(r.Context(), row.ID); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) listBuiltins(w http.ResponseWriter, r *http.Request) {
	type builtinJSON struct {
		Name      string   `json:"name"`
		Game      string   `json:"game"`
		Protocols []string `json:"protocols"`
		About     string   `json:"about"`
	}
	var out []builtinJSON
	for _, b := range engines.Builtins() {
		out = append(out, builtinJSON{b.Name, b.Game, b.Protocols, b.About})
	}
	protos := map[string][]string{}
	for _, g := range games.Names() {
		protos[g] = engines.Protocols(g)
	}
	writeJSON(w, http.StatusOK, map[string]any{"builtins": out, "protocols": protos, "placeholders": engines.Placeholders})
}

// ---- tournaments ----

type playerJSON struct {
	EngineID int64  `json:"engine_id"`
	Name     string `json:"name"`
	Nick     string `json:"nick,omitempty"`
	WireName string `json:"wire_name,omitempty"`
	Human    bool   `json:"human,omitempty"` // a person played this side
}

type tournamentJSON struct {
	ID            int64  `json:"id"`
	Name          string `json:"name"`
	Game          string `json:"game"`
	Rule          string `json:"rule,omitempty"`
	Size          int    `json:"size"`
	Status        string `json:"status"`
	TotalGames    int64  `json:"total_games"`
	FinishedGames int64  `json:"finished_games"`
	// Records are the record formats its games export to ("ggf"): GET
	// .../games.<ext>.
	Records      []string            `json:"records,omitempty"`
	RunningGames int                 `json:"running_games"`
	GamesPerPair int                 `json:"games_per_pair"`
	Concurrency  int                 `json:"concurrency"`
	Format       string              `json:"format"`              // round_robin, gauntlet, swiss, knockout, or match
	Rounds       int                 `json:"rounds,omitempty"`    // swiss
	MaxExtra     int                 `json:"max_extra,omitempty"` // knockout
	Engines      []playerJSON        `json:"engines"`
	Settings     tournament.Settings `json:"settings"`
	CreatedAt    *string             `json:"created_at"`
	StartedAt    *string             `json:"started_at"`
	FinishedAt   *string             `json:"finished_at"`
	ETASeconds   *float64            `json:"eta_seconds"`
}

func (s *Server) tournamentJSON(t *tournament.Tournament, names map[int64]string) tournamentJSON {
	j := tournamentJSON{
		ID: t.ID, Name: t.Name, Game: t.Settings.Game, Rule: t.Settings.Rule, Size: t.Settings.Size, Status: t.Status,
		TotalGames: t.TotalGames, FinishedGames: t.FinishedGames, GamesPerPair: t.GamesPerPair, Concurrency: t.Concurrency,
		Format: t.Kind, Rounds: t.Rounds, MaxExtra: t.MaxExtra,
		Settings: t.Settings, Engines: []playerJSON{},
		CreatedAt: timeOrNil(&t.CreatedAt), StartedAt: timeOrNil(t.StartedAt), FinishedAt: timeOrNil(t.FinishedAt),
	}
	j.Records = games.RecordExts(t.Settings.Game)
	if s.Live != nil {
		j.RunningGames = s.Live.RunningIn(t.ID)
	}
	for _, id := range t.Engines {
		j.Engines = append(j.Engines, playerJSON{EngineID: id, Name: names[id]})
	}
	j.ETASeconds = eta(t)
	return j
}

// eta estimates the seconds a running tournament has left from its rate so
// far; nil before its first game ends.
func eta(t *tournament.Tournament) *float64 {
	if t.Status != tournament.StatusRunning || t.StartedAt == nil || t.FinishedGames == 0 {
		return nil
	}
	per := time.Since(*t.StartedAt).Seconds() / float64(t.FinishedGames)
	e := math.Round(per * float64(t.TotalGames-t.FinishedGames))
	return &e
}

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
	t := &tournament.Tournament{
		Name: strings.TrimSpace(req.Name), Kind: cmp.Or(req.Format, tournament.KindRoundRobin), Engines: req.Engines,
		GamesPerPair: req.GamesPerPair, Concurrency: req.Concurrency, Rounds: req.Rounds, MaxExtra: req.MaxExtra,
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
	if req.Engines == nil {
		s.writeError(w, r, errInvalid("engines", "engines: want a list of at least 2 engine ids"))
		return
	}
	var err error
	if t.Settings.SPRT, err = req.sprt(); err != nil {
		s.writeError(w, r, err)
		return
	}
	if req.Format == tournament.KindMatch {
		s.writeError(w, r, errInvalid("format", `format: "match" is the record of taikai match; want round_robin, gauntlet, swiss or knockout`))
		return
	}
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
	if req.Start {
		var err error
		if t, err = s.Service.Start(r.Context(), t.ID); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	s.writeTournament(w, r, http.StatusCreated, t)
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
	rows, _, err := s.standings(r, t)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"standings": nonNilStandings(rows), "finished_games": t.FinishedGames, "total_games": t.TotalGames})
}

func nonNilStandings(rows []tournament.Standing) []tournament.Standing {
	if rows == nil {
		return []tournament.Standing{}
	}
	return rows
}

type crossCell struct {
	Games  int64   `json:"games"`
	Wins   int64   `json:"wins"`
	Draws  int64   `json:"draws"`
	Losses int64   `json:"losses"`
	Points float64 `json:"points"`
}

// crosstable builds the engine-by-engine table in standings order: cell [i][j]
// is row engine i's record against column engine j, null on the diagonal and
// for pairs that have not played.
func crosstable(rows []tournament.Standing, pairs []tournament.PairResult) [][]*crossCell {
	at := make(map[int64]int, len(rows))
	for i, s := range rows {
		at[s.EngineID] = i
	}
	cells := make([][]*crossCell, len(rows))
	for i := range cells {
		cells[i] = make([]*crossCell, len(rows))
	}
	for _, p := range pairs {
		a, ok1 := at[p.A]
		b, ok2 := at[p.B]
		if !ok1 || !ok2 {
			continue
		}
		n := p.AWins + p.Draws + p.BWins
		cells[a][b] = &crossCell{n, p.AWins, p.Draws, p.BWins, float64(p.AWins) + float64(p.Draws)/2}
		cells[b][a] = &crossCell{n, p.BWins, p.Draws, p.AWins, float64(p.BWins) + float64(p.Draws)/2}
	}
	return cells
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

// ---- games ----

type gameJSON struct {
	ID           *int64     `json:"id"`
	TournamentID int64      `json:"tournament_id"`
	Index        int64      `json:"index"`
	Game         string     `json:"game,omitempty"`
	Rule         string     `json:"rule,omitempty"`
	Size         int        `json:"size,omitempty"`
	Black        playerJSON `json:"black"`
	White        playerJSON `json:"white"`
	Status       string     `json:"status"`
	Result       *string    `json:"result"`
	Reason       *string    `json:"reason"`
	Cause        string     `json:"cause,omitempty"`
	Plies        int        `json:"plies"`
	Detail       string     `json:"detail,omitempty"`
	// Refused: the move refused before the timeout that ended the game
	// (cause after_refused): {"color", "move", "why"}.
	Refused *tournament.RefusedMove `json:"refused,omitempty"`
	Pair    int64                   `json:"pair,omitempty"`    // the game pair it is one of, from 1 (one opening, colours swapped)
	Slot    string                  `json:"slot,omitempty"`    // swiss, knockout: round, match and game from 0 ("r2m3g1")
	Worker  string                  `json:"worker,omitempty"`  // the taikai worker that played it; absent when the server did
	Attempt int                     `json:"attempt,omitempty"` // which delivery of the game that worker played (2 and more: played again)
	// Opening is the opening the game started from: its first opening.plies
	// moves are the opening's, played by the server.
	Opening   *tournament.Opening `json:"opening,omitempty"`
	StartedAt *string             `json:"started_at"`
	EndedAt   *string             `json:"ended_at"`
	View      *boardView          `json:"view,omitempty"` // how the dashboard draws it (live messages and pages)
}

// boardView is how the dashboard draws a game's board (games.View), with its
// start position: the browser knows no game by name.
type boardView struct {
	games.View
	Stars   [][2]int `json:"stars,omitempty"` // as [x, y] pairs: shadows View.Stars
	Start   []string `json:"start"`
	Records []string `json:"records,omitempty"` // record formats a finished game exports to: GET /api/games/{id}.<ext>
}

// withView adds the board view to a game for the dashboard.
func withView(g gameJSON) gameJSON {
	if bv := boardViewOf(g.Game, g.Rule, g.Size); bv != nil {
		g.View = bv
	}
	return g
}

// boardViewOf is how the dashboard draws a game's board, nil for a game
// it does not know; size 0 is the game's default.
func boardViewOf(game, rule string, size int) *boardView {
	gm, ok := games.Lookup(game)
	if !ok || gm.View == nil {
		return nil
	}
	if size == 0 {
		size = gm.Size
	}
	v := gm.View(size)
	bv := &boardView{View: v, Start: newReplay(game, rule, size).rows(), Records: games.RecordExts(game)}
	for _, p := range v.Stars {
		bv.Stars = append(bv.Stars, [2]int{p.X, p.Y})
	}
	return bv
}

func strOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toGameJSON(g *tournament.Game) gameJSON {
	id := g.ID
	return gameJSON{
		ID: &id, TournamentID: g.TournamentID, Index: g.Index, Game: g.Game, Rule: g.Rule, Size: g.Size,
		Black: playerJSON(g.Black), White: playerJSON(g.White), Status: g.Status,
		Result: strOrNil(g.Result), Reason: strOrNil(g.Reason), Cause: g.Cause, Plies: g.Plies, Detail: g.Detail, Refused: g.Refused,
		StartedAt: timeOrNil(g.StartedAt), EndedAt: timeOrNil(g.EndedAt), Pair: g.Pair, Opening: g.Opening, Slot: g.Slot,
		Worker: g.Worker, Attempt: g.Attempt,
	}
}

func (s *Server) listGames(w http.ResponseWriter, r *http.Request) {
	t, ok := s.tournament(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	f := storage.GameFilter{Status: q.Get("status"), Result: q.Get("result"), Reason: q.Get("reason")}
	for _, p := range []struct {
		name string
		dst  *int
	}{{"limit", &f.Limit}, {"offset", &f.Offset}} {
		if v := q.Get(p.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				s.writeError(w, r, errInvalid(p.name, fmt.Sprintf("%s %q: want a non-negative integer", p.name, v)))
				return
			}
			*p.dst = n
		}
	}
	if f.Limit == 0 || f.Limit > 5000 {
		f.Limit = min(max(f.Limit, 1000), 5000)
	}
	if v := q.Get("engine"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			s.writeError(w, r, errInvalid("engine", fmt.Sprintf("engine %q: want an engine id", v)))
			return
		}
		f.Engine = id
	}
	switch f.Status {
	case "", tournament.GameScheduled, tournament.GameRunning, tournament.GameFinished, tournament.GameAborted:
	default:
		s.writeError(w, r, errInvalid("status", fmt.Sprintf("status %q: want scheduled, running, finished or aborted", f.Status)))
		return
	}
	out := []gameJSON{}
	if f.Status != tournament.GameScheduled {
		list, err := s.DB.Games(r.Context(), t.ID, f)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		for _, g := range list {
			j := toGameJSON(g)
			if g.Status == tournament.GameRunning && s.Live != nil {
				if n, ok := s.Live.LivePlies(g.ID); ok {
					j.Plies = n
				}
			}
			out = append(out, j)
		}
	}
	// Games not started yet come from the schedule, not the database (swiss
	// and knockout pair as they go: their games are not known in advance).
	if (f.Status == "" || f.Status == tournament.GameScheduled) && f.Result == "" && f.Reason == "" && len(out) < f.Limit &&
		t.Status != tournament.StatusCancelled && !t.Dynamic() {
		names, err := s.DB.EngineNames(r.Context(), t.Engines)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		sched := t.Schedule()
		for k := t.NextIndex; k < sched.Total() && len(out) < f.Limit; k++ {
			p := sched.Game(k)
			b, wh := t.Engines[p.Black], t.Engines[p.White]
			if f.Engine != 0 && b != f.Engine && wh != f.Engine {
				continue
			}
			out = append(out, gameJSON{
				TournamentID: t.ID, Index: k, Game: t.Settings.Game, Rule: t.Settings.Rule, Size: t.Settings.Size,
				Black: playerJSON{EngineID: b, Name: names[b]}, White: playerJSON{EngineID: wh, Name: names[wh]},
				Status: tournament.GameScheduled,
			})
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"games": out})
}

func (s *Server) listRunningGames(w http.ResponseWriter, r *http.Request) {
	var out []gameJSON
	if s.Live != nil {
		for _, g := range s.Live.Running() {
			out = append(out, toGameJSON(g))
		}
	}
	if out == nil {
		out = []gameJSON{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"games": out})
}

type gameDetailJSON struct {
	gameJSON
	Moves      []games.MoveView            `json:"moves"`
	Violations map[string]games.Violations `json:"violations"`
	Stones     map[string]int              `json:"stones"`
	Logs       map[string]string           `json:"logs"`
	// Sandbox is the sandbox state the game ran under: on or off (null for
	// games stored before sandboxes).
	Sandbox *string `json:"sandbox"`
	// Usage: how each engine's process ended (exit status or signal), its
	// peak memory and CPU time, for the engines that started.
	Usage map[string]*engines.Usage `json:"usage"`
	// ConnectMS: how long each engine took from its start to its connection
	// (absent for one that did not connect, or a game stored before).
	ConnectMS map[string]int64 `json:"connect_ms"`
}

func (s *Server) getGame(w http.ResponseWriter, r *http.Request) {
	if idText, ext, ok := strings.Cut(chi.URLParam(r, "id"), "."); ok {
		s.getGameFile(w, r, idText, ext)
		return
	}
	id, err := idParam(r, "id")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	g, err := s.DB.Game(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if g.Status == tournament.GameRunning && s.Live != nil {
		if moves, opening, ok := s.Live.LiveMoves(id); ok {
			g.Moves, g.Plies, g.Opening = moves, len(moves), opening
		}
	}
	writeJSON(w, http.StatusOK, gameDetail(g))
}

func gameDetail(g *tournament.Game) gameDetailJSON {
	d := gameDetailJSON{
		gameJSON: toGameJSON(g), Moves: make([]games.MoveView, len(g.Moves)),
		Violations: map[string]games.Violations{"black": nonNilViolations(g.Violations[0]), "white": nonNilViolations(g.Violations[1])},
		Logs:       map[string]string{},
	}
	d.Plies = len(g.Moves)
	d.Sandbox = strOrNil(g.Sandbox)
	d.Usage = map[string]*engines.Usage{}
	d.ConnectMS = map[string]int64{}
	for i, c := range []string{"black", "white"} {
		if g.Usage[i] != nil {
			d.Usage[c] = g.Usage[i]
		}
		if g.ConnectMS[i] > 0 {
			d.ConnectMS[c] = g.ConnectMS[i]
		}
	}
	for i, m := range g.Moves {
		d.Moves[i] = m.View(g.Game, i+1)
		d.Moves[i].Opening = g.Opening != nil && i < g.Opening.Plies
	}
	if g.Status == tournament.GameFinished || g.Status == tournament.GameAborted {
		d.Stones = map[string]int{"black": g.Stones[0], "white": g.Stones[1]}
	}
	if g.Logs != "" {
		for _, c := range []string{"black", "white"} {
			d.Logs[c] = fmt.Sprintf("/api/games/%d/log/%s", g.ID, c)
		}
	}
	return d
}

func nonNilViolations(v games.Violations) games.Violations {
	if v == nil {
		return games.Violations{}
	}
	return v
}

// getGameLog serves an engine's captured output.
func (s *Server) getGameLog(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var c games.Color
	switch chi.URLParam(r, "color") {
	case "black":
		c = games.Black
	case "white":
		c = games.White
	default:
		s.writeError(w, r, &games.Error{Code: games.ENotFound, Message: "color: want black or white", Field: "color"})
		return
	}
	g, err := s.DB.Game(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// A participant's engine's output is for its owner and the admin.
	engineID := g.Black.EngineID
	if c == games.White {
		engineID = g.White.EngineID
	}
	row, err := s.DB.EngineRow(r.Context(), engineID)
	if err == nil {
		err = mayRead(s.softCaller(r), row.OwnerID)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if g.Logs == "" {
		s.writeError(w, r, &games.Error{Code: games.ENotFound, Message: fmt.Sprintf("game %d kept no engine output", id)})
		return
	}
	dir := g.Logs
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(s.DataDir, dir)
	}
	f, err := os.Open(filepath.Join(dir, tournament.LogName(id, c)))
	if err != nil {
		s.writeError(w, r, &games.Error{Code: games.ENotFound, Message: fmt.Sprintf("no %s output for game %d", c, id)})
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = io.Copy(w, f)
}
