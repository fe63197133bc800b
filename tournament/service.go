package tournament

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/openings"
	"github.com/taikai-dev/taikai/tournament/stats"
)

// Event types published to live viewers.
const (
	EventGameStarted = "game_started"
	EventMove        = "move"
	EventGameEnded   = "game_ended"
	EventTournament  = "tournament" // status or progress changed
)

// Event is something live viewers may want to see.
type Event struct {
	Type         string
	TournamentID int64
	GameID       int64
	Game         *Game       // game_started, game_ended
	Played       *Played     // game_ended
	Tick         *Tick       // move
	Tournament   *Tournament // tournament
	// Again: a game_started for a game that was already started, played
	// again from the beginning (its worker was lost).
	Again bool
	// SPRT: a tournament its SPRT stopped, the test's decision.
	SPRT *SPRTDecision
}

// SPRTDecision is what an SPRT decided, and the log-likelihood ratio that
// crossed its bound.
type SPRTDecision struct {
	Result stats.Decision // AcceptH0 or AcceptH1
	LLR    float64
}

// Dispatcher plays games elsewhere (taikai worker processes). Play returns the
// game as played, or aborted when ctx ends first; the Service then stores it
// and tells stored whether that worked, and only then may the worker let the
// game go.
type Dispatcher interface {
	Play(ctx context.Context, spec GameSpec) (p *Played, stored func(ok bool))
}

// Sink receives events. Publish must not block: it is called from the referee.
type Sink interface {
	Publish(Event)
}

// Service runs tournaments: it schedules their games, runs up to each
// tournament's concurrency at once, stores every result, and publishes events.
type Service struct {
	Store   Store
	Runner  *Runner
	Sink    Sink
	DataDir string // engine logs go under DataDir/logs/<tournament>/
	// Logs, if set, is the one directory every game's engine logs go in
	// (taikai match --logs), instead of DataDir's.
	Logs string
	Log  *slog.Logger
	// Dispatch, if set, plays the games on workers instead of Runner.
	Dispatch Dispatcher

	mu     sync.Mutex
	runs   map[int64]*run
	wg     sync.WaitGroup
	closed bool
	store  storeHealth
}

// storeHealth is whether the store takes writes: a full disk or a database
// the server cannot write to stops every tournament until it works again.
type storeHealth struct {
	mu     sync.Mutex
	err    error     // the last failure, nil once a write worked again
	since  time.Time // when it started failing
	logged time.Time // when it was last logged
}

// storeLogEvery is how often a storage failure that goes on is logged again.
const storeLogEvery = time.Minute

// StorageError is the store's failure while tournaments wait for it (a full
// disk), nil when it works.
func (s *Service) StorageError() error {
	s.store.mu.Lock()
	defer s.store.mu.Unlock()
	return s.store.err
}

// storeFailed records a write that failed for a reason that may pass (see
// transient), and logs it: at once the first time, then every storeLogEvery.
func (s *Service) storeFailed(what string, err error, args ...any) {
	h := &s.store
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	if h.err == nil {
		h.since, h.logged = now, time.Time{}
	}
	h.err = err
	if now.Sub(h.logged) < storeLogEvery {
		return
	}
	h.logged = now
	s.log().Error(what+": the database cannot store it; tournaments wait and go on by themselves once it can",
		append(args, "err", err, "cause", errors.Unwrap(err), "failing_for", now.Sub(h.since).Round(time.Second))...)
}

// storeOK records a write that worked.
func (s *Service) storeOK() {
	h := &s.store
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		s.log().Info("the database stores again: tournaments go on", "failed_for", time.Since(h.since).Round(time.Second))
		h.err = nil
	}
}

// transient reports whether a store error may pass without a restart: a full
// disk, a database locked or unwritable for now.
func transient(err error) bool {
	c := games.ErrorCode(err)
	return c == games.ENoSpace || c == games.EUnavailable
}

func (s *Service) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.New(slog.DiscardHandler)
}

func (s *Service) publish(ev Event) {
	if s.Sink != nil {
		s.Sink.Publish(ev)
	}
}

// Resume continues every running tournament: after a restart, the games that
// were running have been marked aborted by the store and are played again.
func (s *Service) Resume(ctx context.Context) error {
	list, err := s.Store.TournamentsWithStatus(ctx, StatusRunning)
	if err != nil {
		return fmt.Errorf("list running tournaments: %w", err)
	}
	for _, t := range list {
		if t.Kind == KindPlay {
			// Its person's seat went with the server that stopped: the game
			// cannot go on.
			if err := s.Store.SetTournamentStatus(ctx, t.ID, StatusCancelled); err != nil {
				s.log().Error("play game not cancelled", "tournament", t.ID, "err", err)
			}
			continue
		}
		if err := s.allowed(ctx, t); err != nil {
			s.log().Error("tournament not resumed", "tournament", t.ID, "err", err)
			continue
		}
		s.launch(t)
	}
	return nil
}

// allowed checks that the launcher may start every engine of a tournament
// (without a sandbox, only built-ins run).
func (s *Service) allowed(ctx context.Context, t *Tournament) error {
	if s.Runner == nil || s.Runner.Launcher == nil {
		return nil
	}
	for _, id := range t.Engines {
		e, err := s.Store.Engine(ctx, id)
		if err != nil {
			return err
		}
		if e.Protocol == engines.Human {
			continue // a person's seat runs nothing
		}
		if err := s.Runner.Launcher.Allowed(e); err != nil {
			return err
		}
	}
	return nil
}

// Start starts a pending tournament (or resumes a running one).
func (s *Service) Start(ctx context.Context, id int64) (*Tournament, error) {
	pending, err := s.Store.Tournament(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.allowed(ctx, pending); err != nil {
		return nil, err
	}
	if err := s.Store.SetTournamentStatus(ctx, id, StatusRunning); err != nil {
		return nil, err
	}
	t, err := s.Store.Tournament(ctx, id)
	if err != nil {
		return nil, err
	}
	s.launch(t)
	s.Wake() // a paused league whose scheduler waits
	s.publish(Event{Type: EventTournament, TournamentID: id, Tournament: t})
	return t, nil
}

// Run starts a pending tournament and waits until it is over: every game
// played, or its SPRT decided. When ctx ends first, its running games are
// aborted, and Run returns once they are stored. It returns the tournament
// as stored at its end.
func (s *Service) Run(ctx context.Context, id int64) (*Tournament, error) {
	if _, err := s.Start(ctx, id); err != nil {
		return nil, err
	}
	s.mu.Lock()
	rn := s.runs[id]
	s.mu.Unlock()
	if rn != nil {
		select {
		case <-rn.done:
		case <-ctx.Done():
			rn.cancel()
			<-rn.done
		}
	}
	return s.Store.Tournament(context.WithoutCancel(ctx), id)
}

// Cancel stops a tournament: its running games are aborted and not scored.
func (s *Service) Cancel(ctx context.Context, id int64) (*Tournament, error) {
	if err := s.Store.SetTournamentStatus(ctx, id, StatusCancelled); err != nil {
		return nil, err
	}
	s.mu.Lock()
	rn := s.runs[id]
	s.mu.Unlock()
	if rn != nil {
		// Its running games are aborted and stored as such: wait for that,
		// so that the answer is the tournament as it now is (no game
		// running), not as it was a moment before.
		rn.cancel()
		select {
		case <-rn.done:
		case <-ctx.Done():
		}
	}
	t, err := s.Store.Tournament(ctx, id)
	if err != nil {
		return nil, err
	}
	s.publish(Event{Type: EventTournament, TournamentID: id, Tournament: t})
	return t, nil
}

// Close aborts every running game (they will be played again after a restart)
// and waits until every game has been stored and every engine stopped.
func (s *Service) Close() {
	s.mu.Lock()
	s.closed = true
	for _, rn := range s.runs {
		rn.cancel()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *Service) launch(t *Tournament) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.runs[t.ID] != nil {
		return
	}
	if s.runs == nil {
		s.runs = make(map[int64]*run)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rn := &run{cancel: cancel, done: make(chan struct{}), wake: make(chan struct{}, 1)}
	s.runs[t.ID] = rn
	s.wg.Go(func() {
		defer func() {
			s.mu.Lock()
			delete(s.runs, t.ID)
			s.mu.Unlock()
			cancel()
			close(rn.done)
		}()
		s.schedule(ctx, t, rn.wake)
	})
}

// Wake tells the running leagues to look at their state again at once: a
// version was added, an engine withdrawn, a check stored, a league resumed.
// (A league left alone looks again every few seconds.)
func (s *Service) Wake() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, rn := range s.runs {
		select {
		case rn.wake <- struct{}{}:
		default:
		}
	}
}

// Pause pauses a running league: it starts no game until it is started
// again; its running games finish and count.
func (s *Service) Pause(ctx context.Context, id int64) (*Tournament, error) {
	t, err := s.Store.Tournament(ctx, id)
	if err != nil {
		return nil, err
	}
	if t.Kind != KindLeague {
		return nil, games.Errorf(games.EConflict, "tournament %d is a %s: only a league pauses (cancel stops the others)", id, t.Kind)
	}
	if t.Status != StatusRunning && t.Status != StatusPaused {
		return nil, games.Errorf(games.EConflict, "tournament %d is %s: only a running league pauses", id, t.Status)
	}
	if err := s.Store.SetTournamentStatus(ctx, id, StatusPaused); err != nil {
		return nil, err
	}
	s.Wake()
	if t, err = s.Store.Tournament(ctx, id); err != nil {
		return nil, err
	}
	s.publish(Event{Type: EventTournament, TournamentID: id, Tournament: t})
	return t, nil
}

// run is a tournament being played.
type run struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when its games have all been stored
	wake   chan struct{} // a league: look at its state again (Wake)
}

// schedule starts the tournament's games in schedule order, at most
// concurrency at a time, until all have been started, then waits for them.
func (s *Service) schedule(ctx context.Context, t *Tournament, wake <-chan struct{}) {
	log := s.log().With("tournament", t.ID)
	log.Info("tournament running", "games", t.TotalGames, "done", t.FinishedGames, "concurrency", t.Concurrency)
	suite, err := LoadSuite(ctx, s.suites(), &t.Settings)
	if err != nil {
		log.Error("tournament cannot run: its opening suite did not load", "err", err)
		return
	}
	if dynamic(t.Kind) {
		s.scheduleDynamic(ctx, t, suite)
		return
	}
	if t.Kind == KindLeague {
		s.scheduleLeague(ctx, t, suite, wake)
		return
	}
	sched := t.Schedule()
	run := newRunning(t.Concurrency)
	var games sync.WaitGroup
	defer games.Wait()
	cache := map[int64]engines.Engine{}
	for {
		run.collect()
		if ctx.Err() != nil {
			return
		}
		if run.full() {
			if !run.wait(ctx) {
				return
			}
			continue
		}
		idx, ok, err := s.Store.NextIndex(ctx, t)
		if err != nil {
			if !s.failedNext(ctx, log, "next game", err, "tournament", t.ID) {
				return
			}
			continue
		}
		if !ok {
			if run.n == 0 {
				break // every game started has ended and none is left
			}
			// A game still running may end aborted and need playing again.
			if !run.wait(ctx) {
				return
			}
			continue
		}
		spec, err := s.prepare(ctx, t, sched.Game(idx), cache, suite)
		if err != nil {
			if !s.failedNext(ctx, log, "start game", err, "tournament", t.ID, "index", idx) {
				return
			}
			continue
		}
		s.storeOK()
		run.start(&games, func() {
			if !s.play(ctx, t, spec) && ctx.Err() == nil {
				// Not played, though nobody stopped it: its index comes back
				// at once, so do not ask for it in a tight loop.
				sleepCtx(ctx, time.Second)
			}
		})
	}
	games.Wait()
	cur, err := s.Store.Tournament(context.WithoutCancel(ctx), t.ID)
	if err != nil {
		log.Error("tournament over: viewers are not told", "err", err)
		return
	}
	log.Info("tournament over", "status", cur.Status, "finished_games", cur.FinishedGames)
	s.publish(Event{Type: EventTournament, TournamentID: t.ID, Tournament: cur})
}

// running counts the games a scheduler has started and not yet seen end,
// at most max; it alone changes the count, and each game tells it when it
// has ended (stored: an aborted one's index comes back from the store).
// Counting, not the number of games holding a slot, is what tells "none is
// running": a game that has told it ended may not have let go of a slot yet.
type running struct {
	n, max int
	ended  chan struct{} // never blocks: at most max games are running
}

func newRunning(max int) *running {
	return &running{max: max, ended: make(chan struct{}, max)}
}

// collect counts the games that have ended, without waiting.
func (r *running) collect() {
	for {
		select {
		case <-r.ended:
			r.n--
		default:
			return
		}
	}
}

func (r *running) full() bool { return r.n >= r.max }

// wait waits for a running game to end; false if ctx ended first.
func (r *running) wait(ctx context.Context) bool {
	select {
	case <-r.ended:
		r.n--
		return true
	case <-ctx.Done():
		return false
	}
}

// start runs play as a game of wg, counted until it returns.
func (r *running) start(wg *sync.WaitGroup, play func()) {
	r.n++
	wg.Go(func() {
		defer func() { r.ended <- struct{}{} }()
		play()
	})
}

// prepare stores a new running game for schedule position p.
func (s *Service) prepare(ctx context.Context, t *Tournament, p Pairing, cache map[int64]engines.Engine, suite *openings.Suite) (GameSpec, error) {
	var players [2]engines.Engine
	for i, seat := range []int{p.Black, p.White} {
		id := t.Engines[seat]
		e, ok := cache[id]
		if !ok {
			var err error
			if e, err = s.Store.Engine(ctx, id); err != nil {
				return GameSpec{}, err
			}
			cache[id] = e
		}
		players[i] = e
	}
	// Everything that can fail comes before the game is stored as running: a
	// running row nobody plays would wait for the next restart.
	// Only protocols that report the records (othello-move's BYE) need them:
	// no reads for the others.
	var tallies [2]engines.Tally
	if wantsTallies(players[0].Protocol) || wantsTallies(players[1].Protocol) {
		var err error
		if tallies, err = s.Store.Tallies(ctx, t.ID, [2]int64{players[0].ID, players[1].ID}); err != nil {
			return GameSpec{}, err
		}
	}
	seed := t.Seed ^ (uint64(p.Index)+1)*0x9e3779b97f4a7c15
	if p.Slot != "" {
		seed = t.Seed ^ hashString(p.Slot)
	}
	id, err := s.Store.StartGame(ctx, t, p, players[0].ID, players[1].ID, seed)
	if err != nil {
		return GameSpec{}, err
	}

	spec := GameSpec{
		ID: id, TournamentID: t.ID, Index: p.Index, Black: players[0], White: players[1],
		Settings: t.Settings, Seed: seed, Tallies: tallies, Pair: p.Pair, Slot: p.Slot,
	}
	if suite != nil && p.Pair != 0 {
		spec.Opening = OpeningFor(suite, t.Settings.Openings, t.Seed, p.Pair)
	}
	switch {
	case s.Logs != "":
		spec.LogDir = s.Logs
	case s.DataDir != "":
		spec.LogDir = filepath.Join("logs", strconv.FormatInt(t.ID, 10))
	}
	return spec, nil
}

// play runs one game, stores it and tells the viewers. It reports whether the
// game was played and stored (false: it is to be played again).
func (s *Service) play(ctx context.Context, t *Tournament, spec GameSpec) bool {
	header := &Game{
		ID: spec.ID, TournamentID: t.ID, Index: spec.Index, Game: t.Settings.Game, Rule: t.Settings.Rule, Size: t.Settings.Size,
		Black:  Player{EngineID: spec.Black.ID, Name: spec.Black.Name, Human: spec.Black.Protocol == engines.Human},
		White:  Player{EngineID: spec.White.ID, Name: spec.White.Name, Human: spec.White.Protocol == engines.Human},
		Status: GameRunning, Pair: spec.Pair, Slot: spec.Slot,
	}
	if o := spec.Opening; o != nil {
		header.Opening = &SuiteLine{Suite: o.Suite, Index: o.Index, Plies: len(o.Moves), Text: o.Text}
	}
	now := time.Now().UTC()
	header.StartedAt = &now
	s.publish(Event{Type: EventGameStarted, TournamentID: t.ID, GameID: spec.ID, Game: header})
	spec.OnMove = func(tick Tick) {
		s.publish(Event{Type: EventMove, TournamentID: t.ID, GameID: spec.ID, Tick: &tick})
	}
	var p *Played
	stored := func(bool) {}
	if s.Dispatch != nil && t.Kind != KindPlay { // a person's seat is here
		spec.OnRestart = func() {
			again := *header
			again.Plies = 0
			s.publish(Event{Type: EventGameStarted, TournamentID: t.ID, GameID: spec.ID, Game: &again, Again: true})
		}
		p, stored = s.Dispatch.Play(ctx, spec)
	} else {
		p = s.Play(ctx, spec)
	}
	ok := s.storeGame(ctx, p)
	stored(ok)
	if !ok {
		return false
	}
	ended := *header
	ended.Status = GameFinished
	if p.Outcome.Reason == games.ReasonAborted {
		ended.Status = GameAborted
	}
	ended.Result, ended.Reason, ended.Cause, ended.Plies = p.Result(), p.Outcome.Reason, p.Outcome.Cause, len(p.Moves)
	end := p.EndedAt.UTC()
	ended.EndedAt = &end
	s.log().Info("game over", "tournament", t.ID, "game", spec.ID, "black", spec.Black.Name, "white", spec.White.Name,
		"result", ended.Result, "reason", ended.Reason, "plies", ended.Plies)
	s.publish(Event{Type: EventGameEnded, TournamentID: t.ID, GameID: spec.ID, Game: &ended, Played: p})
	if ended.Status == GameFinished && t.Settings.SPRT != nil {
		s.checkSPRT(ctx, t)
	}
	return ended.Status == GameFinished
}

// Play plays one game on the service's runner, its relative log directory
// under DataDir. The service's own games are stored and told; a game
// played by a caller (the pre-flight check) is neither.
func (s *Service) Play(ctx context.Context, spec GameSpec) *Played {
	runner := *s.Runner
	if s.DataDir != "" {
		runner.DataDir = s.DataDir
	}
	return runner.Play(ctx, spec)
}

// checkSPRT finishes a tournament whose SPRT has decided: its running games
// are stopped (stored as aborted, and not played again).
func (s *Service) checkSPRT(ctx context.Context, t *Tournament) {
	_, pairs, err := s.Store.Standings(ctx, t.ID)
	if err != nil {
		s.log().Error("SPRT not checked: the pair's results did not read (the next game checks again)", "tournament", t.ID, "err", err)
		return
	}
	if len(pairs) != 1 {
		return
	}
	llr := PairLLR(t.Settings.SPRT, t.Settings.Paired(), pairs[0].From(t.Engines[0]))
	result := t.Settings.SPRT.Result(llr)
	if result == stats.Continue {
		return
	}
	if err := s.Store.SetTournamentStatus(context.WithoutCancel(ctx), t.ID, StatusFinished); err != nil {
		s.log().Error("SPRT decided but the tournament could not be finished", "tournament", t.ID, "err", err)
		return
	}
	s.log().Info("SPRT decided: tournament finished", "tournament", t.ID, "result", result, "llr", llr)
	// Told before its running games are stopped: their ends come after.
	cur, err := s.Store.Tournament(context.WithoutCancel(ctx), t.ID)
	if err != nil {
		c := *t
		c.Status = StatusFinished
		cur = &c
	}
	s.publish(Event{Type: EventTournament, TournamentID: t.ID, Tournament: cur, SPRT: &SPRTDecision{Result: result, LLR: llr}})
	s.mu.Lock()
	if rn := s.runs[t.ID]; rn != nil {
		rn.cancel()
	}
	s.mu.Unlock()
}

// PairLLR is the SPRT's log-likelihood ratio for a pair of engines, from
// A's view (the tournament's first engine, the one the test is about): on its
// game pairs (pentanomial) when the tournament plays pairs, else on its games.
func PairLLR(t *stats.SPRT, paired bool, p PairResult) float64 {
	if paired {
		return t.LLR(stats.Penta(p.Penta))
	}
	return t.LLRWDL(stats.WDL{W: p.AWins, D: p.Draws, L: p.BWins})
}

// storeGame stores a finished game. A game that ended must be stored even if
// the tournament was cancelled or the server is stopping meanwhile, and a
// full disk or a database that cannot be written for now is waited out,
// however long, with the game in memory: its tournament goes on by itself
// once the write works. It gives up only on an error that will not pass
// (after a few tries, or a write that hung for 30 s; the game is then stored
// as aborted, to be played again), or when its tournament stops (a cancel,
// the server's shutdown) and one more try failed (the game's row stays
// running, and the next start plays it again). It reports whether the game
// was stored.
func (s *Service) storeGame(ctx context.Context, p *Played) bool {
	wait := 200 * time.Millisecond
	for attempt := 0; ; attempt++ {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		err := s.Store.FinishGame(sctx, p)
		cancel()
		switch {
		case err == nil:
			s.storeOK()
			return true
		case !transient(err):
			if attempt >= 5 || errors.Is(err, context.DeadlineExceeded) {
				s.log().Error("store game", "game", p.Spec.ID, "err", err)
				s.abandon(p, err)
				return false
			}
		case ctx.Err() != nil:
			s.log().Error("game not stored before its tournament stopped (a cancel or the server's shutdown): its row stays running until the next start, which plays it again", "game", p.Spec.ID, "err", err, "cause", errors.Unwrap(err))
			return false
		default:
			s.storeFailed("store game", err, "game", p.Spec.ID)
		}
		// A stop or a cancel ends the wait, for one last try.
		if transient(err) {
			sleepCtx(ctx, wait)
			wait = min(2*wait, 5*time.Second)
		} else {
			sleepCtx(ctx, time.Duration(attempt+1)*200*time.Millisecond)
		}
	}
}

// abandon stores a game that could not be stored as aborted, without its
// moves, so that it is played again: a running row would hold its schedule
// index, and its tournament, until the next restart.
func (s *Service) abandon(p *Played, cause error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	aborted := &Played{Spec: p.Spec, Record: games.Record{Outcome: games.Outcome{Reason: games.ReasonAborted}}, StartedAt: p.StartedAt, EndedAt: p.EndedAt,
		Detail: "not stored: " + cause.Error()}
	if err := s.Store.FinishGame(ctx, aborted); err != nil {
		s.log().Error("store unstorable game as aborted: its tournament waits for a restart", "game", p.Spec.ID, "err", err)
	}
}

// hashString is FNV-1a: a game's seed from its slot.
func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// failedNext handles a store error while a scheduler looks for or starts its
// next game: it logs it (a failure that may pass as the store's health), and
// waits a second before the next try. It reports false when the tournament
// stopped meanwhile.
func (s *Service) failedNext(ctx context.Context, log *slog.Logger, what string, err error, args ...any) bool {
	if ctx.Err() != nil {
		return false
	}
	if transient(err) {
		s.storeFailed(what, err, args...)
	} else {
		log.Error(what, append(args, "err", err)...)
	}
	sleepCtx(ctx, time.Second)
	return ctx.Err() == nil
}

// suites is the store of uploaded opening suites, nil if the store keeps none.
func (s *Service) suites() SuiteStore {
	st, _ := s.Store.(SuiteStore)
	return st
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// wantsTallies reports whether a protocol tells engines their tournament
// records.
func wantsTallies(protocol string) bool {
	p, _ := engines.LookupProtocol(protocol)
	return p.Tallies
}
