package main

import (
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
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/tournament"
)

const matchUsage = `usage: taikai match [flags] ENGINE ENGINE

Plays games between two engines without a server, colours alternating, and
prints the result (like cutechess-cli). Each ENGINE is a built-in name
(othello-greedy) or a spec in one argument:

  "name=seed cmd='java OthelloClient.java {host}' dir=../shared/clients port=46000 protocol=othello-board"

cmd is split like a shell would and run without one; placeholders: {host}
{port} {color} {colorflag} {colornum} {name} {time_ms} {game_id} {rule} {size}.

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
}

func parseMatch(args []string, stderr io.Writer) (*matchConfig, []engines.Engine, error) {
	c := &matchConfig{}
	fs := flag.NewFlagSet("match", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, matchUsage); fs.PrintDefaults() }
	fs.StringVar(&c.set.Game, "game", "othello", "`game`: "+strings.Join(games.Names(), ", "))
	fs.StringVar(&c.set.Rule, "rule", "", "gomoku `rule`: seed (default), freestyle, standard, renju")
	fs.IntVar(&c.set.Size, "size", 0, "gomoku board `size`, 5-25 (default 15)")
	fs.IntVar(&c.games, "games", 2, "`number` of games")
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
	fs.DurationVar(&c.connect, "connect-timeout", engines.DefaultConnectTimeout, "time an engine has to connect after it starts")
	fs.IntVar(&c.concurrency, "concurrency", 1, "games played at once")
	fs.BoolVar(&c.affinity, "affinity", false, affinityUsage)
	fs.BoolVar(&c.sandbox, "sandbox", false, "run both engines in the engine sandbox, as serve does (default: unsandboxed, as an author testing their own programs)")
	fs.StringVar(&c.db, "db", "", "SQLite `file` to store the games in")
	fs.StringVar(&c.logs, "logs", "", "`directory` for the engines' output (default: next to --db, else discarded)")
	fs.BoolVar(&c.json, "json", false, "print the games and the result as JSON")
	fs.Uint64Var(&c.seed, "seed", 0, "random `seed` for server-made moves (default: random)")
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return nil, nil, fmt.Errorf("want two engines, got %d", fs.NArg())
	}
	if c.games < 1 {
		return nil, nil, errors.New("--games: want at least 1")
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
	var pair []engines.Engine
	for i, spec := range fs.Args() {
		e, err := engines.ParseSpec(spec, c.set.Game)
		if err != nil {
			return nil, nil, fmt.Errorf("engine %d: %w", i+1, err)
		}
		pair = append(pair, e)
	}
	if pair[0].Name == pair[1].Name {
		pair[1].Name += " (2)"
	}
	if c.seed == 0 {
		c.seed = rand.Uint64()
	}
	if c.logs == "" && c.db != "" {
		c.logs = filepath.Join(filepath.Dir(c.db), "logs")
	}
	return c, pair, nil
}

// matchGameJSON is a game in `taikai match --json` (DESIGN.md).
type matchGameJSON struct {
	Black  string           `json:"black"`
	White  string           `json:"white"`
	Result string           `json:"result"`
	Reason string           `json:"reason"`
	ID     int64            `json:"id,omitempty"`
	Moves  []games.MoveView `json:"moves"`
	// Sandbox is the sandbox state the game ran under: on (--sandbox) or off.
	Sandbox string `json:"sandbox"`
	// Detail says why an engine could not start.
	Detail string `json:"detail,omitempty"`
}

type matchStandingJSON struct {
	Name   string  `json:"name"`
	Wins   int64   `json:"wins"`
	Draws  int64   `json:"draws"`
	Losses int64   `json:"losses"`
	Points float64 `json:"points"`
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
	m.report(stdout)
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
	runner := &tournament.Runner{Launcher: launcher, Affinity: m.cfg.affinity}
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
	return firstErr
}

// game plays game i: even games give the first engine black.
func (m *match) game(ctx context.Context, runner *tournament.Runner, i int) error {
	a, b := 0, 1
	if i%2 == 1 {
		a, b = 1, 0
	}
	spec := tournament.GameSpec{
		ID: int64(i + 1), Index: int64(i), Black: m.pair[a], White: m.pair[b],
		Settings: m.cfg.set, Seed: m.cfg.seed + uint64(i),
	}
	m.mu.Lock()
	spec.Tallies = [2]engines.Tally{m.records[a], m.records[b]}
	m.mu.Unlock()
	if m.db != nil {
		id, err := m.db.StartGame(ctx, m.t, tournament.Pairing{Index: int64(i), Black: a, White: b}, m.pair[a].ID, m.pair[b].ID, spec.Seed)
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
	m.played[i] = p
	if p.Outcome.Reason != games.ReasonAborted {
		m.done++
		m.tally(a, b, p)
	}
	m.progress(i, p)
	return nil
}

// tally adds a finished game to the engines' records.
func (m *match) tally(black, white int, p *tournament.Played) {
	switch p.Outcome.Winner {
	case games.Black:
		m.records[black].Wins++
		m.records[white].Losses++
	case games.White:
		m.records[white].Wins++
		m.records[black].Losses++
	}
}

func (m *match) progress(i int, p *tournament.Played) {
	a, b := m.records[0], m.records[1]
	draws := m.done - a.Wins - a.Losses
	line := fmt.Sprintf("%d/%d  %s %d - %d %s  draws %d  (game %d: %s)",
		m.done, m.cfg.games, a.Name, a.Wins, b.Wins, b.Name, draws, i+1, gameEnd(p))
	switch {
	case m.tty:
		fmt.Fprintf(m.stderr, "\r\033[K%s", line)
	case m.done == m.cfg.games || m.done%max(1, m.cfg.games/20) == 0 || p.Outcome.Reason != games.ReasonNormal:
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
		{a.Name, int64(a.Wins), draws, int64(a.Losses), float64(a.Wins) + float64(draws)/2},
		{b.Name, int64(b.Wins), draws, int64(b.Losses), float64(b.Wins) + float64(draws)/2},
	}
	diff, margin := tournament.EloDiff(int64(a.Wins), draws, int64(a.Losses))
	if m.cfg.json {
		out := struct {
			Games     []matchGameJSON     `json:"games"`
			Standings []matchStandingJSON `json:"standings"`
			EloDiff   *float64            `json:"elo_diff"`
			EloError  *float64            `json:"elo_error"`
		}{Games: []matchGameJSON{}, Standings: stand, EloDiff: finite(diff), EloError: finite(margin)}
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
	fmt.Fprintf(w, "Elo difference (%s - %s): %s +/- %s\n", a.Name, b.Name, eloText(diff), eloText(margin))
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
	seen := map[string]bool{}
	for _, p := range m.played {
		if p != nil && p.Detail != "" && !seen[p.Detail] && len(seen) < 3 {
			seen[p.Detail] = true
			fmt.Fprintf(w, "Not started: %s\n", p.Detail)
		}
	}
	if m.db != nil {
		fmt.Fprintf(w, "Stored as tournament %d in %s\n", m.t.ID, m.db.Path())
	}
}

func finite(f float64) *float64 {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil
	}
	r := math.Round(f*10) / 10
	return &r
}

func eloText(f float64) string {
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
	}
	if p.Spec.TournamentID != 0 {
		g.ID = p.Spec.ID
	}
	for i, mv := range p.Moves {
		g.Moves[i] = mv.View(p.Spec.Settings.Game, i+1)
	}
	return g
}
