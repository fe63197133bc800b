package web

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/tournament/cluster/fleet"
)

// WorkerQueue is what the workers view and /metrics need of the workers'
// queue: in serve, the cluster server (tournament/cluster.Server). An
// interface, so that web links no NATS client.
type WorkerQueue interface {
	// Workers lists the workers heard from lately, by name.
	Workers() []fleet.WorkerState
	// Stats counts the games waiting for or played by workers.
	Stats() fleet.Stats
	// Forget drops a worker from the list (its credentials were revoked).
	Forget(name string)
}

// WorkerCredentials are the workers' own NATS users as the admin's
// /api/workers/credentials and /api/workers/enroll manage them: in serve,
// tournament/cluster.Credentials.
type WorkerCredentials interface {
	// Names lists the workers that have credentials.
	Names() []string
	// Issue makes (or replaces) a worker's secret.
	Issue(name string) (string, error)
	// Enroll issues a secret to a new worker that has the join token.
	Enroll(join, name string) (string, error)
	// Revoke drops a worker's credentials; false when it had none.
	Revoke(name string) (bool, error)
}

// workerJSON is a worker as GET /api/workers and the workers page show it.
type workerJSON struct {
	Name        string    `json:"name"`
	Host        string    `json:"host"`
	Pid         int       `json:"pid"`
	Concurrency int       `json:"concurrency"`
	Running     int       `json:"running"`
	Games       []int64   `json:"games"` // the games it plays now
	Done        int64     `json:"done"`  // games it finished since it started
	Sandbox     string    `json:"sandbox"`
	LastSeen    time.Time `json:"last_seen"`
	// Silent: not heard from for three heartbeats (dead, or cut off).
	Silent bool `json:"silent"`
}

// workersJSON is GET /api/workers: whether games are played by workers, the
// workers heard from in the last ten minutes, and the queue's counts.
type workersJSON struct {
	Cluster     bool         `json:"cluster"`
	Workers     []workerJSON `json:"workers"`
	Queued      int          `json:"queued"`
	Running     int          `json:"running"`
	Redelivered int64        `json:"redelivered"`
}

func (s *Server) workersJSON() workersJSON {
	out := workersJSON{Workers: []workerJSON{}}
	if s.Workers == nil {
		return out
	}
	out.Cluster = true
	st := s.Workers.Stats()
	out.Queued, out.Running, out.Redelivered = st.Queued, st.Running, st.Redelivered
	for _, w := range s.Workers.Workers() {
		silent := time.Since(w.LastSeen) > 3*fleet.HeartbeatEvery
		games, running := w.Games, w.Running
		if games == nil || silent {
			// A silent worker's games are not its any more once its
			// timeout passes: show none rather than stale ones.
			games, running = []int64{}, 0
		}
		out.Workers = append(out.Workers, workerJSON{
			Name: w.Name, Host: w.Host, Pid: w.Pid, Concurrency: w.Concurrency, Running: running, Games: games, Done: w.Done,
			Sandbox: w.Sandbox, LastSeen: w.LastSeen.UTC(), Silent: silent,
		})
	}
	return out
}

func (s *Server) listWorkers(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.workersJSON())
}

// WatchWorkers adds the queue's counts to the metrics.
func (m *Metrics) WatchWorkers(c WorkerQueue) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "taikai_games_queued", Help: "Games waiting on the queue for a worker."},
			func() float64 { return float64(c.Stats().Queued) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "taikai_games_on_workers", Help: "Games being played by workers."},
			func() float64 { return float64(c.Stats().Running) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "taikai_games_redelivered_total", Help: "Games played again from the start because their worker went silent."},
			func() float64 { return float64(c.Stats().Redelivered) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "taikai_worker_results_discarded_total", Help: "Results that came from a worker after their game had been played again."},
			func() float64 { return float64(c.Stats().DiscardedLateResult) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "taikai_workers", Help: "Workers heard from in the last three heartbeats."},
			func() float64 {
				n := 0
				for _, w := range c.Workers() {
					if time.Since(w.LastSeen) <= 3*fleet.HeartbeatEvery {
						n++
					}
				}
				return float64(n)
			}),
	)
}

// Worker credentials (issue 36): each worker's own NATS user, issued and
// revoked by the admin. POST /api/workers/credentials {"name"} answers
// {"name", "secret"} (the secret shown this once: the worker's
// TAIKAI_WORKER_SECRET, with --name the same name); GET lists the names;
// DELETE /api/workers/credentials/{name} revokes one (its connections are
// closed). 409 when the server's NATS is not its own (serve --nats).
func (s *Server) workerCredentials(w http.ResponseWriter, r *http.Request) bool {
	if s.WorkerCredentials == nil {
		s.writeError(w, r, &games.Error{Code: games.EConflict, Message: fleet.ErrNoCredentials.Error()})
		return false
	}
	return true
}

func (s *Server) listWorkerCredentials(w http.ResponseWriter, r *http.Request) {
	if s.workerCredentials(w, r) {
		writeJSON(w, http.StatusOK, map[string][]string{"names": s.WorkerCredentials.Names()})
	}
}

// workerName reads the {"name"} of a request for a worker's credentials;
// false once it has answered an error.
func (s *Server) workerName(w http.ResponseWriter, r *http.Request) (string, bool) {
	var req struct {
		Name string `json:"name"`
	}
	if err := decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return "", false
	}
	if !s.workerCredentials(w, r) {
		return "", false
	}
	if !fleet.WorkerNames.MatchString(req.Name) {
		s.writeError(w, r, errInvalid("name", "name: want 1 to 64 letters, digits, - or _ (the worker's --name)"))
		return "", false
	}
	return req.Name, true
}

func (s *Server) issueWorkerCredentials(w http.ResponseWriter, r *http.Request) {
	name, ok := s.workerName(w, r)
	if !ok {
		return
	}
	secret, err := s.WorkerCredentials.Issue(name)
	if err != nil {
		s.writeError(w, r, errInvalid("name", err.Error()))
		return
	}
	writeJSON(w, http.StatusCreated, map[string]string{"name": name, "secret": secret})
}

// enrollWorker is a worker asking for credentials of its own (POST
// /api/workers/enroll {"name"} with Authorization: Bearer <join token>,
// taikai worker --enroll): answered as the admin's POST
// /api/workers/credentials, but only for a name without credentials. Wrong
// join tokens count as failed sign-ins of the address.
func (s *Server) enrollWorker(w http.ResponseWriter, r *http.Request) {
	addr, now := clientAddr(r), time.Now()
	if wait, blocked := s.signIns.blocked(addr, now); blocked {
		s.writeAuthError(w, r, tooMany("too many failed sign-ins from this address: try again in %s s", wait))
		return
	}
	join, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer realm="taikai"`)
		s.writeError(w, r, &games.Error{Code: games.EUnauthorized, Message: "this needs the workers' join token: Authorization: Bearer <" + fleet.JoinTokenEnv + ">", Field: "Authorization"})
		return
	}
	name, ok := s.workerName(w, r)
	if !ok {
		return
	}
	secret, err := s.WorkerCredentials.Enroll(join, name)
	switch {
	case errors.Is(err, fleet.ErrJoinToken):
		s.signIns.failed(addr, now)
		s.writeError(w, r, &games.Error{Code: games.EUnauthorized, Message: err.Error(), Field: "Authorization"})
	case errors.Is(err, fleet.ErrEnrollOff):
		s.writeError(w, r, &games.Error{Code: games.EForbidden, Message: err.Error()})
	case errors.Is(err, fleet.ErrNameIsUsed):
		s.writeError(w, r, &games.Error{Code: games.EConflict, Message: "worker " + name + ": " + err.Error(), Field: "name"})
	case err != nil:
		s.writeError(w, r, errInvalid("name", err.Error()))
	default:
		s.log().Info("a worker enrolled", "worker", name, "addr", r.RemoteAddr)
		writeJSON(w, http.StatusCreated, map[string]string{"name": name, "secret": secret})
	}
}

func (s *Server) revokeWorkerCredentials(w http.ResponseWriter, r *http.Request) {
	if !s.workerCredentials(w, r) {
		return
	}
	name := chi.URLParam(r, "name")
	ok, err := s.WorkerCredentials.Revoke(name)
	switch {
	case err != nil:
		s.writeError(w, r, err)
	case !ok:
		s.writeError(w, r, &games.Error{Code: games.ENotFound, Message: "no credentials for worker " + name})
	default:
		if s.Workers != nil {
			s.Workers.Forget(name)
		}
		w.WriteHeader(http.StatusNoContent)
	}
}
