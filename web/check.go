package web

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/tournament"
)

// The pre-flight check's game: the engine plays black against a built-in of
// its game, with checkMoveTime a move and checkConnect to connect (unless it
// has a time of its own), within checkWithin in all.
const (
	checkMoveTime = 2 * time.Second
	checkConnect  = 10 * time.Second
	checkWithin   = 3 * time.Minute
	checkLogTail  = 4 << 10
)

// checkJSON is the answer of POST /api/engines/{id}/check.
type checkJSON struct {
	OK         bool              `json:"ok"`
	Message    string            `json:"message"`
	Opponent   string            `json:"opponent"`
	Result     string            `json:"result"` // the engine's: win, loss or draw; "" if the game did not finish
	Reason     string            `json:"reason"`
	LegalMoves int               `json:"legal_moves"`
	Violations games.Violations  `json:"violations"`
	Log        string            `json:"log"` // the end of the engine's output
	Seconds    float64           `json:"seconds"`
	Usage      *engines.Usage    `json:"usage,omitempty"`
	Settings   map[string]string `json:"settings"`
}

// checkEngine is POST /api/engines/{id}/check: one short game of the engine,
// in the sandbox, against a built-in, and what went wrong in words.
func (s *Server) checkEngine(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	e, err := s.DB.Engine(r.Context(), id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if s.Service == nil || s.Service.Runner == nil {
		s.writeError(w, r, &games.Error{Code: games.EUnavailable, Message: "this server cannot play games"})
		return
	}
	if s.Allow != nil {
		if err := s.Allow(e); err != nil {
			s.writeError(w, r, &games.Error{Code: games.EUnavailable, Message: err.Error()})
			return
		}
	}
	res, err := s.preflight(r.Context(), e)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// opponentFor is the first built-in of the engine's game.
func opponentFor(game string) (engines.Engine, bool) {
	for _, b := range engines.Builtins() {
		if b.Game == game {
			return engines.Engine{Name: b.Name, Game: b.Game, Protocol: b.Protocols[0], Builtin: b.Name}, true
		}
	}
	return engines.Engine{}, false
}

func (s *Server) preflight(ctx context.Context, e engines.Engine) (*checkJSON, error) {
	opp, ok := opponentFor(e.Game)
	if !ok {
		return nil, &games.Error{Code: games.EUnavailable, Message: "no built-in engine plays " + e.Game}
	}
	logs, err := os.MkdirTemp("", "taikai-check-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(logs)
	ctx, cancel := context.WithTimeout(ctx, checkWithin)
	defer cancel()
	runner := *s.Service.Runner
	set := tournament.Settings{Game: e.Game, MoveTimeMS: checkMoveTime.Milliseconds(), ConnectMS: checkConnect.Milliseconds()}
	t0 := time.Now()
	p := runner.Play(ctx, tournament.GameSpec{Black: e, White: opp, Settings: set, Seed: uint64(t0.UnixNano()), LogDir: logs})
	res := &checkJSON{Opponent: opp.Name, Reason: p.Outcome.Reason, Violations: p.Violations[0], Seconds: time.Since(t0).Round(10 * time.Millisecond).Seconds(),
		Settings: map[string]string{"move_time": checkMoveTime.String(), "connect": checkConnect.String(), "color": "black"}}
	if res.Violations == nil {
		res.Violations = games.Violations{}
	}
	if p.Usage[0] != (engines.Usage{}) {
		u := p.Usage[0]
		res.Usage = &u
	}
	switch p.Outcome.Winner {
	case games.Black:
		res.Result = "win"
	case games.White:
		res.Result = "loss"
	default:
		if p.Outcome.Reason != games.ReasonAborted {
			res.Result = "draw"
		}
	}
	for _, m := range p.Moves {
		if m.Color == games.Black && !m.Auto {
			res.LegalMoves++
		}
	}
	res.Log = logTail(p.Logs[0], checkLogTail)
	res.OK, res.Message = checkMessage(e, p, res.LegalMoves)
	return res, nil
}

// checkMessage says in a sentence how the engine did, naming the problem.
func checkMessage(e engines.Engine, p *tournament.Played, legal int) (bool, string) {
	o := p.Outcome
	moves := fmt.Sprintf("%d legal move", legal)
	if legal != 1 {
		moves += "s"
	}
	blamed := o.Loser == games.Black
	switch {
	case o.Reason == games.ReasonAborted:
		return false, fmt.Sprintf("The check game did not finish within %v (%s).", checkWithin, p.Detail)
	case blamed && o.Reason == games.ReasonNoConnect:
		return false, fmt.Sprintf("Your engine was started but never connected (%s). Its command must dial the address {host} and {port} stand for (or its fixed port), speaking %s.", p.Detail, e.Protocol)
	case blamed && o.Reason == games.ReasonCrash && legal == 0:
		return false, fmt.Sprintf("Your engine exited before its first move (%s): see the end of its output below; is the command right, and are its files there?", cmp.Or(p.Exits[0], p.Detail))
	case blamed && o.Reason == games.ReasonCrash:
		return false, fmt.Sprintf("Your engine made %s, then exited (%s).", moves, cmp.Or(p.Exits[0], p.Detail))
	case blamed && o.Reason == games.ReasonMemory:
		return false, fmt.Sprintf("Your engine made %s, then went over its memory limit.", moves)
	case blamed && o.Reason == games.ReasonTimeout:
		msg := fmt.Sprintf("Your engine made %s, then did not answer within %v.", moves, checkMoveTime)
		return false, msg + wrongProtocol(e, p.Violations[0])
	case blamed && o.Reason == games.ReasonIllegal:
		return false, fmt.Sprintf("Your engine made %s, then sent what %s refuses (%s).", moves, e.Protocol, violationList(p.Violations[0])) + wrongProtocol(e, p.Violations[0])
	case blamed && o.Reason == games.ReasonDisconnect && legal == 0:
		return false, fmt.Sprintf("Your engine connected, then closed its connection before its first move: does it speak %s? The end of its output is below.", e.Protocol) + wrongProtocol(e, p.Violations[0])
	case blamed && o.Reason == games.ReasonDisconnect:
		return false, fmt.Sprintf("Your engine made %s, then closed its connection before the game's end.", moves)
	case blamed:
		return false, fmt.Sprintf("Your engine made %s, then lost by %s.", moves, o.Reason)
	}
	res := "a draw"
	switch o.Winner {
	case games.Black:
		res = "a win"
	case games.White:
		res = "a loss"
	}
	return true, fmt.Sprintf("Your engine connected and played a whole game: %s, %s (%s).", moves, res, o.Reason)
}

// wrongProtocol is a hint when the engine's lines did not read as its
// protocol at all.
func wrongProtocol(e engines.Engine, v games.Violations) string {
	if v["malformed"] > 0 || v["unknown_command"] > 0 {
		return fmt.Sprintf(" Its lines did not read as %s: is it a client of another protocol?", e.Protocol)
	}
	return ""
}

// violationList is "off_board ×3, occupied ×1", by name.
func violationList(v games.Violations) string {
	var names []string
	for k := range v {
		names = append(names, k)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s ×%d", k, v[k])
	}
	return strings.Join(parts, ", ")
}

// logTail is the last n bytes of a file, from a line's start.
func logTail(path string, n int64) string {
	if path == "" {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(0, st.Size()-n)
	b, err := io.ReadAll(io.NewSectionReader(f, off, st.Size()-off))
	if err != nil {
		return ""
	}
	if off > 0 {
		if i := strings.IndexByte(string(b), '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(b)
}
