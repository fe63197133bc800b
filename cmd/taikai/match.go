package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/games/openings"
	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/tournament"
	"github.com/taikai-dev/taikai/tournament/stats"
)

const matchUsage = `usage: taikai match [flags] ENGINE ENGINE

Plays games between two engines without a server, colours alternating, and
prints the result (like cutechess-cli and fastchess). With --openings, every
game pair starts from an opening of a suite, played twice with colours
swapped, and the result is counted by pairs (pentanomial); with --sprt the
match stops as soon as the test decides. Each ENGINE is a built-in name
(othello-greedy) or a spec in one argument:

  "name=seed cmd='java OthelloClient.java {host}' dir=engines/testdata/clients port=46000 protocol=othello-board"

cmd is split like a shell would and run without one; placeholders: {host}
{port} {color} {colorflag} {colornum} {name} {time_ms} {game_id} {rule} {size}.

  taikai match --openings builtin --sprt 'elo0=0 elo1=10' --move-time 100ms new old

Flags:
`

type matchConfig struct {
	set         tournament.Settings
	games       int
	concurrency int
	db          string
	logs        string
	json        bool
	moveTime    time.Duration
	totalTime   time.Duration
	byoyomi     time.Duration
	connect     time.Duration
	seed        uint64
	affinity    bool
	sandbox     bool
	sprt        *stats.SPRT
	suite       *openings.Suite
	out         string // --out: where to write the games' records
}

func parseMatch(args []string, stderr io.Writer) (*matchConfig, []engines.Engine, error) {
	c := &matchConfig{}
	fs := flag.NewFlagSet("match", flag.ContinueOnError)
	fs.SetOutput(stderr)
	// A mistake gets one line of usage after its error; -h gets it all.
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: taikai match [flags] ENGINE ENGINE (taikai match -h for every flag)")
	}
	fs.StringVar(&c.set.Game, "game", "othello", "`game`: "+strings.Join(games.Names(), ", "))
	fs.StringVar(&c.set.Rule, "rule", "", "the game's `rule`: gomoku seed (default), freestyle, standard, renju; checkers seed (default), english")
	fs.IntVar(&c.set.Size, "size", 0, "gomoku board `size`, 5-25 (default 15)")
	fs.StringVar(&c.out, "out", "", "write the finished games to `file`, in the format its extension names: .csv (one row per game), or the game's record format (.ggf Othello, .psq Gomoku, .pdn checkers)")
	fs.IntVar(&c.games, "games", 0, "`number` of games (default 2; with --sprt, the most it may play: default 20000)")
	fs.Func("openings", "start game pairs from a suite's openings: `builtin` or file=FILE (one opening a line, or a .ggf/.psq/.pdn record file), then order=random|sequential start=N plies=N (a record file's games cut to N moves)", func(v string) error {
		o, err := parseOpenings(v)
		c.set.Openings = o
		return err
	})
	fs.BoolVar(&c.set.Pairs, "pairs", false, "play games in pairs, colours swapped (always so with --openings)")
	var sprtText []string
	fs.Func("sprt", "stop when a sequential probability ratio test decides: `elo0=0 elo1=5 alpha=0.05 beta=0.05 model=logistic|normalized`", func(v string) error {
		sprtText = append(sprtText, strings.Fields(v)...)
		return nil
	})
	fs.DurationVar(&c.moveTime, "move-time", 0, "per-move clock (default 10s; othello-move: none)")
	fs.DurationVar(&c.totalTime, "total-time", 0, "total clock per side (default none; othello-move: 600s)")
	fs.DurationVar(&c.byoyomi, "byoyomi", 0, "with a total clock, time per move once it is spent (othello-move default 500ms)")
	fs.StringVar(&c.set.OnTimeout, "on-timeout", "", "`forfeit` or random (othello default forfeit; gomoku default place = random)")
	fs.IntVar(&c.set.MaxErrors, "max-errors", 0, "refused commands before a loss (othello default 10, -1 no limit)")
	boardOrder := fs.String("board-order", "", "othello-board `order` of BOARD cells: column (default) or row (same as --option board_order=...)")
	endMessage := fs.Bool("end-message", false, "gomoku-turn: send 'end <win|lose|draw> <reason>' before closing (same as --option end_message=true)")
	fs.Func("option", "a protocol's own `name=value` setting (PROTOCOLS.md), e.g. board_order=row; may be repeated", func(v string) error {
		name, value, ok := strings.Cut(v, "=")
		if !ok || name == "" {
			return errors.New("want name=value")
		}
		c.set.SetOption(name, value)
		return nil
	})
	fs.DurationVar(&c.connect, "connect-timeout", 0, "time an engine has to connect after it starts (default: its protocol's, as in serve: README, \"Engines\")")
	fs.IntVar(&c.concurrency, "concurrency", 1, "games played at once")
	fs.BoolVar(&c.affinity, "affinity", false, affinityUsage)
	fs.BoolVar(&c.sandbox, "sandbox", false, "run both engines in the engine sandbox, as serve does (default: unsandboxed, as an author testing their own programs)")
	fs.StringVar(&c.db, "db", "", "SQLite `file` to store the games in")
	fs.StringVar(&c.logs, "logs", "", "`directory` for the engines' output (default: next to --db, else discarded)")
	fs.BoolVar(&c.json, "json", false, "print the games and the result as JSON")
	fs.Uint64Var(&c.seed, "seed", 0, "random `seed` for server-made moves (default: random)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, matchUsage)
			fs.PrintDefaults()
		}
		return nil, nil, err
	}
	// --sprt elo0=0 elo1=10 unquoted, as the first release's help wrote it:
	// the settings after the flag's value are the test's too.
	for len(sprtText) > 0 && fs.NArg() > 0 && isSPRTSetting(fs.Arg(0)) {
		rest := fs.Args()
		for len(rest) > 0 && isSPRTSetting(rest[0]) {
			sprtText, rest = append(sprtText, rest[0]), rest[1:]
		}
		if err := fs.Parse(rest); err != nil {
			return nil, nil, err
		}
	}
	if len(sprtText) > 0 {
		t, err := stats.ParseSPRT(sprtText...)
		if err != nil {
			return nil, nil, fmt.Errorf("--sprt %s: %w", strings.Join(sprtText, " "), err)
		}
		c.sprt = &t
	}
	if fs.NArg() != 2 {
		for _, a := range fs.Args() {
			if isSPRTSetting(a) {
				return nil, nil, fmt.Errorf("%q is a setting of --sprt: give them right after it, quoted as one argument: --sprt 'elo0=0 elo1=10'", a)
			}
		}
		fs.Usage()
		return nil, nil, fmt.Errorf("want two engines, got %d", fs.NArg())
	}
	gamesSet := false
	fs.Visit(func(f *flag.Flag) { gamesSet = gamesSet || f.Name == "games" })
	switch {
	case !gamesSet && c.sprt != nil:
		c.games = 20000
	case !gamesSet:
		c.games = 2
	case c.games < 1:
		return nil, nil, errors.New("--games: want at least 1")
	}
	if c.set.Paired() && c.games%2 == 1 {
		return nil, nil, fmt.Errorf("--games %d: games come in pairs (--openings, --pairs), so want an even number", c.games)
	}
	if c.concurrency < 1 || c.concurrency > tournament.MaxConcurrency {
		return nil, nil, fmt.Errorf("--concurrency: want 1-%d", tournament.MaxConcurrency)
	}
	if *boardOrder != "" {
		c.set.SetOption("board_order", *boardOrder)
	}
	if *endMessage {
		c.set.SetOption("end_message", "true")
	}
	c.set.MoveTimeMS = c.moveTime.Milliseconds()
	c.set.TotalTimeMS = c.totalTime.Milliseconds()
	c.set.ByoyomiMS = c.byoyomi.Milliseconds()
	c.set.ConnectMS = c.connect.Milliseconds()
	if err := c.set.Validate(); err != nil {
		return nil, nil, fmt.Errorf("--%s", strings.ReplaceAll(err.Error(), "_", "-"))
	}
	suite, err := tournament.LoadSuite(context.Background(), nil, &c.set)
	if err != nil {
		return nil, nil, fmt.Errorf("--%s", err)
	}
	c.suite = suite
	var pair []engines.Engine
	for i, spec := range fs.Args() {
		e, err := engines.ParseSpec(spec, c.set.Game)
		if err != nil {
			return nil, nil, fmt.Errorf("engine %d: %w", i+1, err)
		}
		pair = append(pair, e)
	}
	for i, e := range pair {
		if p, ok := engines.LookupProtocol(e.Protocol); ok {
			if err := p.CheckRule(c.set.Rule); err != nil {
				return nil, nil, fmt.Errorf("--rule: engine %d (%s): %v", i+1, e.Name, err)
			}
		}
	}
	if pair[0].Name == pair[1].Name {
		pair[1].Name += " (2)"
	}
	if c.out != "" {
		ext := strings.TrimPrefix(filepath.Ext(c.out), ".")
		if _, ok := games.RecordFormatOf(c.set.Game, ext); !ok && ext != "csv" {
			var have []string
			for _, x := range games.RecordExts(c.set.Game) {
				have = append(have, "."+x)
			}
			formats := "it has none"
			if len(have) > 0 {
				formats = strings.Join(have, ", ")
			}
			return nil, nil, fmt.Errorf("--out %s: want a .csv file or a %s record file (%s)", c.out, c.set.Game, formats)
		}
	}
	if c.seed == 0 {
		c.seed = rand.Uint64()
	}
	if c.logs == "" && c.db != "" {
		c.logs = filepath.Join(filepath.Dir(c.db), "logs")
	}
	return c, pair, nil
}

// parseOpenings reads --openings: "builtin" or "file=F", then order=...,
// start=N and plies=N (a record file's games cut to N moves).
func parseOpenings(v string) (*tournament.Openings, error) {
	o := &tournament.Openings{}
	for _, w := range strings.Fields(v) {
		key, val, _ := strings.Cut(w, "=")
		switch key {
		case "builtin":
			o.Suite = "builtin"
		case "file":
			if val == "" {
				return nil, errors.New("file=: want a file name")
			}
			o.File = val
		case "order":
			o.Order = val
		case "start":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("start=%s: want a number from 0", val)
			}
			o.Start = n
		case "plies":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("plies=%s: want a number from 1", val)
			}
			o.Plies = n
		default:
			return nil, fmt.Errorf("%q: want builtin or file=FILE, then order=random|sequential, start=N and (a .ggf or .psq file) plies=N", w)
		}
	}
	if o.Suite == "" && o.File == "" {
		return nil, errors.New("want builtin or file=FILE")
	}
	return o, nil
}

// matchGameJSON is a game in `taikai match --json` (DESIGN.md).
type matchGameJSON struct {
	Black   string              `json:"black"`
	White   string              `json:"white"`
	Result  string              `json:"result"`
	Reason  string              `json:"reason"`
	ID      int64               `json:"id,omitempty"`
	Opening *tournament.Opening `json:"opening,omitempty"`
	Moves   []games.MoveView    `json:"moves"`
	// Sandbox is the sandbox state the game ran under: on (--sandbox) or off.
	Sandbox string `json:"sandbox"`
	// Detail says why an engine could not start.
	Detail string `json:"detail,omitempty"`
	// Cause refines the reason (after_refused: a timeout that followed a
	// refused move); Refused is that move.
	Cause   string                  `json:"cause,omitempty"`
	Refused *tournament.RefusedMove `json:"refused,omitempty"`
}

type matchStandingJSON struct {
	Name   string  `json:"name"`
	Wins   int64   `json:"wins"`
	Draws  int64   `json:"draws"`
	Losses int64   `json:"losses"`
	Points float64 `json:"points"`
	// LostBy counts the engine's losses by how they ended (a game-end
	// reason, or timeout_after_refused).
	LostBy map[string]int `json:"lost_by"`
}

func runMatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, pair, err := parseMatch(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "taikai match:", err)
		return 2
	}
	m := &match{cfg: cfg, pair: pair, stderr: stderr}
	if err := m.open(ctx); err != nil {
		fmt.Fprintln(stderr, "taikai match:", err)
		return 1
	}
	defer m.close()
	if err := m.play(ctx); err != nil {
		fmt.Fprintln(stderr, "taikai match:", err)
		return 1
	}
	if m.nonePlayed() {
		// A typo in a command is not a match: no standings, no Elo.
		m.reportNotStarted(stdout)
	} else {
		m.report(stdout)
	}
	if cfg.out != "" {
		if err := m.writeOut(cfg.out); err != nil {
			fmt.Fprintln(stderr, "taikai match: --out:", err)
			return 1
		}
	}
	if ctx.Err() != nil {
		return 130
	}
	// Exit 1 when no game could be played at all: a typo in a command
	// must not look like a match.
	var first *tournament.Played
	for _, p := range m.played {
		if p == nil {
			continue
		}
		if !notPlayed(p) {
			return 0
		}
		if first == nil {
			first = p
		}
	}
	if first != nil {
		fmt.Fprintf(stderr, "taikai match: no game could be played: game 1 ended %s\n", gameEnd(first))
	}
	return 1
}

// nonePlayed: no game could be played at all (every one ended before it
// started, or there were none).
func (m *match) nonePlayed() bool {
	for _, p := range m.played {
		if p != nil && !notPlayed(p) {
			return false
		}
	}
	return true
}

// reportNotStarted says why no game could be played, without standings.
func (m *match) reportNotStarted(w io.Writer) {
	if m.cfg.json {
		out := map[string]any{"games": []matchGameJSON{}, "played": 0}
		for _, p := range m.played {
			if p != nil {
				out["games"] = append(out["games"].([]matchGameJSON), gameJSON(p))
			}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(out)
		return
	}
	fmt.Fprintln(w, "No game could be played: no standings.")
	m.notStarted(w)
}

// notStarted lists why games did not start, each cause once (three at most).
func (m *match) notStarted(w io.Writer) {
	seen := map[string]bool{}
	for _, p := range m.played {
		if p != nil && p.Detail != "" && !seen[p.Detail] && len(seen) < 3 {
			seen[p.Detail] = true
			fmt.Fprintf(w, "Not started: %s\n", p.Detail)
		}
	}
}

// match plays the games of `taikai match`.
type match struct {
	cfg    *matchConfig
	pair   []engines.Engine
	stderr io.Writer
	db     *storage.DB
	t      *tournament.Tournament

	mu      sync.Mutex
	played  []*tournament.Played // by game number
	records [2]engines.Tally     // per engine of pair
	done    int
	tty     bool
	count   stats.Counter // the first engine's games and complete game pairs
	decided string        // H0 or H1 once the SPRT decided; "" before
	llr     float64       // the SPRT's log-likelihood ratio at the last pair
	stop    func()        // stops the match (the SPRT decided)
	stopped int           // games stopped unfinished when the SPRT decided
}

func (m *match) open(ctx context.Context) error {
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 && m.stderr == io.Writer(os.Stderr) {
		m.tty = true
	}
	m.played = make([]*tournament.Played, m.cfg.games)
	for i := range m.records {
		m.records[i].Name = m.pair[i].Name
	}
	if m.cfg.db == "" {
		return nil
	}
	db, err := storage.Open(ctx, m.cfg.db)
	if err != nil {
		return err
	}
	m.db = db
	for i := range m.pair {
		if err := db.MatchEngine(ctx, &m.pair[i]); err != nil {
			return fmt.Errorf("record engine %s: %w", m.pair[i].Name, err)
		}
	}
	m.t = &tournament.Tournament{
		Name:     fmt.Sprintf("match %s vs %s", m.pair[0].Name, m.pair[1].Name),
		Kind:     tournament.KindMatch,
		Settings: m.cfg.set, Engines: []int64{m.pair[0].ID, m.pair[1].ID},
		GamesPerPair: m.cfg.games, Concurrency: m.cfg.concurrency,
		Status: tournament.StatusRunning, Seed: m.cfg.seed,
	}
	if err := m.t.Validate(); err != nil {
		return err
	}
	return db.CreateMatch(ctx, m.t)
}

func (m *match) close() {
	if m.db != nil {
		m.db.Close()
	}
}

// play runs the games with up to concurrency at once.
func (m *match) play(ctx context.Context) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	launcher := &engines.Launcher{Self: self, ConnectTimeout: m.cfg.connect}
	if m.cfg.sandbox {
		if err := setupSandbox(launcher, ""); err != nil {
			return fmt.Errorf("--sandbox: %w", err)
		}
	}
	defer launcher.Close()
	runner := &tournament.Runner{Launcher: launcher, Affinity: m.cfg.affinity}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	m.stop = stop
	next := make(chan int)
	errc := make(chan error, m.cfg.concurrency)
	var wg sync.WaitGroup
	for range m.cfg.concurrency {
		wg.Go(func() {
			for i := range next {
				if err := m.game(ctx, runner, i); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	start := time.Now()
	var firstErr error
feed:
	for i := range m.cfg.games {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		case firstErr = <-errc:
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr == nil {
		select {
		case firstErr = <-errc:
		default:
		}
	}
	if m.tty {
		fmt.Fprintln(m.stderr)
	}
	fmt.Fprintf(m.stderr, "%d games in %v\n", m.done, time.Since(start).Round(time.Millisecond))
	if m.decided != "" && m.db != nil {
		// Stopped early: the stored match is over all the same.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		err := m.db.SetTournamentStatus(sctx, m.t.ID, tournament.StatusFinished)
		cancel()
		if err != nil {
			return fmt.Errorf("store the match as finished: %w", err)
		}
	}
	if m.decided != "" {
		fmt.Fprintf(m.stderr, "SPRT: %s accepted (LLR %.2f, bounds %.2f, %.2f) after %d game pairs", m.decided, m.llr, lowerBound(m.cfg.sprt), upperBound(m.cfg.sprt), m.pairs())
		if m.stopped > 0 {
			fmt.Fprintf(m.stderr, "; %d running games stopped and not counted", m.stopped)
		}
		fmt.Fprintln(m.stderr)
	}
	return firstErr
}

// game plays game i: even games give the first engine black.
func (m *match) game(ctx context.Context, runner *tournament.Runner, i int) error {
	if ctx.Err() != nil {
		return nil // the match stopped (an interrupt, or the SPRT decided) before this game
	}
	a, b := 0, 1
	if i%2 == 1 {
		a, b = 1, 0
	}
	spec := tournament.GameSpec{
		ID: int64(i + 1), Index: int64(i), Black: m.pair[a], White: m.pair[b],
		Settings: m.cfg.set, Seed: m.cfg.seed + uint64(i),
	}
	if m.cfg.set.Paired() {
		spec.Pair = int64(i/2 + 1)
		if m.cfg.suite != nil {
			spec.Opening = tournament.OpeningFor(m.cfg.suite, m.cfg.set.Openings, m.cfg.seed, spec.Pair)
		}
	}
	m.mu.Lock()
	spec.Tallies = [2]engines.Tally{m.records[a], m.records[b]}
	m.mu.Unlock()
	if m.db != nil {
		id, err := m.db.StartGame(ctx, m.t, tournament.Pairing{Index: int64(i), Black: a, White: b, Pair: spec.Pair}, m.pair[a].ID, m.pair[b].ID, spec.Seed)
		if err != nil && ctx.Err() != nil {
			// The match stopped while this game was being stored (seen in
			// CI: the SPRT decided a moment after the check above).
			return nil
		}
		if err != nil {
			return fmt.Errorf("store game %d: %w", i+1, err)
		}
		spec.ID, spec.TournamentID = id, m.t.ID
	}
	if m.cfg.logs != "" {
		spec.LogDir = m.cfg.logs
	}
	p := runner.Play(ctx, spec)
	if m.db != nil {
		// Store even when interrupted: an aborted game is recorded as such.
		if err := m.db.FinishGame(context.WithoutCancel(ctx), p); err != nil {
			return fmt.Errorf("store game %d: %w", i+1, err)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if p.Outcome.Reason == games.ReasonAborted && m.decided != "" {
		m.stopped++ // stopped by the SPRT's decision: not part of the match
		return nil
	}
	m.played[i] = p
	if p.Outcome.Reason != games.ReasonAborted {
		m.done++
		m.tally(i, a, b, p)
	}
	m.progress(i, p)
	return nil
}

// tally adds a finished game to the engines' records, its pair to the
// pentanomial counts once both its games are in, and runs the SPRT.
func (m *match) tally(i, black, white int, p *tournament.Played) {
	half := 1 // the first engine's half points
	switch p.Outcome.Winner {
	case games.Black:
		m.records[black].Wins++
		m.records[white].Losses++
		half = 2 * (1 - black)
	case games.White:
		m.records[white].Wins++
		m.records[black].Losses++
		half = 2 * (1 - white)
	}
	paired := m.cfg.set.Paired()
	var pair int64
	if paired {
		pair = int64(i/2 + 1)
	}
	if !m.count.Add(pair, half) && paired {
		return // the SPRT runs after each complete pair
	}
	if t := m.cfg.sprt; t != nil && m.decided == "" {
		if paired {
			m.llr = t.LLR(m.count.Penta)
		} else {
			m.llr = t.LLRWDL(m.count.WDL)
		}
		if r := t.Result(m.llr); r != "continue" {
			m.decided = r
			m.stop()
		}
	}
}

// pairs is the number of complete game pairs.
func (m *match) pairs() int64 {
	var n int64
	for _, c := range m.count.Penta {
		n += c
	}
	return n
}

// estimate is the first engine's result: by game pairs when games come in
// pairs (pentanomial), else by games.
func (m *match) estimate() stats.Estimate {
	if m.cfg.set.Paired() {
		return stats.FromPenta(m.count.Penta)
	}
	return stats.FromWDL(m.count.WDL)
}

func lowerBound(t *stats.SPRT) float64 { l, _ := t.Bounds(); return l }
func upperBound(t *stats.SPRT) float64 { _, u := t.Bounds(); return u }

func (m *match) progress(i int, p *tournament.Played) {
	a, b := m.records[0], m.records[1]
	draws := m.done - a.Wins - a.Losses
	line := fmt.Sprintf("%d/%d  %s %d - %d %s  draws %d", m.done, m.cfg.games, a.Name, a.Wins, b.Wins, b.Name, draws)
	if est := m.estimate(); est.Games > 0 {
		line += fmt.Sprintf("  Elo %.1f +/- %s", est.Elo, eloText(est.EloError))
	}
	if m.cfg.sprt != nil {
		line += fmt.Sprintf("  LLR %.2f (%.2f, %.2f)", m.llr, lowerBound(m.cfg.sprt), upperBound(m.cfg.sprt))
	}
	line += fmt.Sprintf("  (game %d: %s)", i+1, gameEnd(p))
	switch {
	case m.tty:
		fmt.Fprintf(m.stderr, "\r\033[K%s", line)
	case m.done == m.cfg.games || m.done%max(1, min(m.cfg.games/20, 50)) == 0 || p.Outcome.Reason != games.ReasonNormal:
		fmt.Fprintln(m.stderr, line)
	}
}

// gameEnd says how a game ended: "black wins, normal", "draw, normal",
// "aborted", and why an engine could not start.
func gameEnd(p *tournament.Played) string {
	var who string
	switch r := p.Result(); r {
	case "":
		who = "no result"
	case "draw":
		who = "draw"
	default:
		who = r + " wins"
	}
	s := who + ", " + p.Outcome.Reason
	if r := p.Refused; r != nil {
		// Said first: the timeout is the refusal's consequence.
		s = fmt.Sprintf("%s's move %s was refused (%s), then it stopped answering: %s", r.Color, r.Move, r.Why, s)
	}
	if p.Detail != "" {
		s += ": " + p.Detail
	}
	return s
}

// notPlayed: the game never started (an engine crashed or did not connect,
// or it was aborted).
func notPlayed(p *tournament.Played) bool {
	switch p.Outcome.Reason {
	case games.ReasonCrash, games.ReasonNoConnect, games.ReasonAborted:
		return true
	}
	return false
}

func (m *match) report(w io.Writer) {
	a, b := m.records[0], m.records[1]
	draws := int64(m.done - a.Wins - a.Losses)
	stand := []matchStandingJSON{
		{a.Name, int64(a.Wins), draws, int64(a.Losses), float64(a.Wins) + float64(draws)/2, m.lossesBy(a.Name)},
		{b.Name, int64(b.Wins), draws, int64(b.Losses), float64(b.Wins) + float64(draws)/2, m.lossesBy(b.Name)},
	}
	est := m.estimate()
	if m.cfg.json {
		out := matchOutput{
			Games: []matchGameJSON{}, Standings: stand,
			EloDiff: finite(est.Elo), EloError: finite(est.EloError), Elo: finite(est.Elo),
			NElo: finite(est.NElo), NEloError: finite(est.NEloError), LOS: finite(100 * est.LOS), DrawRatio: finite(100 * est.DrawRatio),
		}
		if est.Games == 0 {
			out.EloDiff, out.EloError, out.Elo, out.NElo, out.NEloError, out.LOS, out.DrawRatio = nil, nil, nil, nil, nil, nil, nil
		}
		if m.cfg.set.Paired() {
			out.Pentanomial = m.count.Penta[:]
		}
		if t := m.cfg.sprt; t != nil {
			lo, hi := t.Bounds()
			out.SPRT = &sprtJSON{LLR: round2(m.llr), Lower: round2(lo), Upper: round2(hi), Result: cmp.Or(m.decided, "continue"),
				Elo0: t.Elo0, Elo1: t.Elo1, Alpha: t.Alpha, Beta: t.Beta, Model: t.Model}
		}
		for _, p := range m.played {
			if p != nil {
				out.Games = append(out.Games, gameJSON(p))
			}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(out)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "engine\tgames\twins\tdraws\tlosses\tpoints\tscore\t")
	for _, s := range stand {
		n := s.Wins + s.Draws + s.Losses
		pct := 0.0
		if n > 0 {
			pct = 100 * s.Points / float64(n)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.1f\t%.1f%%\t\n", s.Name, n, s.Wins, s.Draws, s.Losses, s.Points, pct)
	}
	tw.Flush()
	if est.Games > 0 {
		fmt.Fprintf(w, "Elo difference (%s - %s): %.1f +/- %s, nElo %s +/- %.1f, LOS %.1f%%, draw ratio %.1f%%\n",
			a.Name, b.Name, est.Elo, eloText(est.EloError), eloText(est.NElo), est.NEloError, 100*est.LOS, 100*est.DrawRatio)
	}
	if m.cfg.set.Paired() {
		fmt.Fprintf(w, "Game pairs (pentanomial, %s's points 0, 0.5, 1, 1.5, 2): %v\n", a.Name, m.count.Penta)
	}
	if t := m.cfg.sprt; t != nil {
		lo, hi := t.Bounds()
		fmt.Fprintf(w, "SPRT (%s): LLR %.2f (%.2f, %.2f): %s\n", t, m.llr, lo, hi, cmp.Or(m.decided, "continue"))
	}
	reasons := map[string]int{}
	for _, p := range m.played {
		if p != nil {
			reasons[p.Outcome.Reason]++
		}
	}
	var rs []string
	for _, r := range games.Reasons {
		if reasons[r] > 0 {
			rs = append(rs, fmt.Sprintf("%s %d", r, reasons[r]))
		}
	}
	fmt.Fprintf(w, "Game ends: %s\n", strings.Join(rs, ", "))
	for _, s := range stand {
		if line := lossesText(s.LostBy); line != "" {
			fmt.Fprintf(w, "%s lost by: %s\n", s.Name, line)
		}
	}
	m.notStarted(w)
	if m.db != nil {
		fmt.Fprintf(w, "Stored as tournament %d in %s\n", m.t.ID, m.db.Path())
	}
}

// matchOutput is `taikai match --json` (README).
type matchOutput struct {
	Games       []matchGameJSON     `json:"games"`
	Standings   []matchStandingJSON `json:"standings"`
	EloDiff     *float64            `json:"elo_diff"` // the first release's name for elo
	EloError    *float64            `json:"elo_error"`
	Elo         *float64            `json:"elo"`
	NElo        *float64            `json:"nelo"`
	NEloError   *float64            `json:"nelo_error"`
	LOS         *float64            `json:"los"`        // percent
	DrawRatio   *float64            `json:"draw_ratio"` // percent
	Pentanomial []int64             `json:"pentanomial,omitempty"`
	SPRT        *sprtJSON           `json:"sprt,omitempty"`
}

type sprtJSON struct {
	LLR    float64 `json:"llr"`
	Lower  float64 `json:"lower"`
	Upper  float64 `json:"upper"`
	Result string  `json:"result"` // H0, H1 or continue
	Elo0   float64 `json:"elo0"`
	Elo1   float64 `json:"elo1"`
	Alpha  float64 `json:"alpha"`
	Beta   float64 `json:"beta"`
	Model  string  `json:"model"`
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

func finite(f float64) *float64 {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil
	}
	r := math.Round(f*10) / 10
	return &r
}

func eloText(f float64) string {
	if math.IsNaN(f) {
		return "n/a" // every game (pair) scored the same: no spread to measure
	}
	if math.IsInf(f, 0) {
		if f > 0 {
			return "inf"
		}
		return "-inf"
	}
	return fmt.Sprintf("%.1f", f)
}

// gameJSON renders a played game as `taikai match --json` prints it.
func gameJSON(p *tournament.Played) matchGameJSON {
	g := matchGameJSON{
		Black: p.Spec.Black.Name, White: p.Spec.White.Name, Result: p.Result(), Reason: p.Outcome.Reason,
		Moves: make([]games.MoveView, len(p.Moves)), Sandbox: p.Sandbox, Detail: p.Detail,
		Cause: p.Outcome.Cause, Refused: p.Refused,
	}
	if o := p.Spec.Opening; o != nil {
		g.Opening = &tournament.Opening{Suite: o.Suite, Index: o.Index, Plies: min(len(o.Moves), len(p.Moves)), Text: o.Text}
	}
	if p.Spec.TournamentID != 0 {
		g.ID = p.Spec.ID
	}
	for i, mv := range p.Moves {
		g.Moves[i] = mv.View(p.Spec.Settings.Game, i+1)
		g.Moves[i].Opening = g.Opening != nil && i < g.Opening.Plies
	}
	return g
}

// writeOut writes the finished games to file, in the format of its
// extension: CSV, or the game's record format.
func (m *match) writeOut(file string) error {
	var finished []*tournament.Played
	var numbers []int
	for i, p := range m.played {
		if p != nil && p.Outcome.Reason != games.ReasonAborted {
			finished = append(finished, p)
			numbers = append(numbers, i+1)
		}
	}
	var buf bytes.Buffer
	ext := strings.TrimPrefix(filepath.Ext(file), ".")
	if ext == "csv" {
		list := make([]*tournament.Game, len(finished))
		for i, p := range finished {
			g := gameOf(p)
			g.ID, g.Index = int64(numbers[i]), int64(numbers[i]-1)
			list[i] = g
		}
		if err := tournament.WriteGamesCSV(&buf, list, nil, nil); err != nil {
			return err
		}
	} else {
		f, _ := games.RecordFormatOf(m.cfg.set.Game, ext)
		recs := make([]games.RecordGame, len(finished))
		for i, p := range finished {
			recs[i] = p.RecordGame("taikai match", numbers[i])
		}
		if err := f.Write(&buf, recs); err != nil {
			return err
		}
	}
	return os.WriteFile(file, buf.Bytes(), 0o644)
}

// gameOf is a played game as the store lists it (for the CSV).
func gameOf(p *tournament.Played) *tournament.Game {
	g := &tournament.Game{
		Game: p.Spec.Settings.Game, Rule: p.Spec.Settings.Rule, Size: p.Spec.Settings.Size,
		Black: tournament.Player{Name: p.Spec.Black.Name}, White: tournament.Player{Name: p.Spec.White.Name},
		Status: tournament.GameFinished, Result: p.Result(), Reason: p.Outcome.Reason, Cause: p.Outcome.Cause,
		Plies: len(p.Moves), Pair: p.Spec.Pair, Stones: p.Stones,
	}
	if o := p.Spec.Opening; o != nil {
		g.Opening = &tournament.Opening{Suite: o.Suite, Index: o.Index, Plies: min(len(o.Moves), len(p.Moves)), Text: o.Text}
	}
	if !p.StartedAt.IsZero() {
		st, en := p.StartedAt, p.EndedAt
		g.StartedAt, g.EndedAt = &st, &en
	}
	return g
}

// lossesBy counts an engine's losses by how they ended: the game-end
// reason, and "timeout_after_refused" for a timeout that followed a refused
// move (counted apart from the plain timeouts).
func (m *match) lossesBy(name string) map[string]int {
	out := map[string]int{}
	for _, p := range m.played {
		if p == nil || p.Outcome.Loser == games.None {
			continue
		}
		loser := p.Spec.Black.Name
		if p.Outcome.Loser == games.White {
			loser = p.Spec.White.Name
		}
		if loser != name {
			continue
		}
		if p.Outcome.Cause == games.CauseAfterRefused {
			out["timeout_after_refused"]++
		} else {
			out[p.Outcome.Reason]++
		}
	}
	return out
}

// lossesText is "timeout 28, timeout_after_refused 2", in the order of
// games.Reasons.
func lossesText(by map[string]int) string {
	var parts []string
	for _, r := range append(slices.Clone(games.Reasons), "timeout_after_refused") {
		if by[r] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", r, by[r]))
		}
	}
	return strings.Join(parts, ", ")
}

// isSPRTSetting: a word of --sprt's settings (elo0=0, alpha=0.05).
func isSPRTSetting(a string) bool {
	key, _, ok := strings.Cut(a, "=")
	return ok && slices.Contains([]string{"elo0", "elo1", "alpha", "beta", "model"}, key)
}
