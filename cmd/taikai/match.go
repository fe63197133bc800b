package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
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
	Black   string                `json:"black"`
	White   string                `json:"white"`
	Result  games.Result          `json:"result"`
	Reason  string                `json:"reason"`
	ID      int64                 `json:"id,omitempty"`
	Opening *tournament.SuiteLine `json:"opening,omitempty"`
	Moves   []games.MoveView      `json:"moves"`
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
	m := &match{cfg: cfg, pair: pair}
	if err := m.open(ctx, stderr); err != nil {
		fmt.Fprintln(stderr, "taikai match:", err)
		m.close()
		return 1
	}
	defer m.close()
	if err := m.play(ctx); err != nil {
		fmt.Fprintln(m.stderr, "taikai match:", err)
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
			fmt.Fprintln(m.stderr, "taikai match: --out:", err)
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
		fmt.Fprintf(m.stderr, "taikai match: no game could be played: game 1 ended %s\n", gameEnd(first))
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
				out["games"] = append(out["games"].([]matchGameJSON), m.gameJSON(p))
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

// match plays the games of `taikai match` as a tournament of kind match on
// a tournament.Service, as serve plays its tournaments: one scheduler, one
// tally (the store's), one SPRT. The match is stored in --db, else in a
// temporary database removed at the end. match is the service's sink: it
// keeps the games as played and prints the progress.
type match struct {
	cfg    *matchConfig
	pair   []engines.Engine
	stderr io.Writer // safe for the service's log and the sink at once
	db     *storage.DB
	tmp    string // the temporary database's directory; "" with --db
	t      *tournament.Tournament
	tty    bool

	mu      sync.Mutex
	played  []*tournament.Played     // by game number
	rows    [2]tournament.Standing   // the engines' stored standings, as of the last game
	result  tournament.PairResult    // the stored record between them, from the first's view
	decided *tournament.SPRTDecision // once the SPRT decided
	stopped int                      // games stopped unfinished when the SPRT decided
	aborts  map[int64]int            // by game index: how often it was aborted (to be played again)
	failed  error                    // why the match stopped early: a game aborted maxAttempts times
	stop    context.CancelFunc       // stops the match
	outer   context.Context          // the caller's: done when the match is interrupted
}

// maxAttempts is how often a game of the match is played at most: a game
// aborted (the server's own failure, cause server, is not the engines' and
// not scored) is played again, but a fault that recurs stops the match with
// the game and its cause rather than retrying it forever.
const maxAttempts = 3

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// open stores the engines and the match, in --db or a temporary database.
func (m *match) open(ctx context.Context, stderr io.Writer) error {
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 && stderr == io.Writer(os.Stderr) {
		m.tty = true
	}
	m.stderr = &lockedWriter{w: stderr}
	m.played = make([]*tournament.Played, m.cfg.games)
	for i := range m.rows {
		m.rows[i].Name = m.pair[i].Name
	}
	path := m.cfg.db
	if path == "" {
		dir, err := os.MkdirTemp("", "taikai-match-")
		if err != nil {
			return err
		}
		m.tmp, path = dir, filepath.Join(dir, "match.db")
	}
	db, err := storage.Open(ctx, path)
	if err != nil {
		return err
	}
	m.db = db
	for i := range m.pair {
		if err := db.MatchEngine(ctx, &m.pair[i]); err != nil {
			return fmt.Errorf("record engine %s: %w", m.pair[i].Name, err)
		}
	}
	set := m.cfg.set
	set.SPRT = m.cfg.sprt
	m.t = &tournament.Tournament{
		Name:     fmt.Sprintf("match %s vs %s", m.pair[0].Name, m.pair[1].Name),
		Kind:     tournament.KindMatch,
		Settings: set, Engines: []int64{m.pair[0].ID, m.pair[1].ID},
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
	if m.tmp != "" {
		os.RemoveAll(m.tmp)
	}
}

// play runs the match on a tournament.Service until its games are played,
// its SPRT decided, or ctx ends.
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
	svc := &tournament.Service{
		Store:  m.db,
		Runner: &tournament.Runner{Launcher: launcher, Affinity: m.cfg.affinity},
		Sink:   m, Logs: m.cfg.logs,
		// Its failures (a store that cannot write) are said; its progress
		// is the sink's.
		Log: slog.New(slog.NewTextHandler(m.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	start := time.Now()
	m.mu.Lock()
	m.outer = ctx
	ctx, m.stop = context.WithCancel(ctx)
	m.mu.Unlock()
	defer m.stop()
	_, err = svc.Run(ctx, m.t.ID)
	svc.Close()
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failed != nil {
		return m.failed
	}
	if err := m.read(); err != nil {
		return err
	}
	if m.tty {
		fmt.Fprintln(m.stderr)
	}
	fmt.Fprintf(m.stderr, "%d games in %v\n", m.rows[0].Games, time.Since(start).Round(time.Millisecond))
	if d := m.decided; d != nil {
		fmt.Fprintf(m.stderr, "SPRT: %s accepted (LLR %.2f, bounds %.2f, %.2f) after %d game pairs", d.Result, d.LLR, lowerBound(m.cfg.sprt), upperBound(m.cfg.sprt), m.pairs())
		if m.stopped > 0 {
			fmt.Fprintf(m.stderr, "; %d running games stopped and not counted", m.stopped)
		}
		fmt.Fprintln(m.stderr)
	}
	return nil
}

// Publish is the service's sink: it keeps each game as played, and prints
// the progress with the standings as stored. Move events are let go at
// once; a game's end is taken after the game is stored.
func (m *match) Publish(ev tournament.Event) {
	switch {
	case ev.Type == tournament.EventTournament && ev.SPRT != nil:
		m.mu.Lock()
		if m.decided == nil {
			d := *ev.SPRT
			m.decided = &d
		}
		m.mu.Unlock()
	case ev.Type == tournament.EventGameEnded && ev.Played != nil:
		m.ended(ev.Played)
	}
}

// ended takes a game that ended, and prints the progress.
func (m *match) ended(p *tournament.Played) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p.Outcome.Reason == games.ReasonAborted && m.decided != nil {
		m.stopped++ // stopped by the SPRT's decision: not part of the match
		return
	}
	if p.Outcome.Reason == games.ReasonAborted && m.failed == nil && m.outer != nil && m.outer.Err() == nil {
		// Aborted, not by an interruption: it is played again, at most
		// maxAttempts times in all.
		if m.aborts == nil {
			m.aborts = map[int64]int{}
		}
		m.aborts[p.Spec.Index]++
		if n := m.aborts[p.Spec.Index]; n >= maxAttempts {
			why := "aborted"
			if c := p.Outcome.Cause; c != "" {
				why += " (cause " + c + ")"
			}
			if p.Detail != "" {
				why += ": " + strings.ReplaceAll(p.Detail, "\n", "; ")
			}
			m.failed = fmt.Errorf("game %d (%s vs %s) was played %d times and never ended: the match stops; the last time: %s",
				p.Spec.Index+1, p.Spec.Black.Name, p.Spec.White.Name, n, why)
			m.stop()
		}
	}
	m.played[p.Spec.Index] = p
	if err := m.read(); err != nil {
		fmt.Fprintf(m.stderr, "taikai match: the standings did not read: %v\n", err)
		return
	}
	m.progress(p)
}

// read takes the engines' standings and their record from the store.
func (m *match) read() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, pairs, err := m.db.Standings(ctx, m.t.ID)
	if err != nil {
		return err
	}
	for _, r := range rows {
		for i, e := range m.pair {
			if r.EngineID == e.ID {
				r.Name = e.Name
				m.rows[i] = r
			}
		}
	}
	if len(pairs) == 1 {
		m.result = pairs[0].From(m.pair[0].ID)
	}
	return nil
}

// pairs is the number of complete game pairs.
func (m *match) pairs() int64 {
	var n int64
	for _, c := range m.result.Penta {
		n += c
	}
	return n
}

// estimate is the first engine's result: by game pairs when games come in
// pairs (pentanomial), else by games.
func (m *match) estimate() stats.Estimate {
	if m.cfg.set.Paired() {
		return stats.FromPenta(m.result.Penta)
	}
	return stats.FromWDL(stats.WDL{W: m.result.AWins, D: m.result.Draws, L: m.result.BWins})
}

// llr is the SPRT's log-likelihood ratio: where it decided, else as stored.
func (m *match) llr() float64 {
	if m.decided != nil {
		return m.decided.LLR
	}
	return tournament.PairLLR(m.cfg.sprt, m.cfg.set.Paired(), m.result)
}

// verdict is the SPRT's decision: H0, H1 or continue.
func (m *match) verdict() stats.Decision {
	if m.decided != nil {
		return m.decided.Result
	}
	return stats.Continue
}

func lowerBound(t *stats.SPRT) float64 { l, _ := t.Bounds(); return l }
func upperBound(t *stats.SPRT) float64 { _, u := t.Bounds(); return u }

func (m *match) progress(p *tournament.Played) {
	a, b := m.rows[0], m.rows[1]
	done := int(a.Games)
	line := fmt.Sprintf("%d/%d  %s %d - %d %s  draws %d", done, m.cfg.games, a.Name, a.Wins, b.Wins, b.Name, a.Draws)
	if est := m.estimate(); est.Games > 0 {
		line += fmt.Sprintf("  Elo %.1f +/- %s", est.Elo, eloText(est.EloError))
	}
	if m.cfg.sprt != nil {
		line += fmt.Sprintf("  LLR %.2f (%.2f, %.2f)", m.llr(), lowerBound(m.cfg.sprt), upperBound(m.cfg.sprt))
	}
	line += fmt.Sprintf("  (game %d: %s)", p.Spec.Index+1, gameEnd(p))
	switch {
	case m.tty:
		fmt.Fprintf(m.stderr, "\r\033[K%s", line)
	case done == m.cfg.games || done%max(1, min(m.cfg.games/20, 50)) == 0 || p.Outcome.Reason != games.ReasonNormal:
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
	case games.Drawn:
		who = "draw"
	default:
		who = string(r) + " wins"
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
	a, b := m.rows[0], m.rows[1]
	stand := []matchStandingJSON{
		{a.Name, a.Wins, a.Draws, a.Losses, float64(a.Wins) + float64(a.Draws)/2, m.lossesBy(a.Name)},
		{b.Name, b.Wins, b.Draws, b.Losses, float64(b.Wins) + float64(b.Draws)/2, m.lossesBy(b.Name)},
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
			out.Pentanomial = m.result.Penta[:]
		}
		if t := m.cfg.sprt; t != nil {
			lo, hi := t.Bounds()
			out.SPRT = &sprtJSON{LLR: round2(m.llr()), Lower: round2(lo), Upper: round2(hi), Result: m.verdict(),
				Elo0: t.Elo0, Elo1: t.Elo1, Alpha: t.Alpha, Beta: t.Beta, Model: t.Model}
		}
		for _, p := range m.played {
			if p != nil {
				out.Games = append(out.Games, m.gameJSON(p))
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
		fmt.Fprintf(w, "Game pairs (pentanomial, %s's points 0, 0.5, 1, 1.5, 2): %v\n", a.Name, m.result.Penta)
	}
	if t := m.cfg.sprt; t != nil {
		lo, hi := t.Bounds()
		fmt.Fprintf(w, "SPRT (%s): LLR %.2f (%.2f, %.2f): %s\n", t, m.llr(), lo, hi, m.verdict())
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
	if m.cfg.db != "" {
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
	LLR    float64        `json:"llr"`
	Lower  float64        `json:"lower"`
	Upper  float64        `json:"upper"`
	Result stats.Decision `json:"result"` // H0, H1 or continue
	Elo0   float64        `json:"elo0"`
	Elo1   float64        `json:"elo1"`
	Alpha  float64        `json:"alpha"`
	Beta   float64        `json:"beta"`
	Model  string         `json:"model"`
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

// gameJSON renders a played game as `taikai match --json` prints it: with
// its id in --db, if stored there.
func (m *match) gameJSON(p *tournament.Played) matchGameJSON {
	g := matchGameJSON{
		Black: p.Spec.Black.Name, White: p.Spec.White.Name, Result: p.Result(), Reason: p.Outcome.Reason,
		Moves: make([]games.MoveView, len(p.Moves)), Sandbox: p.Sandbox, Detail: p.Detail,
		Cause: p.Outcome.Cause, Refused: p.Refused,
	}
	if o := p.Spec.Opening; o != nil {
		g.Opening = &tournament.SuiteLine{Suite: o.Suite, Index: o.Index, Plies: min(len(o.Moves), len(p.Moves)), Text: o.Text}
	}
	if m.cfg.db != "" {
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
		g.Opening = &tournament.SuiteLine{Suite: o.Suite, Index: o.Index, Plies: min(len(o.Moves), len(p.Moves)), Text: o.Text}
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
