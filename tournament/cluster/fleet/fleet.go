// Package fleet is what the taikai server knows of its workers, without
// NATS: a worker's heartbeat and state, the queue's counts, worker names and
// the errors of enrolling. The cluster package speaks NATS and fills these;
// the web package shows them and so links no NATS client.
package fleet

import (
	"errors"
	"regexp"
	"time"
)

// HeartbeatEvery is how often a worker tells the server it is alive; a
// worker not heard from for three is silent.
const HeartbeatEvery = 2 * time.Second

// Heartbeat is what a worker tells the server every HeartbeatEvery, on
// taikai.worker.<name>.
type Heartbeat struct {
	Name        string  `json:"name"`
	Host        string  `json:"host"`
	Pid         int     `json:"pid"`
	Concurrency int     `json:"concurrency"`
	Running     int     `json:"running"`
	Done        int64   `json:"done"`
	Games       []int64 `json:"games"`   // the games it plays now
	Sandbox     string  `json:"sandbox"` // on or off
	Leaving     bool    `json:"leaving,omitempty"`
}

// WorkerState is a worker as the server last heard of it.
type WorkerState struct {
	Heartbeat
	LastSeen time.Time `json:"last_seen"`
}

// Stats are the counts /metrics shows.
type Stats struct {
	Queued, Running     int   // games waiting for a worker, and being played
	Redelivered         int64 // games played again because their worker went silent
	DiscardedLateResult int64 // results that came after their game was played again
	Rejected            int64 // results refused: not from the claim's worker, or not a legal game
}

// JoinTokenEnv holds the secret with which a worker asks the server for
// credentials of its own (cluster.Credentials.Enroll). On the server it turns
// enrollment on and makes its embedded NATS server take workers' own
// credentials only, from the start; on a worker it goes with --enroll.
const JoinTokenEnv = "TAIKAI_WORKER_JOIN_TOKEN"

// Errors of enrolling a worker.
var (
	ErrEnrollOff  = errors.New("enrollment is off: the server has no " + JoinTokenEnv)
	ErrJoinToken  = errors.New("wrong join token")
	ErrNameIsUsed = errors.New("a worker of this name has credentials already: revoke them first, or choose another --name")
)

// ErrNoCredentials: the NATS server is not the server's own, so it cannot
// take users.
var ErrNoCredentials = errors.New("per-worker credentials need the server's embedded NATS server (--nats-embedded); an external NATS server keeps its own users")

// WorkerNames are valid worker names: one NATS subject token.
var WorkerNames = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
