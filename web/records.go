package web

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/tournament"
)

// Record files: GET /api/games/{id}.{ext} (a game in its game's format) and
// GET /api/tournaments/{id}/{file}: games.{ext} (every finished game),
// games.csv and standings.csv.

// recordFormat finds the game's format for ext, or an error that names the
// ones it has.
func recordFormat(game, ext string) (games.RecordFormat, error) {
	if f, ok := games.RecordFormatOf(game, ext); ok {
		return f, nil
	}
	var have []string
	for _, x := range games.RecordExts(game) {
		have = append(have, "."+x)
	}
	if len(have) == 0 {
		return games.RecordFormat{}, &games.Error{Code: games.ENotFound, Field: "format", Message: fmt.Sprintf("%s games have no record format to export to", game)}
	}
	return games.RecordFormat{}, &games.Error{Code: games.ENotFound, Field: "format",
		Message: fmt.Sprintf("%s games export as %s, not .%s", game, strings.Join(have, ", "), ext)}
}

func attachment(w http.ResponseWriter, contentType, name string) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
}

// getGameFile serves /api/games/{id}.{ext}.
func (s *Server) getGameFile(w http.ResponseWriter, r *http.Request, idText, ext string) {
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil || id <= 0 {
		s.writeError(w, r, &games.Error{Code: games.ENotFound, Field: "id", Message: fmt.Sprintf("id %q is not an id", idText)})
		return
	}
	g, err := s.DB.Game(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	f, err := recordFormat(g.Game, ext)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if g.Status != tournament.GameFinished {
		s.writeError(w, r, &games.Error{Code: games.EConflict, Field: "id", Message: fmt.Sprintf("game %d is %s: only a finished game has a record", id, g.Status)})
		return
	}
	t, err := s.DB.Tournament(r.Context(), g.TournamentID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.sendFile(w, r, f.ContentType, fmt.Sprintf("game-%d.%s", id, f.Ext), func(buf *bytes.Buffer) error {
		return writeRecord(f, buf, t, g)
	})
}

// writeRecord appends a game's record; a game the format cannot hold (a
// pass in PSQ) is a conflict that names it.
func writeRecord(f games.RecordFormat, buf *bytes.Buffer, t *tournament.Tournament, g *tournament.Game) error {
	if err := f.Write(buf, []games.RecordGame{tournament.Record(t, g)}); err != nil {
		return &games.Error{Code: games.EConflict, Field: "format", Message: fmt.Sprintf("game %d: %v", g.ID, err)}
	}
	return nil
}

// sendFile sends what fill writes as an attachment. It is built in memory
// first, so that a failure is a clean error response, never a cut file.
func (s *Server) sendFile(w http.ResponseWriter, r *http.Request, contentType, name string, fill func(*bytes.Buffer) error) {
	var buf bytes.Buffer
	if err := fill(&buf); err != nil {
		s.writeError(w, r, err)
		return
	}
	attachment(w, contentType, name)
	_, _ = w.Write(buf.Bytes())
}

// getTournamentFile serves /api/tournaments/{id}/{file}.
func (s *Server) getTournamentFile(w http.ResponseWriter, r *http.Request) {
	file := chi.URLParam(r, "file")
	base, ext, ok := strings.Cut(file, ".")
	if !ok || (base != "games" && base != "standings") || (base == "standings" && ext != "csv") {
		s.writeError(w, r, &games.Error{Code: games.ENotFound, Field: "file",
			Message: fmt.Sprintf("no %q here: want games.csv, standings.csv or games.<the game's record format>", file)})
		return
	}
	t, ok := s.tournament(w, r)
	if !ok {
		return
	}
	name := fmt.Sprintf("tournament-%d-%s", t.ID, file)
	switch {
	case base == "standings":
		s.sendFile(w, r, "text/csv; charset=utf-8", name, func(buf *bytes.Buffer) error {
			rows, _, err := s.standings(r, t)
			if err != nil {
				return err
			}
			owners, err := s.owners(r.Context())
			if err != nil {
				return err
			}
			return tournament.WriteStandingsCSV(buf, rows, owners)
		})
	case ext == "csv":
		s.sendFile(w, r, "text/csv; charset=utf-8", name, func(buf *bytes.Buffer) error {
			var list []*tournament.Game
			err := s.DB.EachFinishedGame(r.Context(), t.ID, func(g *tournament.Game) error {
				g.Moves = nil // the CSV has no moves
				list = append(list, g)
				return nil
			})
			if err != nil {
				return err
			}
			owners, err := s.owners(r.Context())
			if err != nil {
				return err
			}
			var sched tournament.Schedule
			if t.Kind == tournament.KindRoundRobin || t.Kind == tournament.KindGauntlet {
				sched = t.Schedule()
			}
			return tournament.WriteGamesCSV(buf, list, sched, owners)
		})
	default:
		f, err := recordFormat(t.Settings.Game, ext)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.sendFile(w, r, f.ContentType, name, func(buf *bytes.Buffer) error {
			return s.DB.EachFinishedGame(r.Context(), t.ID, func(g *tournament.Game) error {
				return writeRecord(f, buf, t, g)
			})
		})
	}
}

// owners is each participant's engine's owner, by engine id, for exports.
func (s *Server) owners(ctx context.Context) (map[int64]tournament.Owner, error) {
	ps, err := s.DB.Participants(ctx)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]tournament.Owner, len(ps))
	for _, p := range ps {
		byID[p.ID] = tournament.Owner{Name: p.Name, Number: p.Number}
	}
	rows, err := s.DB.EnginesOwned(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]tournament.Owner, len(rows))
	for _, e := range rows {
		out[e.ID] = byID[e.OwnerID]
	}
	return out, nil
}
