package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/tournament"
	"github.com/taikai-dev/taikai/tournament/cluster/fleet"
)

// Worker takes games from the queue and plays them, Concurrency at a time.
type Worker struct {
	Name        string
	Host        string
	Concurrency int
	Runner      *tournament.Runner // its Launcher decides which engines this worker may start
	// CacheDir keeps the engine directories fetched (emptied at start);
	// CacheEntries bounds how many (default 32).
	CacheDir     string
	CacheEntries int
	Log          *slog.Logger

	nc      *nats.Conn
	js      jetstream.JetStream
	cons    jetstream.Consumer
	cache   *cache
	ackWait time.Duration

	stop context.CancelCauseFunc

	mu    sync.Mutex
	games map[int64]*attempt
	done  atomic.Int64
}

// attempt is a game this worker plays.
type attempt struct {
	n        int
	cancel   context.CancelFunc
	byServer atomic.Bool // the server told it to stop: nothing is handed in
}

// Run works until ctx ends; then the games being played are handed back to
// the queue (another worker plays them at once) and Run returns.
func (w *Worker) Run(ctx context.Context, nc *nats.Conn) error {
	if w.Concurrency < 1 {
		return errors.New("concurrency must be at least 1")
	}
	if w.CacheEntries < 1 {
		w.CacheEntries = 32
	}
	w.nc, w.games = nc, map[int64]*attempt{}
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	w.js = js
	// The server creates the queue: a worker started first waits for it.
	var files jetstream.ObjectStore
	for waited := false; ; waited = true {
		err = func() error {
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			var err error
			if w.cons, err = js.Consumer(sctx, Stream, Consumer); err != nil {
				return err
			}
			files, err = js.ObjectStore(sctx, EngineBucket)
			return err
		}()
		if err == nil {
			break
		}
		if nc.IsClosed() {
			// Refused (credentials), not waiting: it never comes back.
			return fmt.Errorf("nats: connection closed: %v", nc.LastError())
		}
		if !waited {
			w.Log.Warn("waiting for the server's game queue in nats", "err", err)
		}
		if sleep(ctx, time.Second); ctx.Err() != nil {
			return nil
		}
	}
	w.ackWait = w.cons.CachedInfo().Config.AckWait
	if w.cache, err = newCache(w.CacheDir, w.CacheEntries, files, w.Log); err != nil {
		return fmt.Errorf("engine cache: %w", err)
	}
	sub, err := nc.Subscribe(cancelPrefix+"*", w.onCancel)
	if err != nil {
		return err
	}
	defer sub.Unsubscribe()
	w.Log.Info("worker ready", "name", w.Name, "concurrency", w.Concurrency, "ack_wait", w.ackWait, "sandbox", w.Runner.Launcher.SandboxState())

	// A connection NATS closed for good (its credentials revoked) stops the
	// worker: it would never take a game again.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	w.stop = stop
	var wg sync.WaitGroup
	wg.Go(func() { w.heartbeats(ctx) })
	for range w.Concurrency {
		wg.Go(func() { w.slot(ctx) })
	}
	wg.Wait()
	if err := context.Cause(ctx); errors.Is(err, errClosed) {
		return err
	}
	w.heartbeat(true)
	nc.FlushTimeout(5 * time.Second)
	return nil
}

// errClosed: NATS closed the worker's connection and will not take it back.
var errClosed = errors.New("nats closed the connection")

// slot plays one game at a time.
func (w *Worker) slot(ctx context.Context) {
	for ctx.Err() == nil {
		fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		batch, err := w.cons.Fetch(1, jetstream.FetchContext(fctx))
		if err != nil {
			cancel()
			if w.nc.IsClosed() {
				w.stop(fmt.Errorf("%w (its credentials revoked?): %v", errClosed, w.nc.LastError()))
				return
			}
			if ctx.Err() == nil {
				w.Log.Warn("no game taken from the queue", "err", err)
				sleep(ctx, time.Second)
			}
			continue
		}
		for m := range batch.Messages() {
			w.play(ctx, m)
		}
		cancel()
		if err := batch.Error(); err != nil && ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, nats.ErrTimeout) {
			w.Log.Warn("no game taken from the queue", "err", err)
			sleep(ctx, time.Second)
		}
	}
}

// play plays one delivery of a game from the queue.
func (w *Worker) play(ctx context.Context, m jetstream.Msg) {
	meta, err := m.Metadata()
	if err != nil {
		w.Log.Error("queue message without metadata: dropped", "err", err)
		m.Term()
		return
	}
	var job Job
	if err := json.Unmarshal(m.Data(), &job); err != nil {
		w.Log.Error("a game on the queue does not read: dropped", "err", err)
		m.TermWithReason("unreadable")
		return
	}
	n := int(meta.NumDelivered)
	log := w.Log.With("game", job.Game, "attempt", n)
	// Tell the queue it is still at work until it is done with it.
	keep, stopKeep := context.WithCancel(context.Background())
	defer stopKeep()
	go func() {
		t := time.NewTicker(max(w.ackWait/4, 100*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-t.C:
				m.InProgress()
			case <-keep.Done():
				return
			}
		}
	}()
	// A worker that cannot start these engines (no sandbox) leaves the game
	// to the others.
	for _, e := range []engines.Engine{job.Black, job.White} {
		if err := w.Runner.Launcher.Allowed(e); err != nil {
			log.Error("game left to other workers: this one may not start its engine", "engine", e.Name, "err", err)
			m.NakWithDelay(10 * time.Second)
			return
		}
	}
	answer, err := w.request(ctx, gameSubject(job.Game, "claim", w.Name), claimMsg{Attempt: n, Worker: w.Name}, 5*time.Second)
	if err != nil {
		m.Nak()
		return
	}
	if answer == answerBusy {
		// Handed out again while its worker still plays it (that worker's
		// acknowledgements did not reach the queue): the queue keeps it
		// until the server has that worker's result, or lost the worker.
		m.NakWithDelay(max(w.ackWait/4, time.Second))
		return
	}
	if answer != answerGo {
		log.Info("game not played: the server does not want it", "answer", answer)
		m.Term()
		return
	}

	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a := &attempt{n: n, cancel: cancel}
	w.mu.Lock()
	if old := w.games[job.Game]; old != nil {
		old.byServer.Store(true) // an older delivery to this same worker
		old.cancel()
	}
	w.games[job.Game] = a
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		if w.games[job.Game] == a {
			delete(w.games, job.Game)
		}
		w.mu.Unlock()
	}()

	spec, release, err := w.spec(gctx, &job, n)
	if err != nil {
		if ctx.Err() == nil {
			log.Error("game handed back: its engine files could not be had", "err", err)
		}
		m.NakWithDelay(5 * time.Second)
		return
	}
	defer release()
	log.Info("game started", "black", job.Black.Name, "white", job.White.Name)
	p := w.Runner.Play(gctx, spec)
	switch {
	case a.byServer.Load():
		log.Info("game stopped: the server no longer wants it")
		m.Term()
		return
	case ctx.Err() != nil:
		log.Info("game handed back to the queue: this worker stops")
		m.Nak()
		return
	}
	r := resultMsg{Attempt: n, Worker: w.Name, Played: p, Logs: w.putLogs(ctx, log, job.Game, n, p.Logs)}
	answer, err = w.request(ctx, gameSubject(job.Game, "result", w.Name), r, 10*time.Second)
	if err != nil {
		log.Info("game handed back to the queue: this worker stops before the server answered")
		m.Nak()
		return
	}
	w.done.Add(1)
	log.Info("game over", "result", p.Result(), "reason", p.Outcome.Reason, "plies", len(p.Moves), "server", answer)
	actx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.DoubleAck(actx); err != nil {
		log.Warn("game not acknowledged (the server has it; the queue may hand it out again, and the server then says gone)", "err", err)
	}
}

// putLogs puts a game attempt's engine logs (the files at paths, black's and
// white's, "" for none) in the worker's own bucket, which the server made at
// its first claim, and returns their object names ("" for a log not sent:
// the game is handed in without it).
func (w *Worker) putLogs(ctx context.Context, log *slog.Logger, game int64, attempt int, paths [2]string) [2]string {
	var names [2]string
	if paths == [2]string{} {
		return names
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	bucket := WorkerLogBucket(w.Name)
	store, err := w.js.ObjectStore(ctx, bucket)
	if err != nil {
		log.Warn("engine logs not sent", "bucket", bucket, "err", err)
		return names
	}
	for i, path := range paths {
		if path == "" {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			log.Warn("engine log not sent", "err", err)
			continue
		}
		name := logObject(game, attempt, colors[i])
		if _, err := store.PutBytes(ctx, name, data); err != nil {
			log.Warn("engine log not sent", "err", err)
			continue
		}
		names[i] = name
	}
	return names
}

// spec is the game to play: engine files fetched, logs in a directory of
// their own, moves sent to the server as they are made.
func (w *Worker) spec(ctx context.Context, job *Job, n int) (tournament.GameSpec, func(), error) {
	spec := tournament.GameSpec{
		ID: job.Game, TournamentID: job.Tournament, Index: job.Index, Black: job.Black, White: job.White,
		Settings: job.Settings, Seed: job.Seed, Tallies: job.Tallies, Pair: job.Pair, Slot: job.Slot, Opening: job.Opening,
	}
	if spec.Opening != nil {
		o := *spec.Opening
		o.Moves = job.OpeningMoves
		spec.Opening = &o
	}
	var releases []func()
	release := func() {
		for _, r := range releases {
			r()
		}
	}
	for i, hash := range job.Files {
		if hash == "" {
			continue
		}
		dir, rel, err := w.cache.get(ctx, hash)
		if err != nil {
			release()
			return spec, nil, err
		}
		releases = append(releases, rel)
		if i == 0 {
			spec.Black.Dir = dir
		} else {
			spec.White.Dir = dir
		}
	}
	if job.KeepLogs {
		dir, err := os.MkdirTemp("", "taikai-game-logs-")
		if err != nil {
			release()
			return spec, nil, err
		}
		spec.LogDir = dir
		releases = append(releases, func() { os.RemoveAll(dir) })
	}
	subject := gameSubject(job.Game, "tick", w.Name)
	spec.OnMove = func(t tournament.Tick) {
		data, err := json.Marshal(tickMsg{Attempt: n, Tick: t})
		if err == nil {
			w.nc.Publish(subject, data) // buffered while reconnecting
		}
	}
	return spec, release, nil
}

// request asks the server until it answers, or ctx ends.
func (w *Worker) request(ctx context.Context, subject string, v any, timeout time.Duration) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	for warned := false; ; {
		rctx, cancel := context.WithTimeout(ctx, timeout)
		reply, err := w.nc.RequestWithContext(rctx, subject, data)
		cancel()
		if err == nil {
			return string(reply.Data), nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if !warned {
			w.Log.Warn("the server does not answer; asking again", "subject", subject, "err", err)
			warned = true
		}
		sleep(ctx, 500*time.Millisecond)
	}
}

func (w *Worker) onCancel(m *nats.Msg) {
	id, err := strconv.ParseInt(m.Subject[len(cancelPrefix):], 10, 64)
	if err != nil {
		return
	}
	var c cancelMsg
	if json.Unmarshal(m.Data, &c) != nil {
		return
	}
	w.mu.Lock()
	a := w.games[id]
	w.mu.Unlock()
	if a != nil && (c.Before == 0 || a.n < c.Before) {
		a.byServer.Store(true)
		a.cancel()
	}
}

func (w *Worker) heartbeats(ctx context.Context) {
	t := time.NewTicker(fleet.HeartbeatEvery)
	defer t.Stop()
	for {
		w.heartbeat(false)
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

func (w *Worker) heartbeat(leaving bool) {
	h := fleet.Heartbeat{Name: w.Name, Host: w.Host, Pid: os.Getpid(), Concurrency: w.Concurrency, Done: w.done.Load(),
		Sandbox: w.Runner.Launcher.SandboxState(), Leaving: leaving}
	w.mu.Lock()
	for id := range w.games {
		h.Games = append(h.Games, id)
	}
	w.mu.Unlock()
	h.Running = len(h.Games)
	data, _ := json.Marshal(h)
	w.nc.Publish(workerPrefix+w.Name, data)
}

// CacheDirFor is a worker's default engine cache under its data directory.
func CacheDirFor(data, name string) string {
	return filepath.Join(data, "cache", name)
}
