package web

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/storage"
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
	OK      bool   `json:"ok"`
	Message string `json:"message"`
	// MessageKey and MessageParams are Message as a catalog message
	// (check.msg.<key>) and its facts: a page in another language says
	// the same from them.
	MessageKey    string         `json:"message_key"`
	MessageParams map[string]any `json:"message_params"`
	// Refused is the move refused before a timeout that ended the game
	// (the engine waited after an ERROR), nil otherwise.
	Refused    *tournament.RefusedMove `json:"refused,omitempty"`
	Opponent   string                  `json:"opponent"`
	Result     engineResult            `json:"result"` // the engine's: win, loss or draw; "" if the game did not finish
	Reason     string                  `json:"reason"`
	LegalMoves int                     `json:"legal_moves"`
	Violations games.Violations        `json:"violations"`
	Log        string                  `json:"log"` // the end of the engine's output
	Seconds    float64                 `json:"seconds"`
	Usage      *engines.Usage          `json:"usage,omitempty"`
	Settings   map[string]string       `json:"settings"`
	Version    int                     `json:"version,omitempty"` // the engine's version checked
}

// checkEngine is POST /api/engines/{id}/check: one short game of the engine,
// in the sandbox, against a built-in, and what went wrong in words. The
// admin may check every engine, a participant their own; the answer is
// stored as the engine's last check.
func (s *Server) checkEngine(w http.ResponseWriter, r *http.Request) {
	row, ok := s.ownedEngine(w, r)
	if !ok {
		return
	}
	e := row.Engine
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
	version, err := s.DB.LatestVersion(r.Context(), e.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// A participant asks for one check at a time: the others are refused
	// while it is queued or plays (issue 36, item 8).
	if !callerOf(r).Admin {
		if busy, ok := s.checks.ask(row.OwnerID, e.ID); !ok {
			w.Header().Set("Retry-After", "10")
			s.writeError(w, r, games.Errorf(games.ETooMany, "a check you asked for (engine %d) is still queued or playing: one check at a time per participant; ask again when it is done", busy))
			return
		}
		defer s.checks.asked(row.OwnerID)
	}
	run := &checkRun{version: version}
	// A check under way (the one a submission started) gives way to this one.
	ctx, ok := s.checks.claim(e.ID, run)
	if !ok {
		s.writeError(w, r, &games.Error{Code: games.EUnavailable, Message: "the server is stopping"})
		return
	}
	stop := context.AfterFunc(r.Context(), run.cancel)
	defer stop()
	started := time.Now()
	// Queued with every other check: the owner's turn, then a slot.
	var res *checkJSON
	done, err := s.checks.turn(ctx, row.OwnerID)
	if err == nil {
		res, err = s.preflight(ctx, e)
		done()
	}
	current := s.checks.release(e.ID, run)
	if err != nil && !current {
		err = nil // replaced while it waited: said below
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !current {
		s.writeError(w, r, games.Errorf(games.EConflict, "another check of engine %d replaced this one before it finished: its result will be at GET /api/engines/%d/check", e.ID, e.ID))
		return
	}
	res.Version = version
	{
		b, err := json.Marshal(res)
		if err == nil {
			t := time.Now()
			if err := s.DB.SaveCheck(r.Context(), storage.EngineCheck{EngineID: e.ID, Version: version, Status: "done", Result: b, StartedAt: started, FinishedAt: &t}); err != nil {
				s.log().Warn("store engine check", "engine", e.ID, "err", err)
			}
		}
	}
	s.wakeLeagues()
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
	set := checkSettings(e)
	t0 := time.Now()
	p := s.Service.Play(ctx, tournament.GameSpec{Black: e, White: opp, Settings: set, Seed: uint64(t0.UnixNano()), LogDir: logs})
	res := &checkJSON{Opponent: opp.Name, Reason: p.Outcome.Reason, Violations: p.Violations[0], Seconds: time.Since(t0).Round(10 * time.Millisecond).Seconds(),
		Settings: map[string]string{"move_time": checkMoveTime.String(), "connect": checkConnect.String(), "color": "black"}}
	if set.Rule != "" {
		res.Settings["rule"] = set.Rule
	}
	if res.Violations == nil {
		res.Violations = games.Violations{}
	}
	if p.Usage[0] != (engines.Usage{}) {
		u := p.Usage[0]
		res.Usage = &u
	}
	switch p.Outcome.Winner {
	case games.Black:
		res.Result = engineWon
	case games.White:
		res.Result = engineLost
	default:
		if p.Outcome.Reason != games.ReasonAborted {
			res.Result = engineDrew
		}
	}
	for _, m := range p.Moves {
		if m.Color == games.Black && !m.Auto {
			res.LegalMoves++
		}
	}
	res.Log = logTail(p.Logs[0], checkLogTail)
	says := checkMessage(e, p, res.LegalMoves)
	res.OK, res.Message, res.MessageKey, res.MessageParams, res.Refused = says.ok, says.text, says.key, says.params, p.Refused
	return res, nil
}

// checkSettings is the check game's settings. Its rule is one the engine's
// protocol can play and be told truthfully: the game's default unless the
// protocol cannot tell it (Gomoku's default, seed, forbids double-threes,
// which INFO rule cannot say: a brain is told rule 0 and plays freestyle),
// else the protocol's first.
func checkSettings(e engines.Engine) tournament.Settings {
	set := tournament.Settings{Game: e.Game, MoveTimeMS: checkMoveTime.Milliseconds(), ConnectMS: checkConnect.Milliseconds()}
	p, ok := engines.LookupProtocol(e.Protocol)
	if !ok || len(p.Rules) == 0 {
		return set
	}
	def := set
	if def.Validate() != nil || p.CheckRule(def.Rule) != nil {
		set.Rule = p.Rules[0]
	}
	return set
}

// checkSays is a check's verdict: the sentence, and the same as a catalog
// message's key (check.msg.<key>) and its facts, for a dashboard that says
// it in another language.
type checkSays struct {
	ok     bool
	text   string
	key    string
	params map[string]any
}

// checkMessage says in a sentence how the engine did, naming the problem.
func checkMessage(e engines.Engine, p *tournament.Played, legal int) checkSays {
	o := p.Outcome
	moves := fmt.Sprintf("%d legal move", legal)
	if legal != 1 {
		moves += "s"
	}
	blamed := o.Loser == games.Black
	exit := cmp.Or(p.Exits[0], p.Detail)
	fail := func(key, text string, params map[string]any) checkSays {
		if params == nil {
			params = map[string]any{}
		}
		params["count"] = legal
		if hint := wrongProtocol(e, p.Violations[0]); hint != "" && (key == "timeout" || key == "illegal" || key == "disconnect_first") {
			text += hint
			params["wrong_protocol"] = true
		}
		return checkSays{text: text, key: key, params: params}
	}
	switch {
	case o.Reason == games.ReasonAborted:
		return fail("aborted", fmt.Sprintf("The check game did not finish within %v (%s).", checkWithin, p.Detail), map[string]any{"within": checkWithin.Seconds(), "detail": p.Detail})
	case blamed && o.Reason == games.ReasonNoConnect && noPort(e):
		return fail("no_port", fmt.Sprintf("Your engine was started but never connected (%s). Its command has no {port}, so it was not told which port to dial: add {host} and {port} to the command (or read TAIKAI_HOST and TAIKAI_PORT), speaking %s.", p.Detail, e.Protocol), map[string]any{"detail": p.Detail, "protocol": e.Protocol})
	case blamed && o.Reason == games.ReasonNoConnect:
		return fail("no_connect", fmt.Sprintf("Your engine was started but never connected (%s). Its command must dial the address {host} and {port} stand for (or its fixed port), speaking %s.", p.Detail, e.Protocol), map[string]any{"detail": p.Detail, "protocol": e.Protocol})
	case blamed && legal == 0 && engines.NotFoundInSandboxLog(p.Logs[0]) != "":
		nf := engines.NotFoundInSandboxLog(p.Logs[0])
		return fail("not_found_sandbox", "Your engine could not start: "+nf+".", map[string]any{"detail": nf})
	case blamed && (o.Reason == games.ReasonCrash || o.Reason == games.ReasonNoConnect) && legal == 0 && oneFolder(e) != "":
		// An archive of one folder (myothello/client.py): the command runs
		// in the engine's directory, above the folder.
		f := oneFolder(e)
		return fail("one_folder", fmt.Sprintf("Your engine did not start (%s): every uploaded file is in the folder %s/, and the command runs above it. Upload the folder's contents (zip the files, not the folder), or name the folder in the command (%s/%s).", exit, f, f, programName(e)), map[string]any{"folder": f + "/", "detail": exit, "example": f + "/" + programName(e)})
	case blamed && (o.Reason == games.ReasonCrash || o.Reason == games.ReasonNoConnect) && legal == 0 && missingProgram(e) != "":
		return fail("not_found", fmt.Sprintf("Your engine could not start: the program %q was not found (%s). Upload it with the engine's files, or give its path in the command.", missingProgram(e), exit), map[string]any{"program": missingProgram(e), "detail": exit})
	case blamed && o.Reason == games.ReasonCrash && legal == 0:
		return fail("exited_first", fmt.Sprintf("Your engine exited before its first move (%s): see the end of its output below; is the command right, and are its files there?", exit), map[string]any{"detail": exit})
	case blamed && o.Reason == games.ReasonCrash:
		return fail("exited", fmt.Sprintf("Your engine made %s, then exited (%s).", moves, exit), map[string]any{"detail": exit})
	case blamed && o.Reason == games.ReasonMemory:
		return fail("memory", fmt.Sprintf("Your engine made %s, then went over its memory limit.", moves), nil)
	case blamed && o.Reason == games.ReasonTimeout && p.Refused != nil:
		// Said first: the engine did not wait for nothing, its move was
		// refused and it did not try another.
		return fail("timeout_after_refused", fmt.Sprintf("Your engine's move %s was refused (%s), then it sent no other move and did not answer within %v: after a refusal (ERROR) it must send another, legal move. It made %s.",
			p.Refused.Move, p.Refused.Why, checkMoveTime, moves), map[string]any{"move": p.Refused.Move, "why": p.Refused.Why, "time": checkMoveTime.Seconds()})
	case blamed && o.Reason == games.ReasonTimeout:
		return fail("timeout", fmt.Sprintf("Your engine made %s, then did not answer within %v.", moves, checkMoveTime), map[string]any{"time": checkMoveTime.Seconds()})
	case blamed && o.Reason == games.ReasonIllegal:
		return fail("illegal", fmt.Sprintf("Your engine made %s, then sent what %s refuses (%s).", moves, e.Protocol, violationList(p.Violations[0])), map[string]any{"protocol": e.Protocol, "violations": violationList(p.Violations[0])})
	case blamed && o.Reason == games.ReasonDisconnect && legal == 0:
		return fail("disconnect_first", fmt.Sprintf("Your engine connected, then closed its connection before its first move: does it speak %s? The end of its output is below.", e.Protocol), map[string]any{"protocol": e.Protocol})
	case blamed && o.Reason == games.ReasonDisconnect:
		return fail("disconnect", fmt.Sprintf("Your engine made %s, then closed its connection before the game's end.", moves), nil)
	case blamed:
		return fail("lost", fmt.Sprintf("Your engine made %s, then lost by %s.", moves, o.Reason), map[string]any{"reason": o.Reason})
	}
	res := "a draw"
	switch o.Winner {
	case games.Black:
		res = "a win"
	case games.White:
		res = "a loss"
	}
	return checkSays{ok: true, text: fmt.Sprintf("Your engine connected and played a whole game: %s, %s (%s).", moves, res, o.Reason),
		key: "passed", params: map[string]any{"count": legal, "reason": o.Reason, "result": string(map[games.Color]engineResult{games.Black: engineWon, games.White: engineLost}[o.Winner])}}
}

// oneFolder is the folder holding every uploaded file of an engine whose
// directory has nothing else (an archive of one folder), "" otherwise.
func oneFolder(e engines.Engine) string {
	if e.Dir == "" || e.Builtin != "" {
		return ""
	}
	list, err := os.ReadDir(e.Dir)
	if err != nil || len(list) != 1 || !list[0].IsDir() {
		return ""
	}
	return list[0].Name()
}

// programName is the file the command runs, or its first file argument
// (python3 client.py: client.py).
func programName(e engines.Engine) string {
	for _, a := range e.Command {
		if strings.Contains(a, ".") && !strings.Contains(a, "{") && !strings.HasPrefix(a, "-") {
			return strings.TrimPrefix(a, "./")
		}
	}
	if len(e.Command) > 0 {
		return strings.TrimPrefix(e.Command[0], "./")
	}
	return ""
}

// noPort says whether an engine of a TCP protocol is given no port to dial:
// no {port} in its command and no fixed port.
func noPort(e engines.Engine) bool {
	p, ok := engines.LookupProtocol(e.Protocol)
	if !ok || p.Transport != engines.TCP || e.Port != 0 || e.Builtin != "" {
		return false
	}
	return !slices.ContainsFunc(e.Command, func(a string) bool { return strings.Contains(a, "{port}") })
}

// missingProgram is the engine's program when it cannot be found: a path
// (relative to the engine's directory) that does not exist, or a bare name
// that is not on the server's PATH; "" otherwise.
func missingProgram(e engines.Engine) string {
	if e.Builtin != "" || len(e.Command) == 0 {
		return ""
	}
	prog := e.Command[0]
	if strings.Contains(prog, "{") {
		return ""
	}
	if !strings.Contains(prog, "/") {
		if _, err := exec.LookPath(prog); err != nil {
			return prog
		}
		return ""
	}
	path := prog
	if !filepath.IsAbs(path) && e.Dir != "" {
		path = filepath.Join(e.Dir, path)
	}
	if _, err := os.Stat(path); err != nil {
		return prog
	}
	return ""
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

// maxChecks bounds the pre-flight checks played at once: forty students
// submitting before a deadline queue up rather than load the machine with
// forty games.
const maxChecks = 2

// checkQueue runs the pre-flight checks, those submissions start by
// themselves and those asked for (POST .../check) alike: at most one per
// engine (a newer version's check replaces an older one's), at most one of a
// participant's engines at a time, at most maxChecks at once, each within
// checkWithin, all stopped by Close.
type checkQueue struct {
	mu      sync.Mutex
	running map[int64]*checkRun // by engine id
	slots   chan struct{}
	// owners holds each participant's turn: one check of theirs plays at a
	// time (the admin's engines, owner 0, take only slots).
	owners map[int64]chan struct{}
	// asking is, per participant, the engine of the check they asked for
	// and wait on; a second ask meanwhile is refused.
	asking map[int64]int64
	ctx    context.Context
	stop   context.CancelFunc
	wg     sync.WaitGroup
}

// checkRun is one engine's check under way.
type checkRun struct {
	version int
	cancel  context.CancelFunc
	// replacedBy is the version whose check took this one's place (under
	// the queue's lock), 0 while none did.
	replacedBy int
}

func (q *checkQueue) init() {
	if q.running == nil {
		q.running = map[int64]*checkRun{}
		q.slots = make(chan struct{}, maxChecks)
		q.owners = map[int64]chan struct{}{}
		q.asking = map[int64]int64{}
		q.ctx, q.stop = context.WithCancel(context.Background())
	}
}

// claim makes run the engine's check: a check of the engine under way is
// cancelled for it. It fails when the server stops.
func (q *checkQueue) claim(id int64, run *checkRun) (context.Context, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.init()
	if q.ctx.Err() != nil {
		return nil, false
	}
	if old := q.running[id]; old != nil {
		old.cancel()
		old.replacedBy = run.version
	}
	ctx, cancel := context.WithCancel(q.ctx)
	run.cancel = cancel
	q.running[id] = run
	return ctx, true
}

// ask records that a participant (owner > 0) asked for a check of engine
// id; false, with the engine of the one they already wait on, when there is
// one. asked ends it.
func (q *checkQueue) ask(owner, id int64) (int64, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.init()
	if owner <= 0 {
		return 0, true
	}
	if busy, ok := q.asking[owner]; ok {
		return busy, false
	}
	q.asking[owner] = id
	return 0, true
}

func (q *checkQueue) asked(owner int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.asking, owner)
}

// turn waits until a check of owner's engine may play: the owner's turn
// (a participant's checks play one at a time), then one of the server's
// maxChecks slots. done gives both back.
func (q *checkQueue) turn(ctx context.Context, owner int64) (done func(), err error) {
	q.mu.Lock()
	q.init()
	var mine chan struct{}
	if owner > 0 {
		if mine = q.owners[owner]; mine == nil {
			mine = make(chan struct{}, 1)
			q.owners[owner] = mine
		}
	}
	q.mu.Unlock()
	if mine != nil {
		select {
		case mine <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	select {
	case q.slots <- struct{}{}:
	case <-ctx.Done():
		if mine != nil {
			<-mine
		}
		return nil, ctx.Err()
	}
	return func() {
		<-q.slots
		if mine != nil {
			<-mine
		}
	}, nil
}

// release ends run; it reports whether run was still the engine's current
// check (not replaced by a newer one).
func (q *checkQueue) release(id int64, run *checkRun) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	run.cancel()
	if q.running[id] != run {
		return false
	}
	delete(q.running, id)
	return true
}

// Close stops the checks under way and waits for them; their engines'
// processes are killed and reaped by the runner.
func (s *Server) Close() {
	q := &s.checks
	q.mu.Lock()
	q.init()
	q.stop()
	q.mu.Unlock()
	q.wg.Wait()
}

// startCheck queues the pre-flight check of an engine's version in the
// background; its state is stored at once (queued), then as it goes. owner
// is the engine's participant (0: the admin's).
func (s *Server) startCheck(e engines.Engine, owner int64, version int) {
	run := &checkRun{version: version}
	ctx, ok := s.checks.claim(e.ID, run)
	if !ok {
		return
	}
	q := &s.checks
	started := time.Now()
	save := func(status string, res *checkJSON) {
		c := storage.EngineCheck{EngineID: e.ID, Version: version, Status: status, StartedAt: started}
		if res != nil {
			b, err := json.Marshal(res)
			if err != nil {
				return
			}
			t := time.Now()
			c.Result, c.FinishedAt = b, &t
		}
		// Stored even as the server stops: a fresh context, bounded.
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.DB.SaveCheck(sctx, c); err != nil {
			s.log().Warn("store engine check", "engine", e.ID, "err", err)
		}
	}
	save("queued", nil)
	q.wg.Add(1)
	go func() {
		defer q.wg.Done()
		var res *checkJSON
		if done, err := q.turn(ctx, owner); err == nil {
			if ctx.Err() == nil {
				save("running", nil)
				res = s.checkOnce(ctx, e)
			}
			done()
		}
		if !q.release(e.ID, run) {
			// Another check took over: of this version, it stores its own
			// answer; of a newer version, this version's check stays
			// unfinished, and says why (each version keeps its check).
			if run.replacedBy != version {
				save("done", &checkJSON{Message: fmt.Sprintf("The check was stopped before it finished: version %d replaced this version.", run.replacedBy),
					MessageKey: "replaced", MessageParams: map[string]any{"version": run.replacedBy}, Violations: games.Violations{}, Settings: map[string]string{}, Version: version})
			}
			return
		}
		if res == nil || ctx.Err() != nil && res.Reason == games.ReasonAborted {
			res = &checkJSON{Message: "The check was stopped before it finished (the server stopped).", Violations: games.Violations{}, Settings: map[string]string{}}
		}
		res.Version = version
		save("done", res)
		s.wakeLeagues() // a league of the engines whose check passed takes it
	}()
}

// wakeLeagues tells the running leagues to look at their entrants again.
func (s *Server) wakeLeagues() {
	if s.Service != nil {
		s.Service.Wake()
	}
}

// checkOnce plays the check, or says why it cannot be played.
func (s *Server) checkOnce(ctx context.Context, e engines.Engine) *checkJSON {
	unplayable := func(msg string) *checkJSON {
		return &checkJSON{Message: msg, Violations: games.Violations{}, Settings: map[string]string{}}
	}
	if s.Service == nil || s.Service.Runner == nil {
		return unplayable("The check could not run: this server cannot play games.")
	}
	if err := s.allow(e); err != nil {
		return unplayable(fmt.Sprintf("The check could not run: %v.", err))
	}
	res, err := s.preflight(ctx, e)
	if err != nil {
		return unplayable(fmt.Sprintf("The check could not run: %s.", apiError(err).Message))
	}
	return res
}

// getCheck is GET /api/engines/{id}/check: the engine's last check, stored,
// with its state (queued, running or done) and, when done, its answer.
func (s *Server) getCheck(w http.ResponseWriter, r *http.Request) {
	row, ok := s.readableEngine(w, r)
	if !ok {
		return
	}
	c, err := s.DB.Check(r.Context(), row.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}
