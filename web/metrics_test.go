package web_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/taikai-dev/taikai/tournament"
	"github.com/taikai-dev/taikai/web"
)

// A websocket is counted as a request (status 101) but its lifetime is not
// observed as a request's latency; ordinary requests are both.
func TestMetricsCountWebsocketsWithoutTimingThem(t *testing.T) {
	s := newAPIServer(t)
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(s.URL, "http")+"/ws/live", nil)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, _, err := conn.ReadMessage(); err != nil { // the snapshot
		t.Fatal(err)
	}
	conn.Close()
	// The server's handler returns, and is measured, once it sees the close.
	get := func() string {
		resp, err := http.Get(s.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		metrics := get()
		if strings.Contains(metrics, `taikai_http_requests_total{code="101",method="GET",route="/ws/live"} 1`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no websocket request counted in 10 s:\n%s", metrics)
		}
		time.Sleep(20 * time.Millisecond)
	}
	metrics := get() // the /metrics requests above are measured by now
	if strings.Contains(metrics, `taikai_http_request_duration_seconds_count{method="GET",route="/ws/live"}`) {
		t.Errorf("a websocket's lifetime was observed as request latency")
	}
	if !strings.Contains(metrics, `taikai_http_request_duration_seconds_count{method="GET",route="/metrics"}`) {
		t.Errorf("ordinary requests are not timed any more:\n%s", metrics)
	}
}

// A game played again from the start (its worker lost) is started twice and
// ends once: it counts as one running game, and none once over.
func TestMetricsRunningGameStartedAgain(t *testing.T) {
	m := web.NewMetrics()
	g := &tournament.Game{ID: 1, Game: "othello", Reason: "normal"}
	m.Publish(tournament.Event{Type: tournament.EventGameStarted, GameID: 1, Game: g})
	m.Publish(tournament.Event{Type: tournament.EventGameStarted, GameID: 1, Game: g, Again: true})
	running := func() string {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		for _, l := range strings.Split(rec.Body.String(), "\n") {
			if strings.HasPrefix(l, "taikai_games_running ") {
				return l
			}
		}
		return ""
	}
	if got := running(); got != "taikai_games_running 1" {
		t.Errorf("after a game started twice: %q, want 1", got)
	}
	m.Publish(tournament.Event{Type: tournament.EventGameEnded, GameID: 1, Game: g})
	if got := running(); got != "taikai_games_running 0" {
		t.Errorf("after it ended: %q, want 0", got)
	}
}
