package web

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/tournament"
)

// PlayOptions say who may play engines in the browser (issue 39) and how
// much at once.
type PlayOptions struct {
	// Guests: a visitor who is not signed in may start a game against a
	// built-in (serve --play-guests).
	Guests bool
	// Idle is how long a person's seat may go without a move before it
	// resigns (serve --play-idle); 0: tournament.DefaultIdle.
	Idle time.Duration
	// PerPerson and PerEngine bound the games with people in flight: per
	// person (a participant, the admin, a guest's address) and per engine;
	// 0: 2 and 4.
	PerPerson, PerEngine int
}

// seatTokenPrefix starts every seat token: a seat's token is a capability
// for one side of one game, nothing more.
const seatTokenPrefix = "tks_"

// playGame is a game with a person, as the API knows it while it runs.
type playGame struct {
	gameID int64
	engine int64     // the engine's id, 0 between two people
	who    string    // who started it, for the limits
	tokens [2]string // hashes of black's and white's seat tokens, "" for an engine's side
	game   string
	names  [2]string // black's and white's
	moveMS int64     // the engine's time per move, 0: its protocol's default
}

// plays are the games with people started on this server.
type plays struct {
	mu    sync.Mutex
	games map[int64]*playGame // by game id
}

func (p *plays) add(g *playGame) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.games == nil {
		p.games = map[int64]*playGame{}
	}
	p.games[g.gameID] = g
}

func (p *plays) get(id int64) *playGame {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.games[id]
}

// inFlight counts the games being played that who started, and those of
// engine. A game that is over stays in the map (its seat tokens still read
// its end) until the server stops.
func (p *plays) inFlight(people *tournament.People, who string, engine int64) (mine, its int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, g := range p.games {
		if !people.Playing(id) {
			continue
		}
		if g.who == who {
			mine++
		}
		if engine != 0 && g.engine == engine {
			its++
		}
	}
	return mine, its
}

// playRequest is the body of POST /api/play.
type playRequest struct {
	Engine     *int64 `json:"engine"`
	Game       string `json:"game"`
	Color      string `json:"color"`
	MoveTimeMS int64  `json:"move_time_ms"`
	Rule       string `json:"rule"`
	Size       int    `json:"size"`
}

// seatJSON is one person's seat in the answer of POST /api/play.
type seatJSON struct {
	Color     string `json:"color"`
	SeatToken string `json:"seat_token"`
	URL       string `json:"url"`
}

type playJSON struct {
	GameID       int64  `json:"game_id"`
	TournamentID int64  `json:"tournament_id"`
	Color        string `json:"color"`
	SeatToken    string `json:"seat_token"`
	URL          string `json:"url"`
	// Second is the other person's seat in a game between two people.
	Second *seatJSON `json:"second,omitempty"`
}

// playRoutes adds the API of games with people.
func (s *Server) playRoutes(r chi.Router) {
	r.With(s.reader).Post("/play", s.startPlay)
	r.Post("/games/{id}/move", s.playMove)
	r.Post("/games/{id}/resign", s.playResign)
	r.Get("/games/{id}/seat", s.getSeat)
}

func (s *Server) people() *tournament.People {
	if s.Service == nil || s.Service.Runner == nil {
		return nil
	}
	return s.Service.Runner.People
}

// playWho names the person starting a game for the limits, and their name
// in the game's record; an error if they may not start one.
func (s *Server) playWho(r *http.Request) (who, name string, c caller, err error) {
	c = callerOf(r)
	switch {
	case c.Admin:
		return "admin", "admin", c, nil
	case c.ID > 0:
		return "p" + strconv.FormatInt(c.ID, 10), c.Name, c, nil
	case s.Play.Guests:
		return "guest " + clientAddr(r), "guest", c, nil
	}
	return "", "", c, &games.Error{Code: games.EUnauthorized, Field: "Authorization",
		Message: "playing an engine needs the admin's or a participant's sign-in (this server does not let guests play: serve --play-guests)"}
}

func (s *Server) startPlay(w http.ResponseWriter, r *http.Request) {
	people := s.people()
	if people == nil {
		s.writeError(w, r, &games.Error{Code: games.EUnavailable, Message: "this server plays no games with people"})
		return
	}
	who, name, c, err := s.playWho(r)
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="taikai"`)
		s.writeError(w, r, err)
		return
	}
	var req playRequest
	if err := decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	players, color, err := s.playPlayers(r, req, c, name)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var engineID int64
	for _, e := range players {
		if e.Protocol != engines.Human {
			engineID = e.ID
		}
	}
	perPerson, perEngine := s.playLimits()
	if mine, its := s.plays.inFlight(people, who, engineID); mine >= perPerson {
		s.writeError(w, r, &games.Error{Code: games.ETooMany, Message: fmt.Sprintf("you are playing %d games already, the most at once: finish or resign one", mine)})
		return
	} else if its >= perEngine {
		s.writeError(w, r, &games.Error{Code: games.ETooMany, Field: "engine", Message: fmt.Sprintf("engine %d is playing %d people already, the most at once: try again later", engineID, its)})
		return
	}
	set := tournament.Settings{Game: players[0].Game, Rule: req.Rule, Size: req.Size, MoveTimeMS: req.MoveTimeMS, IdleMS: s.Play.Idle.Milliseconds()}
	t := &tournament.Tournament{Name: "play: " + players[0].Name + " vs " + players[1].Name, Kind: tournament.KindPlay,
		Settings: set, GamesPerPair: 1, Concurrency: 1, Seed: rand.Uint64()}
	t.Engines = []int64{1, 2} // checked for their number only; the store sets them
	if err := t.Validate(); err != nil {
		s.writeError(w, r, err)
		return
	}
	t.TotalGames = 1
	if err := s.DB.CreatePlay(r.Context(), t, [2]*engines.Engine{&players[0], &players[1]}); err != nil {
		s.writeError(w, r, err)
		return
	}
	if _, err := s.Service.Start(r.Context(), t.ID); err != nil {
		s.writeError(w, r, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	gameID, err := people.Game(ctx, t.ID)
	if err != nil {
		s.writeError(w, r, &games.Error{Code: games.EUnavailable, Message: "the game did not start in time", Err: err})
		return
	}
	g := &playGame{gameID: gameID, engine: engineID, who: who, game: set.Game,
		names: [2]string{players[0].Name, players[1].Name}, moveMS: req.MoveTimeMS}
	var seats []seatJSON
	for i, e := range players {
		if e.Protocol != engines.Human {
			continue
		}
		token := seatTokenPrefix + newSecret()
		g.tokens[i] = HashToken(token)
		seats = append(seats, seatJSON{Color: games.ColorAt(i).String(), SeatToken: token,
			URL: fmt.Sprintf("/play/%d#seat=%s", gameID, token)})
	}
	s.plays.add(g)
	// The first seat is the caller's: the colour asked for, else black.
	if len(seats) == 2 && color == games.White {
		seats[0], seats[1] = seats[1], seats[0]
	}
	out := playJSON{GameID: gameID, TournamentID: t.ID, Color: seats[0].Color, SeatToken: seats[0].SeatToken, URL: seats[0].URL}
	if len(seats) == 2 {
		out.Second = &seats[1]
	}
	s.log().Info("game with a person started", "game", gameID, "tournament", t.ID, "black", players[0].Name, "white", players[1].Name)
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) playLimits() (perPerson, perEngine int) {
	perPerson, perEngine = s.Play.PerPerson, s.Play.PerEngine
	if perPerson <= 0 {
		perPerson = 2
	}
	if perEngine <= 0 {
		perEngine = 4
	}
	return perPerson, perEngine
}

// playPlayers are black and white of a new game with a person: the engine
// asked for (which the caller may play) and the person, or two people; and
// the colour of the caller's seat.
func (s *Server) playPlayers(r *http.Request, req playRequest, c caller, name string) ([2]engines.Engine, games.Color, error) {
	var players [2]engines.Engine
	var color games.Color
	switch req.Color {
	case "", "random":
		color = games.ColorAt(rand.IntN(2))
	case "black", "white":
		color, _ = games.ParseColor(req.Color)
	default:
		return players, color, errInvalid("color", fmt.Sprintf("%q: want black, white or random", req.Color))
	}
	person := engines.Engine{Name: name, Protocol: engines.Human}
	var opponent engines.Engine
	if req.Engine == nil {
		if _, ok := games.Lookup(req.Game); !ok {
			return players, color, errInvalid("game", "between two people: "+games.Unknown(req.Game))
		}
		person.Game = req.Game
		opponent = person
	} else {
		row, err := s.DB.EngineRow(r.Context(), *req.Engine)
		if err != nil || row.DeletedAt != nil || row.Protocol == engines.Human {
			return players, color, &games.Error{Code: games.ENotFound, Field: "engine", Message: fmt.Sprintf("engine %d: not found", *req.Engine)}
		}
		if req.Game != "" && req.Game != row.Game {
			return players, color, errInvalid("game", fmt.Sprintf("engine %d plays %s, not %s", row.ID, row.Game, req.Game))
		}
		switch {
		case c.Admin, row.Builtin != "":
		case c.ID > 0 && (row.OwnerID == c.ID || row.PlayableByOthers):
		default:
			return players, color, &games.Error{Code: games.EForbidden, Field: "engine",
				Message: fmt.Sprintf("engine %d is not yours: a participant plays their own engines, the built-ins and engines whose owners allow it (playable_by_others), a guest the built-ins", row.ID)}
		}
		if err := s.allow(row.Engine); err != nil {
			return players, color, err
		}
		person.Game = row.Game
		opponent = row.Engine
	}
	players[color.Index()], players[1-color.Index()] = person, opponent
	return players, color, nil
}

// moveRequest is the body of POST /api/games/{id}/move: a point, a
// checkers path, or the move in the game's notation.
type moveRequest struct {
	X    *int     `json:"x"`
	Y    *int     `json:"y"`
	Path [][2]int `json:"path"`
	Text *string  `json:"text"`
	Pass bool     `json:"pass"`
}

// maxPath bounds a checkers path in a move request (a capture sequence
// lands on at most 12 squares).
const maxPath = 32

// maxMoveText bounds a move's text.
const maxMoveText = 100

// parseMove reads a person's move for a game (moveFromRequest), and refuses
// a path for a game whose moves are points: a move must read back from
// its own notation as itself.
func parseMove(game string, body []byte) (games.Move, error) {
	m, err := moveFromRequest(game, body)
	if err != nil || len(m.Path) == 0 {
		return m, err
	}
	g, _ := games.Lookup(game)
	if back, err := g.ParseMove(games.Text(game, m)); err == nil && !back.Equal(m) {
		return games.Move{}, errInvalid("path", fmt.Sprintf("a %s move is a point: give x and y, without a path", game))
	}
	return m, nil
}

// moveFromRequest reads a person's move for a game: {"x", "y"} (Othello, Gomoku;
// with "path", the squares a checkers move lands on), {"path"} (a checkers
// move from its first square), {"text"} in the game's notation, or
// {"pass": true}. Exactly one form; the rules judge the move itself.
func moveFromRequest(game string, body []byte) (games.Move, error) {
	var req moveRequest
	if err := decodeJSON(strings.NewReader(string(body)), &req); err != nil {
		return games.Move{}, err
	}
	g, ok := games.Lookup(game)
	if !ok {
		return games.Move{}, errInvalid("game", games.Unknown(game))
	}
	forms := 0
	for _, set := range []bool{req.X != nil || req.Y != nil, req.X == nil && len(req.Path) > 0, req.Text != nil, req.Pass} {
		if set {
			forms++
		}
	}
	if forms != 1 {
		return games.Move{}, errInvalid("body", `give one of {"x", "y"}, {"path"}, {"text"} or {"pass": true}`)
	}
	if len(req.Path) > maxPath {
		return games.Move{}, errInvalid("path", fmt.Sprintf("at most %d squares", maxPath))
	}
	path := make([]games.Point, len(req.Path))
	for i, p := range req.Path {
		path[i] = games.Point{X: p[0], Y: p[1]}
	}
	switch {
	case req.Pass:
		return games.PassMove, nil
	case req.Text != nil:
		text := strings.TrimSpace(*req.Text)
		if len(text) > maxMoveText {
			return games.Move{}, errInvalid("text", fmt.Sprintf("at most %d bytes", maxMoveText))
		}
		m, err := g.ParseMove(text)
		if err != nil {
			return games.Move{}, errInvalid("text", fmt.Sprintf("%q: %v", text, err))
		}
		return m, nil
	case req.X != nil:
		if req.Y == nil {
			return games.Move{}, errInvalid("y", `"x" needs "y"`)
		}
		if req.X == nil {
			return games.Move{}, errInvalid("x", `"y" needs "x"`)
		}
		return games.Move{X: *req.X, Y: *req.Y, Path: nonEmpty(path)}, nil
	case req.Y != nil:
		return games.Move{}, errInvalid("x", `"y" needs "x"`)
	}
	if len(path) < 2 {
		return games.Move{}, errInvalid("path", "a path is the piece's square and at least one landing square")
	}
	return games.Move{X: path[0].X, Y: path[0].Y, Path: path[1:]}, nil
}

func nonEmpty(p []games.Point) []games.Point {
	if len(p) == 0 {
		return nil
	}
	return p
}

// seatOf finds the game and the colour of the request's seat token: 401
// without one, 403 with one that is not a seat of this game.
func (s *Server) seatOf(r *http.Request) (*playGame, games.Color, error) {
	id, err := idParam(r, "id")
	if err != nil {
		return nil, games.None, err
	}
	if wait, blocked := s.signIns.blocked(clientAddr(r), time.Now()); blocked {
		return nil, games.None, tooMany("too many wrong tokens from this address: try again in %s s", wait)
	}
	h := r.Header.Get("Authorization")
	token, ok := strings.CutPrefix(h, "Bearer ")
	if h == "" || !ok || token == "" {
		return nil, games.None, &games.Error{Code: games.EUnauthorized, Field: "Authorization", Message: "this needs the seat's token: Authorization: Bearer <seat_token>"}
	}
	if g := s.plays.get(id); g != nil {
		hash := HashToken(token)
		for i, t := range g.tokens {
			if t != "" && subtle.ConstantTimeCompare([]byte(t), []byte(hash)) == 1 {
				return g, games.ColorAt(i), nil
			}
		}
	}
	s.signIns.failed(clientAddr(r), time.Now())
	return nil, games.None, &games.Error{Code: games.EForbidden, Field: "Authorization", Message: fmt.Sprintf("this token is not a seat of game %d", id)}
}

func (s *Server) playMove(w http.ResponseWriter, r *http.Request) {
	s.seatAction(w, r, func(ctx context.Context, g *playGame, seat *engines.Person) error {
		body, err := readBody(w, r)
		if err != nil {
			return err
		}
		m, err := parseMove(g.game, body)
		if err != nil {
			return err
		}
		if err := seat.Move(ctx, m); err != nil {
			return moveError(g, m, err)
		}
		return nil
	})
}

func (s *Server) playResign(w http.ResponseWriter, r *http.Request) {
	s.seatAction(w, r, func(ctx context.Context, g *playGame, seat *engines.Person) error {
		if err := seat.Resign(ctx); err != nil {
			return moveError(g, games.Move{}, err)
		}
		return nil
	})
}

// seatAction does what a seat's token asks of its seat (a move, a
// resignation) and answers with the seat's view.
func (s *Server) seatAction(w http.ResponseWriter, r *http.Request, do func(context.Context, *playGame, *engines.Person) error) {
	g, c, err := s.seatOf(r)
	if err != nil {
		s.writeAuthError(w, r, err)
		return
	}
	seat, ok := s.people().Seat(g.gameID, c)
	if !ok {
		s.writeError(w, r, gameOver(g.gameID))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	if err := do(ctx, g, seat); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeSeat(w, r, g, c)
}

// readBody reads a small JSON body whole.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	var raw json.RawMessage
	if err := decode(w, r, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

func gameOver(id int64) error {
	return &games.Error{Code: games.EConflict, Message: fmt.Sprintf("game %d is over", id)}
}

// moveError is the API's error for a person's move that was not played.
func moveError(g *playGame, m games.Move, err error) error {
	var refused *engines.RefusedError
	switch {
	case errors.As(err, &refused):
		why, text := refused.Why.String(), moveText(g.game, m)
		params, full := map[string]any{"move": text}, why
		if refused.Detail != "" {
			params["detail"], full = refused.Detail, why+": "+refused.Detail
		}
		return (&games.Error{Code: games.EIllegal, Field: "move",
			Message: fmt.Sprintf("%s: %s (the game goes on: play another move)", text, full)}).
			With(why, params)
	case errors.Is(err, engines.ErrNotYourTurn):
		return &games.Error{Code: games.EConflict, Message: "it is not your turn"}
	case errors.Is(err, engines.ErrGameOver):
		return gameOver(g.gameID)
	case errors.Is(err, engines.ErrNotBegun):
		return &games.Error{Code: games.EConflict, Message: fmt.Sprintf("game %d has not begun yet: its engine is starting", g.gameID)}
	}
	return err
}

// moveText names a move in the game's notation, or by its coordinates when
// the notation cannot (a point off the board, which Othello's would wrap).
func moveText(game string, m games.Move) string {
	text := games.Text(game, m)
	if g, ok := games.Lookup(game); ok {
		if back, err := g.ParseMove(text); err == nil && back.Equal(m) {
			return text
		}
	}
	return fmt.Sprintf("x %d, y %d", m.X, m.Y)
}

// seatStateJSON is a seat's view of its game: GET /api/games/{id}/seat and
// the answer to a move.
type seatStateJSON struct {
	GameID    int64          `json:"game_id"`
	Game      string         `json:"game"`
	Color     string         `json:"color"`
	Turn      string         `json:"turn"`
	Plies     int            `json:"plies"`
	Board     []string       `json:"board"`
	Legal     []legalJSON    `json:"legal"`
	Forbidden [][2]int       `json:"forbidden"`
	Over      bool           `json:"over"`
	Result    string         `json:"result,omitempty"`
	Reason    string         `json:"reason,omitempty"`
	Cause     string         `json:"cause,omitempty"`
	View      *boardView     `json:"view"`
	Moves     []moveTextJSON `json:"moves"`
	Black     string         `json:"black"` // the players' names
	White     string         `json:"white"`
	// MoveTimeMS is the engine's time per move as asked (0: its default).
	MoveTimeMS int64 `json:"move_time_ms"`
	// Version changes with every change of the view (?since=).
	Version int64 `json:"version"`
}

type legalJSON struct {
	X    *int     `json:"x"`
	Y    *int     `json:"y"`
	Path [][2]int `json:"path,omitempty"`
	Text string   `json:"text"`
}

type moveTextJSON struct {
	Color string `json:"color"`
	Text  string `json:"text"`
	X     *int   `json:"x"` // null for a pass
	Y     *int   `json:"y"`
}

// coord is a move's coordinate v, nil for a pass.
func coord(m games.Move, v int) *int {
	if m.Pass {
		return nil
	}
	return &v
}

// getSeat is the seat's view; with ?after=N it waits (up to 25 s) until
// more than N plies have been played, it is the seat's turn, or the game is
// over; with ?since=V until the view's version is no longer V.
func (s *Server) getSeat(w http.ResponseWriter, r *http.Request) {
	g, c, err := s.seatOf(r)
	if err != nil {
		s.writeAuthError(w, r, err)
		return
	}
	after, since := -1, int64(-1)
	for _, q := range []struct {
		name string
		to   func(int64)
	}{{"after", func(v int64) { after = int(v) }}, {"since", func(v int64) { since = v }}} {
		v := r.URL.Query().Get(q.name)
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 0 {
			s.writeError(w, r, errInvalid(q.name, fmt.Sprintf("%q: want a whole number, 0 or more", v)))
			return
		}
		q.to(n)
	}
	if after >= 0 || since >= 0 {
		if seat, ok := s.people().Seat(g.gameID, c); ok {
			ctx, cancel := context.WithTimeout(r.Context(), 25*time.Second)
			defer cancel()
			for {
				st, changed := seat.State()
				if st.Ended || after >= 0 && (st.Plies > after || st.Turn == c) || since >= 0 && st.Version != since {
					break
				}
				select {
				case <-changed:
					continue
				case <-ctx.Done():
				}
				break
			}
		}
	}
	s.writeSeat(w, r, g, c)
}

// writeSeat answers with the seat's view: from the seat while the game is
// played, from the store once it is over.
func (s *Server) writeSeat(w http.ResponseWriter, r *http.Request, g *playGame, c games.Color) {
	out := seatStateJSON{GameID: g.gameID, Game: g.game, Color: c.String(), Legal: []legalJSON{}, Forbidden: [][2]int{}, Moves: []moveTextJSON{},
		Black: g.names[0], White: g.names[1], MoveTimeMS: g.moveMS}
	out.View = boardViewOf(g.game, "", 0)
	seat, ok := s.people().Seat(g.gameID, c)
	var st engines.PersonState
	if ok {
		st, _ = seat.State()
	}
	if !ok || st.Ended {
		stored, err := s.DB.Game(r.Context(), g.gameID)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if stored.Status == tournament.GameRunning && ok {
			// Ended, not yet stored: the seat's view is the last.
			out.Over = true
			out.Reason, out.Cause = st.Ending.Reason, st.Ending.Cause
			switch {
			case st.Ending.Reason == "", st.Ending.Reason == games.ReasonAborted:
			case st.Ending.Verdict == engines.Win:
				out.Result = c.String()
			case st.Ending.Verdict == engines.Lose:
				out.Result = c.Opponent().String()
			default:
				out.Result = "draw"
			}
		} else {
			out.Over = stored.Status != tournament.GameRunning
			out.Result, out.Reason, out.Cause = string(stored.Result), stored.Reason, stored.Cause
			out.Plies = stored.Plies
			rp := newReplay(stored.Game, stored.Rule, stored.Size)
			for _, m := range stored.Moves {
				rp.apply(m)
				out.Moves = append(out.Moves, moveTextJSON{Color: m.Color.String(), Text: games.Text(stored.Game, m.Move), X: coord(m.Move, m.X), Y: coord(m.Move, m.Y)})
			}
			out.Board = rp.rows()
			out.Turn = games.None.String()
			out.View = boardViewOf(stored.Game, stored.Rule, stored.Size)
			writeJSON(w, http.StatusOK, out)
			return
		}
	}
	out.Turn, out.Plies, out.Version = st.Turn.String(), st.Plies, st.Version
	for _, m := range st.Moves {
		out.Moves = append(out.Moves, moveTextJSON{Color: m.Color.String(), Text: games.Text(g.game, m.Move), X: coord(m.Move, m.X), Y: coord(m.Move, m.Y)})
	}
	out.View = boardViewOf(g.game, "", len(st.Board))
	for _, row := range st.Board {
		out.Board = append(out.Board, rowText(row))
	}
	for _, m := range st.Choices.Legal {
		l := legalJSON{Text: games.Text(g.game, m)}
		if !m.Pass {
			x, y := m.X, m.Y
			l.X, l.Y = &x, &y
		}
		for _, p := range m.Path {
			l.Path = append(l.Path, [2]int{p.X, p.Y})
		}
		out.Legal = append(out.Legal, l)
	}
	for _, p := range st.Choices.Forbidden {
		out.Forbidden = append(out.Forbidden, [2]int{p.X, p.Y})
	}
	writeJSON(w, http.StatusOK, out)
}

// rowText is a row of a board as frames show it: '.', 'x', 'o', and 'X',
// 'O' for a king.
func rowText(row []int8) string {
	b := make([]byte, len(row))
	for i, v := range row {
		b[i] = ".xXoO"[cellIndex(v)]
	}
	return string(b)
}

func cellIndex(v int8) int {
	switch v {
	case 1:
		return 1
	case 2:
		return 2
	case -1:
		return 3
	case -2:
		return 4
	}
	return 0
}
