package tournament

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/taikai-dev/taikai/games"
)

// Record is a stored game of t as a record format writes it.
func Record(t *Tournament, g *Game) games.RecordGame {
	r := games.RecordGame{
		Event: t.Name, Round: g.Slot, Black: g.Black.Name, White: g.White.Name,
		Rule: g.Rule, Size: g.Size, Moves: g.Moves, Reason: g.Reason, Stones: g.Stones,
		MoveTimeMS: t.Settings.MoveTimeMS, TotalTimeMS: t.Settings.TotalTimeMS,
	}
	if r.Round == "" {
		r.Round = strconv.FormatInt(g.Index+1, 10)
	}
	switch g.Result {
	case games.BlackWon:
		r.Winner = games.Black
	case games.WhiteWon:
		r.Winner = games.White
	}
	if g.StartedAt != nil {
		r.Date = *g.StartedAt
	}
	return r
}

// RecordGame is a played game as a record format writes it; event names
// what it was played in.
func (p *Played) RecordGame(event string, number int) games.RecordGame {
	return games.RecordGame{
		Event: event, Round: strconv.Itoa(number), Black: p.Spec.Black.Name, White: p.Spec.White.Name,
		Rule: p.Spec.Settings.Rule, Size: p.Spec.Settings.Size, Moves: p.Moves,
		Winner: p.Outcome.Winner, Reason: p.Outcome.Reason, Stones: p.Stones, Date: p.StartedAt,
		MoveTimeMS: p.Spec.Settings.MoveTimeMS, TotalTimeMS: p.Spec.Settings.TotalTimeMS,
	}
}

// GamesCSVHeader are the columns of WriteGamesCSV; the owners' columns
// come last (a class's export: who submitted each engine, with the
// student number the roster gave).
var GamesCSVHeader = []string{"id", "round", "pair", "black", "white", "result", "reason", "cause", "plies",
	"black_pieces", "white_pieces", "opening", "started_at", "ended_at", "black_owner", "black_number", "white_owner", "white_number"}

// Owner is who submitted an engine: a participant's name and student
// number; the zero Owner for the admin's engines.
type Owner struct {
	Name, Number string
}

// WriteGamesCSV writes one row per game (RFC 4180, a header row first);
// owners gives each engine's owner by engine id (nil: none known). A game's
// round is its slot (swiss, knockout), else its round in sched (from 1), or
// with no schedule its place in the list of games.
func WriteGamesCSV(w io.Writer, gs []*Game, sched Schedule, owners map[int64]Owner) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(GamesCSVHeader)
	for _, g := range gs {
		round := g.Slot
		switch {
		case round != "":
		case sched != nil && g.Index >= 0 && g.Index < sched.Total():
			round = strconv.FormatInt(sched.Game(g.Index).Round+1, 10)
		default:
			round = strconv.FormatInt(g.Index+1, 10)
		}
		opening := ""
		if g.Opening != nil {
			opening = g.Opening.Text
		}
		pair := ""
		if g.Pair != 0 {
			pair = strconv.FormatInt(g.Pair, 10)
		}
		_ = cw.Write([]string{strconv.FormatInt(g.ID, 10), round, pair, csvText(g.Black.Name), csvText(g.White.Name), string(g.Result), g.Reason, g.Cause,
			strconv.Itoa(g.Plies), strconv.Itoa(g.Stones[0]), strconv.Itoa(g.Stones[1]), csvText(opening), csvTime(g.StartedAt), csvTime(g.EndedAt),
			csvText(owners[g.Black.EngineID].Name), csvText(owners[g.Black.EngineID].Number), csvText(owners[g.White.EngineID].Name), csvText(owners[g.White.EngineID].Number)})
	}
	cw.Flush()
	return cw.Error()
}

// StandingsCSVHeader are the columns of WriteStandingsCSV.
var StandingsCSVHeader = []string{"rank", "engine", "games", "wins", "draws", "losses", "points", "score_pct", "elo", "elo_error", "buchholz", "owner", "number"}

// WriteStandingsCSV writes the table in its order, one row per engine, with
// its owner from owners (by engine id; nil: none known).
func WriteStandingsCSV(w io.Writer, rows []Standing, owners map[int64]Owner) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(StandingsCSVHeader)
	for i, s := range rows {
		_ = cw.Write([]string{strconv.Itoa(i + 1), csvText(s.Name), strconv.FormatInt(s.Games, 10), strconv.FormatInt(s.Wins, 10),
			strconv.FormatInt(s.Draws, 10), strconv.FormatInt(s.Losses, 10), strconv.FormatFloat(s.Points, 'f', -1, 64),
			strconv.FormatFloat(s.ScorePct, 'f', 1, 64), strconv.FormatFloat(s.Elo, 'f', 1, 64), strconv.FormatFloat(s.EloError, 'f', 1, 64),
			strconv.FormatFloat(s.Buchholz, 'f', -1, 64), csvText(owners[s.EngineID].Name), csvText(owners[s.EngineID].Number)})
	}
	cw.Flush()
	return cw.Error()
}

// csvText keeps a name a spreadsheet would read as a formula ("=...",
// "+...", "-...", "@...") a text: it gets a leading apostrophe.
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func csvTime(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
