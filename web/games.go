package web

// The games resource: /api/games, running games, one game and its log.

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/tournament"
)

func (s *Server) listGames(w http.ResponseWriter, r *http.Request) {
	t, ok := s.tournament(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	f := storage.GameFilter{Status: q.Get("status"), Result: games.Result(q.Get("result")), Reason: q.Get("reason")}
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
	switch v := q.Get("order"); v {
	case "", "schedule":
	case "newest":
		f.Newest = true
	default:
		s.writeError(w, r, errInvalid("order", fmt.Sprintf("order %q: want schedule or newest", v)))
		return
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
	// and knockout pair as they go, and a league before each game: their
	// games are not known in advance).
	// (Newest first lists the started games only.)
	if (f.Status == "" || f.Status == tournament.GameScheduled) && f.Result == "" && f.Reason == "" && len(out) < f.Limit && !f.Newest &&
		t.Status != tournament.StatusCancelled && !t.Dynamic() && t.Kind != tournament.KindLeague {
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
