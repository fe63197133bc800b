// Package cluster plays a server's games on `taikai worker` processes over
// NATS JetStream. The server puts each game on a durable work queue; a worker
// takes it, claims it from the server, plays it with its own Runner and
// sandbox, streams the moves back on core NATS subjects, hands in the result
// and acknowledges the queue's message only once the server has answered that
// it stored the game. A worker that dies or is cut off stops telling the queue
// it is still at work; after the consumer's ack wait the game is delivered
// again, to another worker, and played from the start. The delivery count is
// the attempt: the server keeps the latest claimed attempt of each game it
// waits for and discards moves and results of older ones.
//
// Subjects:
//
//	taikai.games                 the work queue (stream TAIKAI_GAMES), one Job per message
//	taikai.game.<id>.claim.<w>   worker w → server request: claim an attempt; answer go, stale or gone
//	taikai.game.<id>.tick.<w>    worker w → server: one move of the game, in order
//	taikai.game.<id>.result.<w>  worker w → server request: the played game; answered once stored
//	taikai.cancel.<id>           server → workers: stop the game's attempts before Before (0: all)
//	taikai.worker.<name>         worker → server: a Heartbeat every HeartbeatEvery
//
// A worker with its own credentials (Credentials) may publish only on
// subjects that end in its name; the server takes that name, not the one in
// a message, as the sender's.
//
// Engine directories travel through the object store bucket taikai-engines,
// named by the SHA-256 of their archive. Engine logs come back through the
// worker's own bucket, taikai-logs-<w> (WorkerLogBucket), which the server
// makes at the worker's first claim: a worker may write only its own and read
// no other's (a participant's engine output is private). Workers of the
// releases before put them in taikai-logs.
package cluster

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/crypto/bcrypt"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/tournament"
	"github.com/taikai-dev/taikai/tournament/cluster/fleet"
)

// Names in NATS.
const (
	Stream       = "TAIKAI_GAMES"
	GamesSubject = "taikai.games"
	Consumer     = "taikai-workers"
	EngineBucket = "taikai-engines"
	LogBucket    = "taikai-logs" // logs of workers of the releases before WorkerLogBucket
	gamePrefix   = "taikai.game."
	cancelPrefix = "taikai.cancel."
	workerPrefix = "taikai.worker."
)

// Answers of the server to a claim or a result.
const (
	answerGo     = "go"     // claim: play it
	answerStale  = "stale"  // a newer attempt of the game was claimed
	answerBusy   = "busy"   // claim: its worker still plays the game; back to the queue for later
	answerGone   = "gone"   // the server does not wait for this game (stored, cancelled, or from before a restart)
	answerStored = "stored" // result: stored
	answerFailed = "failed" // result: not stored (the server plays the game again itself)
)

// Job is a game on the work queue: everything a worker needs to play it.
type Job struct {
	Game         int64                 `json:"game"`
	Tournament   int64                 `json:"tournament"`
	Index        int64                 `json:"index"`
	Pair         int64                 `json:"pair,omitempty"`
	Slot         string                `json:"slot,omitempty"`
	Black        engines.Engine        `json:"black"`
	White        engines.Engine        `json:"white"`
	Files        [2]string             `json:"files"` // content hashes of black's and white's directories in EngineBucket; "" for none
	Settings     tournament.Settings   `json:"settings"`
	Seed         uint64                `json:"seed"`
	Tallies      [2]engines.Tally      `json:"tallies"`
	Opening      *tournament.SuiteLine `json:"opening,omitempty"`
	OpeningMoves []games.Move          `json:"opening_moves,omitempty"`
	KeepLogs     bool                  `json:"keep_logs,omitempty"`
}

type claimMsg struct {
	Attempt int    `json:"attempt"`
	Worker  string `json:"worker"`
}

type tickMsg struct {
	Attempt int             `json:"attempt"`
	Tick    tournament.Tick `json:"tick"`
}

type resultMsg struct {
	Attempt int                `json:"attempt"`
	Worker  string             `json:"worker"`
	Played  *tournament.Played `json:"played"`
	Logs    [2]string          `json:"logs"` // black's and white's log objects in the worker's bucket, "" for none

	// bucket is where the server reads Logs: the bucket of the worker
	// named by the subject, or LogBucket for a worker of a release before
	// (no name in the subject).
	bucket string
}

type cancelMsg struct {
	Before int `json:"before"` // attempts before this one stop; 0: every attempt
}

// TokenEnv is the environment variable that holds the NATS token of the
// server and the workers (never a flag: it would show in ps).
const TokenEnv = "TAIKAI_NATS_TOKEN"

// Connect dials NATS at url (a comma-separated list of servers), with the
// token from TAIKAI_NATS_TOKEN if set, and reconnects forever after a loss.
// The first dial is retried in the background: a worker may start before
// NATS does.
func Connect(url, name string, log *slog.Logger, extra ...nats.Option) (*nats.Conn, error) {
	opts := []nats.Option{
		nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(500 * time.Millisecond),
		nats.RetryOnFailedConnect(true), nats.ReconnectBufSize(32 << 20),
		// A connection whose network went away without a word (a cable, a
		// `docker network disconnect`, a new address) is noticed by missed
		// pings, not by TCP: after 3 pings 5 s apart, not nats.go's 2 x 2
		// minutes, so that a worker cut off and back plays again soon.
		nats.PingInterval(5 * time.Second), nats.MaxPingsOutstanding(3),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("nats: disconnected; reconnecting", "err", err)
			}
		}),
		nats.ReconnectHandler(func(c *nats.Conn) { log.Info("nats: reconnected", "server", c.ConnectedUrlRedacted()) }),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			if errors.Is(err, nats.ErrAuthorization) {
				log.Error("nats refused this client's credentials: once the server issued worker credentials, a worker needs its own (TAIKAI_WORKER_SECRET for its --name) and the shared token is the server's alone; a revoked worker stays out", "err", err)
				return
			}
			log.Error("nats", "err", err)
		}),
	}
	if t := os.Getenv(TokenEnv); t != "" && len(extra) == 0 {
		opts = append(opts, nats.Token(t))
	}
	nc, err := nats.Connect(url, append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("nats %s: %w", url, err)
	}
	return nc, nil
}

// Embedded is a NATS server with JetStream inside the taikai binary. The
// taikai server connects to it as its own user (ServerAuth); workers with
// the shared token, or anonymous ones when there is no token, are let in as
// before until the first worker credential is issued (Credentials).
//
// Who may connect is decided by taikai itself (nats-server's custom client
// authentication, gate), not by reloading nats-server's users: a reload
// closed the server's own connection at the first credential when the
// server was open, and made connected workers forget which replies they
// may send (their acknowledgements of games taken before it).
type Embedded struct {
	ns       *server.Server
	password string // of serverUser
	token    string
	join     string // TAIKAI_WORKER_JOIN_TOKEN: workers enroll, and need their own credentials from the start

	mu      sync.Mutex
	workers map[string]string // name → bcrypt hash of its secret
}

// MinJoinToken is the shortest join token the server takes: it is the one
// secret that makes a new worker.
const MinJoinToken = 24

// StartEmbedded starts a NATS server with JetStream listening on addr
// (host:port), keeping its streams under dir; clients need the token from
// TAIKAI_NATS_TOKEN if it is set.
func StartEmbedded(addr, dir string) (*Embedded, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--nats-embedded %q: want host:port: %w", addr, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("--nats-embedded %q: bad port", addr)
	}
	// The server does not say why it cannot listen: try first.
	if port != 0 {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("embedded nats: %w", err)
		}
		ln.Close()
	} else {
		port = server.RANDOM_PORT // nats takes 0 for its default, 4222
	}
	pw := make([]byte, 32)
	rand.Read(pw)
	e := &Embedded{password: hex.EncodeToString(pw), token: os.Getenv(TokenEnv), join: os.Getenv(fleet.JoinTokenEnv)}
	ns, err := server.NewServer(&server.Options{
		ServerName: "taikai", Host: host, Port: port, JetStream: true, StoreDir: dir,
		NoSigs: true, MaxPayload: 8 << 20, CustomClientAuthentication: gate{e},
	})
	if err != nil {
		return nil, fmt.Errorf("embedded nats: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("embedded nats on %s did not start within 30 s", addr)
	}
	e.ns = ns
	return e, nil
}

// open says whether clients without a worker's credentials are let in (with
// the shared token, if there is one): while no worker has credentials and
// there is no join token. The caller holds e.mu.
func (e *Embedded) open() bool { return len(e.workers) == 0 && e.join == "" }

// gate decides who connects to the embedded server, and as whom: the
// taikai server with its password (every permission), a worker with its
// secret (workerPermissions), and, while the server is open, anyone with
// the shared token or, without one, anyone (as anonymousUser, every
// permission, as before credentials).
type gate struct{ e *Embedded }

func (g gate) Check(c server.ClientAuthentication) bool {
	if c.Kind() != server.CLIENT {
		return false
	}
	o, e := c.GetOpts(), g.e
	if o.Username == serverUser {
		if subtle.ConstantTimeCompare([]byte(o.Password), []byte(e.password)) != 1 {
			return false
		}
		c.RegisterUser(&server.User{Username: serverUser})
		return true
	}
	e.mu.Lock()
	hash, worker := e.workers[o.Username]
	e.mu.Unlock()
	// The hash is compared without the lock, so that clients sending wrong
	// secrets do not hold up the others; the user is registered under it,
	// as long as the hash is still the same, so that setWorkers sees it.
	if worker && bcrypt.CompareHashAndPassword([]byte(hash), []byte(o.Password)) != nil {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if now, ok := e.workers[o.Username]; worker || ok {
		if now != hash {
			return false // given, replaced or revoked meanwhile: the client tries again
		}
		c.RegisterUser(&server.User{Username: o.Username, Permissions: workerPermissions(o.Username)})
		return true
	}
	if !e.open() || (e.token != "" && subtle.ConstantTimeCompare([]byte(o.Token), []byte(e.token)) != 1) {
		return false
	}
	c.RegisterUser(&server.User{Username: anonymousUser})
	return true
}

// setWorkers gives the server the workers' users (name → bcrypt hash). The
// connections of a worker revoked or given a new secret are closed, and at
// the first credential those of the shared token or anonymous clients;
// nobody else's.
func (e *Embedded) setWorkers(workers map[string]string) error {
	e.mu.Lock()
	old := e.workers
	e.workers = workers
	open := e.open()
	e.mu.Unlock()
	// Every client that is let in from now on is checked against the new
	// users; those let in before have their user named (gate registers it
	// under e.mu), so Connz lists whom they are.
	conns, err := e.ns.Connz(&server.ConnzOptions{Username: true, Limit: 1 << 30})
	if err != nil {
		return fmt.Errorf("embedded nats: %w", err)
	}
	for _, ci := range conns.Conns {
		u := ci.AuthorizedUser
		hash, had := old[u]
		if (u == anonymousUser && !open) || (had && workers[u] != hash) {
			e.ns.DisconnectClientByID(ci.Cid) // an error: it is gone already
		}
	}
	return nil
}

// ServerAuth is how the taikai server connects to its embedded NATS server.
func (e *Embedded) ServerAuth() nats.Option { return nats.UserInfo(serverUser, e.password) }

// URL is the address clients dial.
func (e *Embedded) URL() string { return e.ns.ClientURL() }

// Close stops the server and waits until it has.
func (e *Embedded) Close() {
	e.ns.Shutdown()
	e.ns.WaitForShutdown()
}

// setup creates (or updates) the stream, the workers' consumer and the
// buckets. ackWait is how long a worker that stopped telling the queue it is
// at work keeps its game.
func setup(ctx context.Context, js jetstream.JetStream, ackWait time.Duration) error {
	if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name: Stream, Subjects: []string{GamesSubject}, Retention: jetstream.WorkQueuePolicy,
		Storage: jetstream.FileStorage, Duplicates: 10 * time.Minute,
	}); err != nil {
		return fmt.Errorf("stream %s: %w", Stream, err)
	}
	if _, err := js.CreateOrUpdateConsumer(ctx, Stream, jetstream.ConsumerConfig{
		Durable: Consumer, AckPolicy: jetstream.AckExplicitPolicy, AckWait: ackWait, MaxDeliver: -1,
		MaxAckPending: 100000,
	}); err != nil {
		return fmt.Errorf("consumer %s: %w", Consumer, err)
	}
	if _, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: EngineBucket, Storage: jetstream.FileStorage}); err != nil {
		return fmt.Errorf("bucket %s: %w", EngineBucket, err)
	}
	if _, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: LogBucket, Storage: jetstream.FileStorage, TTL: logTTL}); err != nil {
		return fmt.Errorf("bucket %s: %w", LogBucket, err)
	}
	return nil
}

// gameSubject is taikai.game.<id>.<kind>.<worker>: a worker's own subject of
// a game (its user may publish only on its own).
func gameSubject(id int64, kind, worker string) string {
	return gamePrefix + strconv.FormatInt(id, 10) + "." + kind + "." + worker
}

// parseGameSubject splits taikai.game.<id>.<kind>[.<worker>] (a worker of an
// older release leaves out its name).
func parseGameSubject(subj string) (id int64, kind, worker string, err error) {
	rest, ok := strings.CutPrefix(subj, gamePrefix)
	if !ok {
		return 0, "", "", errors.New("not a game subject")
	}
	idText, rest, ok := strings.Cut(rest, ".")
	if !ok {
		return 0, "", "", errors.New("no kind")
	}
	kind, worker, _ = strings.Cut(rest, ".")
	id, err = strconv.ParseInt(idText, 10, 64)
	return id, kind, worker, err
}

// colors are the sides in the order of two-element arrays.
var colors = [2]games.Color{games.Black, games.White}

// WorkerLogBucket is the object store bucket of a worker's engine logs:
// taikai-logs-<name>. Worker names (fleet.WorkerNames) are valid bucket names
// and never a prefix of another's subjects ($O.taikai-logs-<name>.>).
func WorkerLogBucket(name string) string { return LogBucket + "-" + name }

// Bounds of a worker's log bucket: objects nobody took (a result never handed
// in) go after a day, and a worker fills at most logBucketBytes of the
// server's disk (twice the logs of 256 games at once, two of
// engines.DefaultLogLimit each; the server deletes a game's logs once
// stored). A put beyond it fails, and the game is stored without that log.
const (
	logTTL         = 24 * time.Hour
	logBucketBytes = 1 << 30
)

// logObject names a game attempt's log of one colour in LogBucket.
func logObject(game int64, attempt int, c games.Color) string {
	return fmt.Sprintf("g%d-a%d-%s", game, attempt, c)
}
