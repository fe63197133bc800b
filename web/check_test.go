package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taikai-dev/taikai/internal/testkit"
)

// The pre-flight check (issue 21) plays one short game of an engine against
// a built-in and says what went wrong, naming the problem, for each of five
// broken engines; a working one passes.
func TestPreflightCheck(t *testing.T) {
	t.Parallel()
	s := newAPIServer(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Answers every TURN and ERROR with a move off the board.
	offBoard := `exec 3<>/dev/tcp/$0/$1; while read -r l <&3; do case $l in TURN*|ERROR*) echo "PUT 9 9" >&3;; esac; done`
	cases := []struct {
		name, engine string
		ok           bool
		want         []string // in the message
		log          string   // in the log, if set
	}{
		{"no-such-file", `{"name":"no-such-file","game":"othello","command":["./no-such-engine","{host}","{port}"]}`, false,
			[]string{"could not start", `program "./no-such-engine" was not found`, "no such file"}, ""},
		{"never-connects", `{"name":"never-connects","game":"othello","command":["sleep","30"],"connect_timeout_ms":2000}`, false,
			[]string{"never connected", "{host}"}, ""},
		{"illegal-first-move", fmt.Sprintf(`{"name":"illegal-first-move","game":"othello","command":["bash","-c",%q,"{host}","{port}"]}`, offBoard), false,
			[]string{"made 0 legal moves", "off_board"}, ""},
		{"crashes-at-once", `{"name":"crashes-at-once","game":"othello","command":["sh","-c","echo boom >&2; exit 3"]}`, false,
			[]string{"exited before its first move", "exit status 3"}, "boom"},
		{"wrong-protocol", fmt.Sprintf(`{"name":"wrong-protocol","game":"othello","protocol":"othello-board","command":[%q,"engine","othello-random","--protocol","othello-move","-H","{host}","-p","{port}"]}`, self), false,
			[]string{"before its first move", "does it speak othello-board"}, "bad START line"},
		{"works", `{"name":"works","game":"othello","builtin":"othello-greedy"}`, true,
			[]string{"played a whole game"}, ""},
	}
	g := testkit.Concurrent(t)
	defer g.Wait()
	for _, tc := range cases {
		g.Run(tc.name, func(t *testing.T) {
			e := s.post(t, "/api/engines", tc.engine)
			code, body := s.do(t, apiRequest{method: "POST", path: fmt.Sprintf("/api/engines/%v/check", e["id"])})
			if code != http.StatusOK {
				t.Fatalf("check: %d %s", code, body)
			}
			var res struct {
				OK         bool   `json:"ok"`
				Message    string `json:"message"`
				Reason     string `json:"reason"`
				LegalMoves int    `json:"legal_moves"`
				Log        string `json:"log"`
			}
			if err := json.Unmarshal(body, &res); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s\n%s", tc.name, res.Message, res.Log)
			if res.OK != tc.ok {
				t.Errorf("ok %v, want %v: %s", res.OK, tc.ok, body)
			}
			for _, w := range tc.want {
				if !strings.Contains(res.Message, w) {
					t.Errorf("message %q does not say %q", res.Message, w)
				}
			}
			if tc.log != "" && !strings.Contains(res.Log, tc.log) {
				t.Errorf("log %q lacks %q", res.Log, tc.log)
			}
		})
	}
	// Only the admin may run engines this way.
	if code, _ := s.do(t, apiRequest{method: "POST", path: "/api/engines/1/check", auth: "none"}); code != http.StatusUnauthorized {
		t.Errorf("check without the token: %d, want 401", code)
	}
}

// A Gomocup brain's check plays a rule pbrain can tell it, and tells it that
// rule: Gomoku's default (seed, double-three forbidden) cannot be said in
// INFO rule, and a brain told rule 0 (freestyle) that played a double-three
// failed its check (Carbon, 1 time in 4).
func TestPreflightCheckPbrainRule(t *testing.T) {
	python := testkit.Python(t) // skipped without it, except under CI=true
	brain, err := filepath.Abs("../engines/testdata/clients/pbrain_brain.py")
	if err != nil {
		t.Fatal(err)
	}
	s := newAPIServer(t)
	e := s.post(t, "/api/engines", fmt.Sprintf(`{"name":"py-brain","game":"gomoku","protocol":"pbrain","command":[%q,%q]}`, python, brain))
	code, body := s.do(t, apiRequest{method: "POST", path: fmt.Sprintf("/api/engines/%v/check", e["id"])})
	if code != http.StatusOK {
		t.Fatalf("check: %d %s", code, body)
	}
	var res struct {
		OK       bool              `json:"ok"`
		Message  string            `json:"message"`
		Settings map[string]string `json:"settings"`
		Log      string            `json:"log"`
	}
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	if !res.OK || res.Settings["rule"] != "freestyle" || !strings.Contains(res.Log, "[sent] INFO rule 0") {
		t.Errorf("check of a brain: ok %v, rule %q (want freestyle, told as INFO rule 0): %s\n%s", res.OK, res.Settings["rule"], res.Message, res.Log)
	}
}
