package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/tournament"
	"github.com/taikai-dev/taikai/tournament/cluster/fleet"
)

// Server is the server's side: a tournament.Dispatcher that queues games for
// the workers and waits for them.
type Server struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	files   jetstream.ObjectStore
	shared  jetstream.ObjectStore // LogBucket, of workers of the releases before
	dataDir string
	ackWait time.Duration
	log     *slog.Logger
	subs    []*nats.Subscription

	mu      sync.Mutex
	pending map[int64]*pending
	workers map[string]*fleet.WorkerState
	stored  map[string]storedDir             // by directory
	logs    map[string]jetstream.ObjectStore // the workers' log buckets made, by worker

	redelivered atomic.Int64
	discarded   atomic.Int64
	rejected    atomic.Int64 // results refused: not the claim's worker, or not a legal game
	credentials *Credentials // nil: workers share the token
	// run tells this server's queue messages from another run's: game ids
	// come from the database, which may be new while NATS keeps its window
	// of message ids.
	run string
}

// pending is a game the server waits for.
type pending struct {
	spec    tournament.GameSpec
	attempt int       // the latest claimed attempt, 0 while queued
	worker  string    // the worker of that attempt
	seen    time.Time // when that worker last claimed it or said it plays it
	got     bool      // its result arrived (it is being stored)
	ticks   int       // moves shown of that attempt, at most maxTicks
	result  chan *resultMsg
	replies []*nats.Msg // result requests to answer once stored
}

// NewServer sets up the queue, its consumer (ackWait: how long a worker that
// went silent keeps its game) and the buckets on nc, and listens to the
// workers. Engine logs coming back go under dataDir.
func NewServer(ctx context.Context, nc *nats.Conn, ackWait time.Duration, dataDir string, log *slog.Logger) (*Server, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := setup(sctx, js, ackWait); err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	s := &Server{nc: nc, js: js, dataDir: dataDir, ackWait: ackWait, log: log, pending: map[int64]*pending{}, workers: map[string]*fleet.WorkerState{}, stored: map[string]storedDir{},
		logs: map[string]jetstream.ObjectStore{},
		run:  strconv.FormatInt(time.Now().UnixNano(), 36)}
	if s.files, err = js.ObjectStore(sctx, EngineBucket); err != nil {
		return nil, err
	}
	if s.shared, err = js.ObjectStore(sctx, LogBucket); err != nil {
		return nil, err
	}
	// One subscription for every game subject: claims, moves and results of
	// a game are handled in the order its worker sent them.
	sub, err := nc.Subscribe(gamePrefix+">", s.onGame)
	if err != nil {
		return nil, err
	}
	hb, err := nc.Subscribe(workerPrefix+"*", s.onHeartbeat)
	if err != nil {
		sub.Unsubscribe()
		return nil, err
	}
	sub.SetPendingLimits(-1, -1)
	s.subs = []*nats.Subscription{sub, hb}
	if err := nc.FlushTimeout(10 * time.Second); err != nil {
		s.Close()
		return nil, fmt.Errorf("nats: %w", err)
	}
	return s, nil
}

// UseCredentials makes the server take claims, moves, results and
// heartbeats only from workers with credentials, once one has them.
func (s *Server) UseCredentials(c *Credentials) {
	s.mu.Lock()
	s.credentials = c
	s.mu.Unlock()
}

func (s *Server) creds() *Credentials {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.credentials
}

// Close stops listening (the connection stays the caller's).
func (s *Server) Close() {
	for _, sub := range s.subs {
		sub.Unsubscribe()
	}
}

// Play queues the game and waits for a worker's result, or for ctx: then the
// workers are told to stop it and it ends aborted.
func (s *Server) Play(ctx context.Context, spec tournament.GameSpec) (*tournament.Played, func(bool)) {
	nothing := func(bool) {}
	job, err := s.job(ctx, spec)
	if err != nil {
		s.log.Error("game not queued", "game", spec.ID, "err", err)
		return aborted(spec, err.Error()), nothing
	}
	data, err := json.Marshal(job)
	if err != nil {
		return aborted(spec, err.Error()), nothing
	}
	p := &pending{spec: spec, result: make(chan *resultMsg, 1)}
	s.mu.Lock()
	s.pending[spec.ID] = p
	s.mu.Unlock()
	forget := func() {
		s.mu.Lock()
		delete(s.pending, spec.ID)
		s.mu.Unlock()
	}
	// The message id makes a publish retried after a lost answer queue the
	// game once (NATS drops a repeated id for the stream's Duplicates window).
	for {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := s.js.Publish(pctx, GamesSubject, data, jetstream.WithMsgID("game-"+strconv.FormatInt(spec.ID, 10)+"-"+s.run))
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			forget()
			return aborted(spec, "stopped before it was queued"), nothing
		}
		s.log.Warn("game not queued yet: nats does not take it; trying again", "game", spec.ID, "err", err)
		sleep(ctx, time.Second)
	}
	select {
	case r := <-p.result:
		played := s.played(spec, r)
		return played, func(ok bool) {
			answer := answerStored
			if !ok {
				answer = answerFailed
			}
			s.mu.Lock()
			delete(s.pending, spec.ID)
			replies := p.replies
			s.mu.Unlock()
			for _, m := range replies {
				if err := m.Respond([]byte(answer)); err != nil {
					// The worker asks again, and is answered gone.
					s.log.Warn("a worker not told its game's fate", "game", spec.ID, "answer", answer, "err", err)
				}
			}
			for _, name := range r.Logs {
				if name != "" {
					dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					if err := s.deleteLog(dctx, r.bucket, name); err != nil {
						s.log.Debug("a log object not deleted (the bucket's 24 h TTL removes it)", "bucket", r.bucket, "object", name, "err", err)
					}
					cancel()
				}
			}
		}
	case <-ctx.Done():
		forget()
		s.cancel(spec.ID, 0)
		return aborted(spec, "stopped"), nothing
	}
}

// job is the queue's message for a game; engine directories go to the
// object store first.
func (s *Server) job(ctx context.Context, spec tournament.GameSpec) (*Job, error) {
	j := &Job{
		Game: spec.ID, Tournament: spec.TournamentID, Index: spec.Index, Pair: spec.Pair, Slot: spec.Slot,
		Black: spec.Black, White: spec.White, Settings: spec.Settings, Seed: spec.Seed, Tallies: spec.Tallies,
		Opening: spec.Opening, KeepLogs: spec.LogDir != "",
	}
	if spec.Opening != nil {
		j.OpeningMoves = spec.Opening.Moves
	}
	for i, e := range []*struct {
		dir  *string
		name string
	}{{&j.Black.Dir, j.Black.Name}, {&j.White.Dir, j.White.Name}} {
		if *e.dir == "" || (i == 0 && spec.Black.Builtin != "") || (i == 1 && spec.White.Builtin != "") {
			*e.dir = ""
			continue
		}
		hash, err := s.putFiles(ctx, *e.dir)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// As when the server plays: the engine fails to start where its
			// directory is missing (and runs where the worker has it).
			s.log.Error("engine files not sent to the workers: the engine starts from its directory's path, if the worker has it", "engine", e.name, "dir", *e.dir, "err", err)
			continue
		}
		j.Files[i], *e.dir = hash, ""
	}
	return j, nil
}

// putFiles stores an engine directory by content, unless it is there.
// A directory is read and hashed again only when a file's name, size, mode
// or time changed since it was last stored (statDir): not for every game.
func (s *Server) putFiles(ctx context.Context, dir string) (string, error) {
	sig, err := statDir(dir)
	if err != nil {
		return "", fmt.Errorf("engine directory %s: %w", dir, err)
	}
	s.mu.Lock()
	known, ok := s.stored[dir]
	s.mu.Unlock()
	if ok && known.sig == sig {
		return known.hash, nil
	}
	data, hash, err := pack(dir)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if _, err := s.files.GetInfo(ctx, hash); err != nil {
		if _, err := s.files.PutBytes(ctx, hash, data); err != nil {
			return "", fmt.Errorf("store engine files: %w", err)
		}
		s.log.Info("engine files stored for the workers", "dir", dir, "hash", hash[:12], "bytes", len(data))
	}
	s.mu.Lock()
	s.stored[dir] = storedDir{sig: sig, hash: hash}
	s.mu.Unlock()
	return hash, nil
}

// storedDir is an engine directory as last put in the object store.
type storedDir struct{ sig, hash string }

// played is the game as the server stores it: the worker's record with the
// server's spec, and the logs written where the server keeps them.
func (s *Server) played(spec tournament.GameSpec, r *resultMsg) *tournament.Played {
	p := r.Played
	settings := p.Spec.Settings // with the defaults the worker's runner filled in
	p.Spec = spec
	p.Spec.Settings = settings
	p.Worker, p.Attempt = r.Worker, r.Attempt
	p.Logs = [2]string{}
	for i, name := range r.Logs {
		if name == "" || spec.LogDir == "" {
			continue
		}
		path := filepath.Join(spec.LogDir, tournament.LogName(spec.ID, colors[i]))
		if !filepath.IsAbs(path) {
			path = filepath.Join(s.dataDir, path)
		}
		if err := s.fetchLog(r.bucket, name, path); err != nil {
			s.log.Warn("engine log of a worker's game lost", "game", spec.ID, "bucket", r.bucket, "object", name, "err", err)
			continue
		}
		p.Logs[i] = path
	}
	return p
}

func (s *Server) fetchLog(bucket, name, path string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	store, err := s.logStore(ctx, bucket)
	if err != nil {
		return err
	}
	data, err := store.GetBytes(ctx, name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func (s *Server) deleteLog(ctx context.Context, bucket, name string) error {
	store, err := s.logStore(ctx, bucket)
	if err != nil {
		return err
	}
	return store.Delete(ctx, name)
}

// logStore is a log bucket: LogBucket, or a worker's (WorkerLogBucket),
// made with its bounds the first time.
func (s *Server) logStore(ctx context.Context, bucket string) (jetstream.ObjectStore, error) {
	if bucket == LogBucket {
		return s.shared, nil
	}
	s.mu.Lock()
	store := s.logs[bucket]
	s.mu.Unlock()
	if store != nil {
		return store, nil
	}
	store, err := s.js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: bucket, Storage: jetstream.FileStorage, TTL: logTTL, MaxBytes: logBucketBytes})
	if err != nil {
		return nil, fmt.Errorf("log bucket %s: %w", bucket, err)
	}
	s.mu.Lock()
	s.logs[bucket] = store
	s.mu.Unlock()
	return store, nil
}

// cancel tells the workers to stop a game's attempts before before (0: all).
func (s *Server) cancel(id int64, before int) {
	data, _ := json.Marshal(cancelMsg{Before: before})
	if err := s.nc.Publish(cancelPrefix+strconv.FormatInt(id, 10), data); err != nil {
		s.log.Warn("workers not told to stop a game", "game", id, "err", err)
	}
}

// Bounds of a game's ticks (issue 36, item 4): a tick is one move, small; a
// game shows at most maxTicks of them per attempt (more plies than any board
// of taikai's holds), the rest are dropped.
const (
	maxTickBytes = 4 << 10
	maxTicks     = 2000
)

// onGame handles a worker's claim, move or result; it never blocks, but for
// the first claim of a worker, while its log bucket is made.
func (s *Server) onGame(m *nats.Msg) {
	id, kind, from, err := parseGameSubject(m.Subject)
	if err != nil {
		return
	}
	if enforced, ok := s.creds().allows(from); enforced && !ok {
		// Only a worker with credentials (whose user may publish only on
		// its own subjects) plays once credentials are in use.
		s.rejected.Add(1)
		if m.Reply != "" {
			m.Respond([]byte(answerGone))
		}
		return
	}
	switch kind {
	case "claim":
		var c claimMsg
		if err := json.Unmarshal(m.Data, &c); err != nil {
			m.Respond([]byte(answerGone))
			return
		}
		if from != "" {
			c.Worker = from
			// Its logs go to its own bucket, made before it plays.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, err := s.logStore(ctx, WorkerLogBucket(from))
			cancel()
			if err != nil {
				s.log.Error("a worker's claim answered busy: its log bucket could not be made (it claims again later)", "game", id, "worker", from, "err", err)
				m.Respond([]byte(answerBusy))
				return
			}
		}
		m.Respond([]byte(s.claim(id, c)))
	case "tick":
		var t tickMsg
		if len(m.Data) > maxTickBytes || json.Unmarshal(m.Data, &t) != nil {
			return
		}
		s.mu.Lock()
		p := s.pending[id]
		live := p != nil && p.attempt == t.Attempt && !p.got && p.ticks < maxTicks && (from == "" || from == p.worker)
		if live {
			p.ticks++
		}
		s.mu.Unlock()
		if live && p.spec.OnMove != nil {
			p.spec.OnMove(t.Tick)
		}
	case "result":
		var r resultMsg
		if err := json.Unmarshal(m.Data, &r); err != nil || r.Played == nil {
			s.log.Error("a worker's result does not read", "game", id, "err", err)
			m.Respond([]byte(answerFailed))
			return
		}
		r.bucket = LogBucket
		if from != "" {
			r.Worker, r.bucket = from, WorkerLogBucket(from)
		}
		s.mu.Lock()
		p := s.pending[id]
		switch {
		case p == nil:
			s.mu.Unlock()
			s.log.Info("a worker's result for a game the server no longer waits for (stored, cancelled, or from before a restart) is discarded", "game", id, "worker", r.Worker, "attempt", r.Attempt)
			m.Respond([]byte(answerGone))
		case r.Attempt != p.attempt:
			s.mu.Unlock()
			s.discarded.Add(1)
			s.log.Warn("late result of a game played again since: discarded", "game", id, "worker", r.Worker, "attempt", r.Attempt, "current_attempt", p.attempt)
			m.Respond([]byte(answerStale))
		case r.Worker != p.worker:
			// Only the worker that claimed this attempt hands in its result.
			s.mu.Unlock()
			s.rejected.Add(1)
			s.log.Warn("a result from a worker that does not hold the game's claim: refused", "game", id, "from", r.Worker, "claimed_by", p.worker, "attempt", r.Attempt)
			m.Respond([]byte(answerStale))
		default:
			if err := tournament.CheckRecord(p.spec.Settings, r.Played.Record); err != nil {
				// Not a game the rules allow: stored as aborted, and played
				// again, never scored.
				s.rejected.Add(1)
				s.log.Error("a worker's result does not replay under the rules: the game is played again", "game", id, "worker", r.Worker, "attempt", r.Attempt, "err", err)
				r = resultMsg{Attempt: r.Attempt, Worker: r.Worker, Played: aborted(p.spec, "the worker's result was refused: "+err.Error())}
			}
			p.replies = append(p.replies, m)
			first := !p.got
			p.got = true
			s.mu.Unlock()
			if first {
				p.result <- &r
			}
		}
	}
}

// claim answers a worker that took a game from the queue.
func (s *Server) claim(id int64, c claimMsg) string {
	s.mu.Lock()
	p := s.pending[id]
	if p == nil {
		s.mu.Unlock()
		return answerGone
	}
	switch {
	case c.Attempt < p.attempt || p.got:
		s.mu.Unlock()
		return answerStale
	case c.Attempt == p.attempt:
		s.mu.Unlock()
		if c.Worker != p.worker {
			return answerStale // another worker's attempt
		}
		return answerGo // the same worker asking again
	}
	again := p.attempt > 0
	lost := p.worker
	if again && c.Worker != p.worker && time.Since(p.seen) < s.ackWait {
		// Its worker still plays it (the queue hands a game out again
		// only when its worker stopped telling it so for ackWait; heartbeats
		// say the same to the server): a worker naming a newer attempt
		// does not take it over (issue 36).
		s.mu.Unlock()
		return answerBusy
	}
	p.attempt, p.worker, p.ticks, p.seen = c.Attempt, c.Worker, 0, time.Now()
	s.mu.Unlock()
	if again {
		s.redelivered.Add(1)
		s.log.Warn("game played again from the start: its worker went silent", "game", id, "lost_worker", lost, "worker", c.Worker, "attempt", c.Attempt)
		s.cancel(id, c.Attempt)
		if p.spec.OnRestart != nil {
			p.spec.OnRestart()
		}
	}
	return answerGo
}

func (s *Server) onHeartbeat(m *nats.Msg) {
	var h fleet.Heartbeat
	name := m.Subject[len(workerPrefix):]
	if json.Unmarshal(m.Data, &h) != nil || h.Name != name {
		return
	}
	if enforced, ok := s.creds().allows(name); enforced && !ok {
		return // not a worker with credentials: no worker is made of it
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	for _, id := range h.Games {
		if p := s.pending[id]; p != nil && p.worker == h.Name {
			p.seen = now
		}
	}
	if h.Leaving {
		delete(s.workers, h.Name)
		return
	}
	s.workers[h.Name] = &fleet.WorkerState{Heartbeat: h, LastSeen: time.Now()}
}

// Forget drops a worker from the list (its credentials were revoked).
func (s *Server) Forget(name string) {
	s.mu.Lock()
	delete(s.workers, name)
	s.mu.Unlock()
}

// Workers lists the workers heard from in the last ten minutes, by name.
func (s *Server) Workers() []fleet.WorkerState {
	s.mu.Lock()
	defer s.mu.Unlock()
	var list []fleet.WorkerState
	for name, w := range s.workers {
		if time.Since(w.LastSeen) > 10*time.Minute {
			delete(s.workers, name)
			continue
		}
		list = append(list, *w)
	}
	slices.SortFunc(list, func(a, b fleet.WorkerState) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return list
}

// Stats counts the games the server waits for.
func (s *Server) Stats() fleet.Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := fleet.Stats{Redelivered: s.redelivered.Load(), DiscardedLateResult: s.discarded.Load(), Rejected: s.rejected.Load()}
	for _, p := range s.pending {
		if p.attempt == 0 {
			st.Queued++
		} else {
			st.Running++
		}
	}
	return st
}

func aborted(spec tournament.GameSpec, detail string) *tournament.Played {
	now := time.Now()
	return &tournament.Played{Spec: spec, Record: games.Record{Outcome: games.Outcome{Reason: games.ReasonAborted}}, StartedAt: now, EndedAt: now, Detail: detail}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
