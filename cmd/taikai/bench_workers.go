package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/storage"
	"github.com/taikai-dev/taikai/tournament"
	"github.com/taikai-dev/taikai/tournament/cluster"
)

// WorkerFigures are the games per second of one worker count, beside the
// same games played by the server itself at the same concurrency.
type WorkerFigures struct {
	Workers        int     `json:"workers"`
	Games          int     `json:"games"`
	GamesPerSec    float64 `json:"games_per_sec"`
	ServeGamesPerS float64 `json:"serve_games_per_sec"`   // serve alone, concurrency = workers
	VsServe        float64 `json:"vs_serve"`              // workers / serve alone
	VsOneWorker    float64 `json:"vs_one_worker_times_n"` // workers / (one worker's rate x workers)
}

// benchWorkerCounts are the worker processes the workers part starts.
var benchWorkerCounts = []int{1, 2, 4}

// workers: whole games per second played by 1, 2 and 4 `taikai worker`
// processes of concurrency 1 through an embedded NATS server, beside the same
// games played by the server itself (the same Service, its own Runner) at the
// same concurrency, measured in alternation. Engines answer after 20 ms; both
// sides run them unsandboxed, so that the figures are the cost of the queue.
func (b *bench) workers(ctx context.Context, r *BenchResult) error {
	engine := b.timed("--delay", "20ms")
	var one float64
	for _, n := range benchWorkerCounts {
		games := b.n(12) * n
		b.step("workers: %d games on %d worker(s), and on serve alone", games, n)
		alone, err := b.serviceRun(ctx, fmt.Sprintf("alone-%d", n), engine, games, n, nil)
		if err != nil {
			return fmt.Errorf("serve alone: %w", err)
		}
		onWorkers, err := b.clusterRun(ctx, engine, games, n)
		if err != nil {
			return fmt.Errorf("%d workers: %w", n, err)
		}
		f := WorkerFigures{Workers: n, Games: games, GamesPerSec: round(onWorkers, 2), ServeGamesPerS: round(alone, 2), VsServe: round(onWorkers/alone, 2)}
		if n == 1 {
			one = onWorkers
		}
		f.VsOneWorker = round(onWorkers/(one*float64(n)), 2)
		r.Workers = append(r.Workers, f)
	}
	return nil
}

// serviceRun plays games between two copies of engine as one tournament of a
// Service (with dispatch, on workers) and returns the games per second from
// its start to its end.
func (b *bench) serviceRun(ctx context.Context, name string, engine engines.Engine, games, concurrency int, dispatch tournament.Dispatcher) (float64, error) {
	path := filepath.Join(b.dir, "workers-"+name+".db")
	os.Remove(path)
	db, err := storage.Open(ctx, path)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	t := &tournament.Tournament{Name: name, Settings: tournament.Settings{Game: "othello", MoveTimeMS: 5000}, GamesPerPair: games, Concurrency: concurrency, Seed: 1}
	for i := range 2 {
		e := engine
		e.Name = fmt.Sprintf("delay-20ms-%d", i)
		if err := db.CreateEngine(ctx, &e); err != nil {
			return 0, err
		}
		t.Engines = append(t.Engines, e.ID)
	}
	if err := t.Validate(); err != nil {
		return 0, err
	}
	if err := db.CreateTournament(ctx, t); err != nil {
		return 0, err
	}
	svc := &tournament.Service{Store: db, Runner: b.runner, Dispatch: dispatch}
	defer svc.Close()
	start := time.Now()
	if _, err := svc.Start(ctx, t.ID); err != nil {
		return 0, err
	}
	deadline := time.Now().Add(time.Duration(games)*10*time.Second + time.Minute)
	for {
		cur, err := db.Tournament(ctx, t.ID)
		if err != nil {
			return 0, err
		}
		if cur.Status == tournament.StatusFinished {
			took := time.Since(start)
			if cur.FinishedGames != int64(games) {
				return 0, fmt.Errorf("%d of %d games finished", cur.FinishedGames, games)
			}
			return float64(games) / took.Seconds(), nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return 0, fmt.Errorf("not finished in time: %d of %d games", cur.FinishedGames, games)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// clusterRun plays the games on n worker processes through an embedded NATS.
func (b *bench) clusterRun(ctx context.Context, engine engines.Engine, games, n int) (float64, error) {
	dir := filepath.Join(b.dir, "workers-"+strconv.Itoa(n))
	os.RemoveAll(dir)
	nats, err := cluster.StartEmbedded("127.0.0.1:0", filepath.Join(dir, "nats"))
	if err != nil {
		return 0, err
	}
	defer nats.Close()
	quiet := slog.New(slog.DiscardHandler)
	nc, err := cluster.Connect(nats.URL(), "taikai-bench", quiet)
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	srv, err := cluster.NewServer(ctx, nc, 30*time.Second, dir, quiet)
	if err != nil {
		return 0, err
	}
	defer srv.Close()
	var procs []*exec.Cmd
	defer func() {
		for _, p := range procs {
			stopWorker(p)
		}
		for _, p := range procs {
			done := make(chan struct{})
			go func() { p.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				p.Process.Kill()
				<-done
			}
		}
	}()
	for i := range n {
		name := fmt.Sprintf("bench-%d", i+1)
		cmd := exec.Command(b.self, "worker", "--nats", nats.URL(), "--name", name, "--concurrency", "1", "--sandbox", "off",
			"--data", filepath.Join(dir, name))
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		procs = append(procs, cmd)
	}
	// Every worker is there before the clock starts.
	for deadline := time.Now().Add(time.Minute); len(srv.Workers()) < n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return 0, fmt.Errorf("%d of %d workers heard from in a minute", len(srv.Workers()), n)
		}
	}
	return b.serviceRun(ctx, "workers-"+strconv.Itoa(n), engine, games, n, srv)
}
