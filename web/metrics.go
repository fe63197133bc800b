package web

import (
	"bufio"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/tournament"
)

// Metrics are taikai's Prometheus metrics, on a registry of their own. They are
// fed by the tournament events (a Sink) and by the HTTP middleware, labelled by
// route pattern, never by raw path.
type Metrics struct {
	reg           *prometheus.Registry
	games         *prometheus.CounterVec
	running       prometheus.Gauge
	moves         prometheus.Counter
	timeouts      prometheus.Counter
	engineFailure *prometheus.CounterVec
	requests      *prometheus.CounterVec
	latency       *prometheus.HistogramVec
}

// NewMetrics registers the metrics.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		games: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taikai_games_total", Help: "Games played to their end, by game and end reason.",
		}, []string{"game", "reason"}),
		running: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "taikai_games_running", Help: "Games being played now.",
		}),
		moves: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "taikai_moves_total", Help: "Moves played, including passes and moves the server made.",
		}),
		timeouts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "taikai_timeouts_total", Help: "Moves not made in time (whether the game was lost or the server moved).",
		}),
		engineFailure: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taikai_engine_failures_total", Help: "Engines that crashed or never connected, by reason.",
		}, []string{"reason"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "taikai_http_requests_total", Help: "HTTP requests by route pattern, method and status.",
		}, []string{"route", "method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "taikai_http_request_duration_seconds", Help: "HTTP request latency by route pattern.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route", "method"}),
	}
	m.reg.MustRegister(m.games, m.running, m.moves, m.timeouts, m.engineFailure, m.requests, m.latency,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Publish counts a tournament event. It only touches atomic counters.
func (m *Metrics) Publish(ev tournament.Event) {
	switch ev.Type {
	case tournament.EventGameStarted:
		if !ev.Again {
			m.running.Inc()
		}
	case tournament.EventMove:
		m.moves.Inc()
	case tournament.EventGameEnded:
		m.running.Dec()
		m.games.WithLabelValues(ev.Game.Game, ev.Game.Reason).Inc()
		if p := ev.Played; p != nil {
			m.timeouts.Add(float64(p.Violations[0]["timeout"] + p.Violations[1]["timeout"]))
			if r := p.Outcome.Reason; r == games.ReasonCrash || r == games.ReasonNoConnect {
				m.engineFailure.WithLabelValues(r).Inc()
			}
		}
	}
}

type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.code = code
	r.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Hijack hands the connection to a websocket upgrade.
func (r *statusRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	r.code = http.StatusSwitchingProtocols
	return http.NewResponseController(r.ResponseWriter).Hijack()
}

func (m *Metrics) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(rec, r)
		route := "unmatched"
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			route = rc.RoutePattern()
		}
		m.requests.WithLabelValues(route, r.Method, strconv.Itoa(rec.code)).Inc()
		// A websocket's lifetime is not a request's latency: it would fill the
		// top bucket with minutes-long sessions.
		if rec.code != http.StatusSwitchingProtocols {
			m.latency.WithLabelValues(route, r.Method).Observe(time.Since(start).Seconds())
		}
	})
}
