package web_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// waiterClient is engines/testdata/clients/refused_waiter.py: its move is
// refused, and it waits.
func waiterClient(tb testing.TB) string {
	tb.Helper()
	b, err := os.ReadFile("../engines/testdata/clients/refused_waiter.py")
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func needPython(tb testing.TB) {
	tb.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatal("python3 is missing, and CI=true")
		}
		tb.Skip("no python3")
	}
}

// TestCheckTimeoutAfterRefusal (issue 37, item 3): a client whose move is
// refused and who then waits is told first that its move was refused, which
// and why, then that it stopped answering; the game's record and the
// engine's log say so too.
func TestCheckTimeoutAfterRefusal(t *testing.T) {
	t.Parallel()
	needPython(t)
	s := startSite(t)
	_, token := newMember(t, s, "Tanaka")
	m := member{s: s, token: token}
	var eng engineAnswer
	if code := m.upload(t, "POST", "/api/engines", map[string]any{"name": "waiter", "game": "othello", "protocol": "othello-board", "command": []string{"python3", "client.py", "{host}", "{port}"}},
		map[string]string{"client.py": waiterClient(t)}, &eng); code != http.StatusCreated {
		t.Fatalf("upload: %d", code)
	}
	raw := runCheck(t, m, eng.ID)
	var c struct {
		OK            bool           `json:"ok"`
		Message       string         `json:"message"`
		MessageKey    string         `json:"message_key"`
		MessageParams map[string]any `json:"message_params"`
		Reason        string         `json:"reason"`
		Log           string         `json:"log"`
		Refused       *struct{ Color, Move, Why string }
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	if c.OK || c.Reason != "timeout" {
		t.Fatalf("the check: %s", raw)
	}
	if !strings.HasPrefix(c.Message, "Your engine's move a1 was refused (no_flip), then it sent no other move") {
		t.Errorf("the check's message does not start with the refused move: %q", c.Message)
	}
	if c.MessageKey != "timeout_after_refused" || c.MessageParams["move"] != "a1" || c.MessageParams["why"] != "no_flip" {
		t.Errorf("the check's facts: %q %v", c.MessageKey, c.MessageParams)
	}
	if c.Refused == nil || c.Refused.Move != "a1" || c.Refused.Why != "no_flip" || c.Refused.Color != "black" {
		t.Errorf("the check's refused move: %+v", c.Refused)
	}
	if !strings.Contains(c.Log, "[sent] ERROR 2") || !strings.Contains(c.Log, "refused: ERROR 2") {
		t.Errorf("the engine's log does not hold the ERROR the server sent:\n%s", c.Log)
	}

	// In a tournament's game: the cause and the refused move.
	var rnd engineAnswer
	s.mustCall(t, "POST", "/api/engines", map[string]any{"name": "rnd", "game": "othello", "builtin": "othello-random"}, &rnd)
	var tr tournamentAnswer
	s.mustCall(t, "POST", "/api/tournaments", map[string]any{"name": "refusal", "game": "othello", "engines": []int64{eng.ID, rnd.ID}, "games_per_pair": 1, "move_time_ms": 1500, "start": true}, &tr)
	waitAPI(t, "the tournament", time.Minute, func() bool {
		s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d", tr.ID), nil, &tr)
		return tr.Status == "finished"
	})
	var gl struct {
		Games []struct {
			ID      int64  `json:"id"`
			Reason  string `json:"reason"`
			Cause   string `json:"cause"`
			Refused *struct{ Color, Move, Why string }
		} `json:"games"`
	}
	s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d/games", tr.ID), nil, &gl)
	if len(gl.Games) != 1 {
		t.Fatalf("%d games", len(gl.Games))
	}
	g := gl.Games[0]
	var one struct {
		Cause   string `json:"cause"`
		Refused *struct{ Color, Move, Why string }
	}
	s.mustCall(t, "GET", fmt.Sprintf("/api/games/%d", g.ID), nil, &one)
	if g.Reason != "timeout" || one.Cause != "after_refused" || one.Refused == nil || one.Refused.Why == "" {
		t.Errorf("the game: %+v %+v", g, one)
	}
}

// TestCheckNamesTheOneFolder (issue 37, item 9): an archive of one folder
// (myothello/run.sh) with a command that runs ./run.sh is told that its
// files are in that folder, and how to fix it.
func TestCheckNamesTheOneFolder(t *testing.T) {
	s := startSite(t)
	_, token := newMember(t, s, "Mori")
	m := member{s: s, token: token}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "myothello/run.sh", Method: zip.Deflate})
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, studentEngine(t, "othello-random")["run.sh"])
	zw.Close()
	var eng engineAnswer
	if code := m.upload(t, "POST", "/api/engines", map[string]any{"name": "folder-bot", "game": "othello", "protocol": "othello-move", "command": studentCommand},
		map[string]string{"myothello.zip": buf.String()}, &eng); code != http.StatusCreated {
		t.Fatalf("upload: %d", code)
	}
	raw := runCheck(t, m, eng.ID)
	var c struct {
		OK         bool   `json:"ok"`
		Message    string `json:"message"`
		MessageKey string `json:"message_key"`
	}
	json.Unmarshal(raw, &c)
	if c.OK || c.MessageKey != "one_folder" || !strings.Contains(c.Message, "in the folder myothello/") || !strings.Contains(c.Message, "myothello/run.sh") {
		t.Errorf("the check: %s", raw)
	}
}

// runCheck runs an engine's check as m and returns its answer.
func runCheck(tb testing.TB, m member, id int64) json.RawMessage {
	tb.Helper()
	var raw json.RawMessage
	if code := m.call(tb, "POST", fmt.Sprintf("/api/engines/%d/check", id), nil, &raw); code != http.StatusOK {
		tb.Fatalf("check: %d %s", code, raw)
	}
	return raw
}
