package web

// The view model: the JSON shapes of engines, tournaments and games that
// the API answers and that live.go and pages.go read back.

import (
	"fmt"
	"math"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/tournament"
)

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

// checkSummaryJSON is an engine's last check in the engine list, and each
// version's in its versions.
type checkSummaryJSON struct {
	Status  string `json:"status"` // queued, running, done
	Version int    `json:"version"`
	OK      bool   `json:"ok"`
	Message string `json:"message,omitempty"`
	// FinishedAt is when it was done (null while queued or running).
	FinishedAt *time.Time `json:"finished_at"`
	// Result, Reason and LegalMoves are the check game's (as in the check's
	// answer), for a dashboard that says the message in another language.
	Result     engineResult `json:"result,omitempty"`
	Reason     string       `json:"reason,omitempty"`
	LegalMoves int          `json:"legal_moves,omitempty"`
	// MessageKey and MessageParams: Message as a catalog message and its
	// facts (as in the check's answer).
	MessageKey    string         `json:"message_key,omitempty"`
	MessageParams map[string]any `json:"message_params,omitempty"`
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

type playerJSON struct {
	EngineID int64  `json:"engine_id"`
	Name     string `json:"name"`
	Nick     string `json:"nick,omitempty"`
	WireName string `json:"wire_name,omitempty"`
	Human    bool   `json:"human,omitempty"` // a person played this side
	// Version: the engine's version this side played (a game's sides);
	// absent when not known and in lists of engines.
	Version int `json:"version,omitempty"`
}

type tournamentJSON struct {
	ID            int64  `json:"id"`
	Name          string `json:"name"`
	Game          string `json:"game"`
	Rule          string `json:"rule,omitempty"`
	Size          int    `json:"size"`
	Status        string `json:"status"`
	TotalGames    int64  `json:"-"`
	Total         *int64 `json:"total_games"` // null for a league: it has no end
	FinishedGames int64  `json:"finished_games"`
	// Records are the record formats its games export to ("ggf"): GET
	// .../games.<ext>.
	Records      []string `json:"records,omitempty"`
	RunningGames int      `json:"running_games"`
	GamesPerPair int      `json:"games_per_pair"`
	Concurrency  int      `json:"concurrency"`
	Format       string   `json:"format"`           // round_robin, gauntlet, swiss, knockout, or match
	Rounds       int      `json:"rounds,omitempty"` // swiss
	// League: the games a new version plays first, and whether its
	// entrants are the engines whose check passed ("checked").
	PlacementGames int                 `json:"placement_games,omitempty"`
	Entrants       string              `json:"entrants,omitempty"`
	MaxExtra       int                 `json:"max_extra,omitempty"` // knockout
	Engines        []playerJSON        `json:"engines"`
	Settings       tournament.Settings `json:"settings"`
	CreatedAt      *string             `json:"created_at"`
	StartedAt      *string             `json:"started_at"`
	FinishedAt     *string             `json:"finished_at"`
	ETASeconds     *float64            `json:"eta_seconds"`
}

func (s *Server) tournamentJSON(t *tournament.Tournament, names map[int64]string) tournamentJSON {
	j := tournamentJSON{
		ID: t.ID, Name: t.Name, Game: t.Settings.Game, Rule: t.Settings.Rule, Size: t.Settings.Size, Status: t.Status,
		TotalGames: t.TotalGames, FinishedGames: t.FinishedGames, GamesPerPair: t.GamesPerPair, Concurrency: t.Concurrency,
		Format: t.Kind, Rounds: t.Rounds, MaxExtra: t.MaxExtra,
		Settings: t.Settings, Engines: []playerJSON{},
		CreatedAt: timeOrNil(&t.CreatedAt), StartedAt: timeOrNil(t.StartedAt), FinishedAt: timeOrNil(t.FinishedAt),
		Total: totalGames(t), PlacementGames: t.PlacementGames,
	}
	if t.EntrantsChecked {
		j.Entrants = "checked"
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

// totalGames is the games a tournament expects; nil for a league (none:
// it never finishes).
func totalGames(t *tournament.Tournament) *int64 {
	if t.Kind == tournament.KindLeague {
		return nil
	}
	n := t.TotalGames
	return &n
}

// eta estimates the seconds a running tournament has left from its rate so
// far; nil before its first game ends.
func eta(t *tournament.Tournament) *float64 {
	if t.Kind == tournament.KindLeague || t.Status != tournament.StatusRunning || t.StartedAt == nil || t.FinishedGames == 0 {
		return nil
	}
	per := time.Since(*t.StartedAt).Seconds() / float64(t.FinishedGames)
	e := math.Round(per * float64(t.TotalGames-t.FinishedGames))
	return &e
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

// engineResult is a finished game's result for one engine, as its record
// (GET /api/engines/{id}/games) and the pre-flight check answer it.
type engineResult string

// Results for one engine.
const (
	engineWon  engineResult = "win"
	engineLost engineResult = "loss"
	engineDrew engineResult = "draw"
)

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
	Opening   *tournament.SuiteLine `json:"opening,omitempty"`
	StartedAt *string               `json:"started_at"`
	EndedAt   *string               `json:"ended_at"`
	View      *boardView            `json:"view,omitempty"` // how the dashboard draws it (live messages and pages)
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
		Result: strOrNil(string(g.Result)), Reason: strOrNil(g.Reason), Cause: g.Cause, Plies: g.Plies, Detail: g.Detail, Refused: g.Refused,
		StartedAt: timeOrNil(g.StartedAt), EndedAt: timeOrNil(g.EndedAt), Pair: g.Pair, Opening: g.Opening, Slot: g.Slot,
		Worker: g.Worker, Attempt: g.Attempt,
	}
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
