package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// member is a participant's (or the admin's) side of the API: requests with
// their bearer token.
type member struct {
	s     *site
	token string
}

func (m member) call(tb testing.TB, method, path string, body, out any) int {
	tb.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, m.s.URL+path, rd)
	if err != nil {
		tb.Fatal(err)
	}
	if m.token != "" {
		req.Header.Set("Authorization", "Bearer "+m.token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return m.s.do(tb, req, out)
}

// upload posts (or puts, to replace) an engine with files as multipart.
func (m member) upload(tb testing.TB, method, path string, meta any, files map[string]string, out any) int {
	tb.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	b, _ := json.Marshal(meta)
	mw.WriteField("meta", string(b))
	for name, content := range files {
		w, _ := mw.CreateFormFile("file", name)
		io.WriteString(w, content)
	}
	mw.Close()
	req, _ := http.NewRequest(method, m.s.URL+path, &buf)
	req.Header.Set("Authorization", "Bearer "+m.token)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return m.s.do(tb, req, out)
}

type invitedAnswer struct {
	Participants []struct {
		ID         int64  `json:"id"`
		Name       string `json:"name"`
		Status     string `json:"status"`
		Invitation struct {
			Code string `json:"code"`
			URL  string `json:"url"`
			Path string `json:"path"`
		} `json:"invitation"`
	} `json:"participants"`
}

// postCSV sends a CSV of names as the admin.
func postCSV(tb testing.TB, s *site, csv string, out any) int {
	tb.Helper()
	req, _ := http.NewRequest("POST", s.URL+"/api/participants", strings.NewReader(csv))
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "text/csv")
	return s.do(tb, req, out)
}

// accept accepts an invitation over the API and returns the token.
func accept(tb testing.TB, s *site, code string) string {
	tb.Helper()
	var a struct {
		Token       string `json:"token"`
		Participant struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		} `json:"participant"`
	}
	if code := (member{s: s}).call(tb, "POST", "/api/invitations/accept", map[string]string{"code": code}, &a); code != http.StatusOK || a.Token == "" {
		tb.Fatalf("accept the invitation: %d %+v", code, a)
	}
	return a.Token
}

// newMember creates a participant named name from a CSV, accepts its
// invitation and returns its id and token.
func newMember(tb testing.TB, s *site, name string) (int64, string) {
	tb.Helper()
	var inv invitedAnswer
	if code := postCSV(tb, s, name+"\n", &inv); code != http.StatusCreated {
		tb.Fatalf("create %s: %d", name, code)
	}
	return inv.Participants[0].ID, accept(tb, s, inv.Participants[0].Invitation.Code)
}

// studentEngine is an uploaded engine's files: a script that runs the
// built-in random player as an othello-move client (this test binary stands
// in for taikai).
func studentEngine(tb testing.TB, player string) map[string]string {
	tb.Helper()
	self, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	return map[string]string{"run.sh": fmt.Sprintf("#!/bin/sh\nexec %q engine %s --protocol othello-move -H \"$1\" -p \"$2\"\n", self, player)}
}

var studentCommand = []string{"./run.sh", "{host}", "{port}"}

type checkAnswer struct {
	Status  string `json:"status"`
	Version int    `json:"version"`
	Result  *struct {
		OK      bool   `json:"ok"`
		Message string `json:"message"`
		Log     string `json:"log"`
	} `json:"result"`
}

// waitCheck waits for an engine's background check to be done.
func waitCheck(tb testing.TB, m member, id int64, version int) checkAnswer {
	tb.Helper()
	var c checkAnswer
	waitAPI(tb, fmt.Sprintf("the check of engine %d version %d", id, version), 120*time.Second, func() bool {
		c = checkAnswer{}
		code := m.call(tb, "GET", fmt.Sprintf("/api/engines/%d/check", id), nil, &c)
		return code == http.StatusOK && c.Status == "done" && c.Version == version
	})
	return c
}

// classGames runs a finished tournament of two games between the engines
// a and b and returns its games.
func classGames(t *testing.T, s *site, a, b int64) (gl struct{ Games []gameAnswer }) {
	t.Helper()
	var tr tournamentAnswer
	s.mustCall(t, "POST", "/api/tournaments", map[string]any{"name": "class", "game": "othello", "engines": []int64{a, b}, "games_per_pair": 2, "move_time_ms": 2000, "start": true}, &tr)
	waitAPI(t, "the class tournament", 120*time.Second, func() bool {
		s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d", tr.ID), nil, &tr)
		return tr.Status == "finished"
	})
	s.mustCall(t, "GET", fmt.Sprintf("/api/tournaments/%d/games", tr.ID), nil, &gl)
	if len(gl.Games) != 2 {
		t.Fatalf("%d games, want 2", len(gl.Games))
	}
	return gl
}

// The acceptance test of issue 21 through the API: the admin creates two
// participants (one by JSON, one from a CSV); each accepts the invitation,
// uploads an engine (checked by itself), and can neither change nor read the
// logs of the other's; a replacement keeps the history; the admin locks
// submissions and a late upload is refused naming the deadline; a tournament
// of both engines runs.
func TestParticipantsEndToEnd(t *testing.T) {
	s := startSite(t)
	admin := member{s: s, token: s.token}
	anon := member{s: s}

	var one invitedAnswer
	if code := admin.call(t, "POST", "/api/participants", map[string]string{"name": "Alice"}, &one); code != http.StatusCreated || len(one.Participants) != 1 {
		t.Fatalf("create Alice: %d %+v", code, one)
	}
	var two invitedAnswer
	if code := postCSV(t, s, "name\nBob\n", &two); code != http.StatusCreated || len(two.Participants) != 1 || two.Participants[0].Name != "Bob" {
		t.Fatalf("create Bob from a CSV: %d %+v", code, two)
	}
	alice0, bob0 := one.Participants[0], two.Participants[0]
	if alice0.Status != "invited" || !strings.HasPrefix(alice0.Invitation.URL, s.URL+"/invite/") || alice0.Invitation.Path != "/invite/"+alice0.Invitation.Code {
		t.Errorf("Alice's invitation %+v, want a link to %s/invite/<code>", alice0, s.URL)
	}
	alice := member{s: s, token: accept(t, s, alice0.Invitation.Code)}
	bob := member{s: s, token: accept(t, s, bob0.Invitation.Code)}
	if code := anon.call(t, "POST", "/api/invitations/accept", map[string]string{"code": alice0.Invitation.Code}, nil); code != http.StatusNotFound {
		t.Errorf("an invitation used twice: %d, want 404", code)
	}
	// A participant cannot create participants.
	if code := alice.call(t, "POST", "/api/participants", map[string]string{"name": "Mallory"}, nil); code != http.StatusForbidden {
		t.Errorf("a participant creating a participant: %d, want 403", code)
	}

	// Each uploads an engine; it is theirs, and checked in the background.
	var ea, eb engineAnswer
	if code := alice.upload(t, "POST", "/api/engines", map[string]any{"name": "alice-bot", "game": "othello", "protocol": "othello-move", "command": studentCommand}, studentEngine(t, "othello-greedy"), &ea); code != http.StatusCreated {
		t.Fatalf("Alice's upload: %d", code)
	}
	if code := bob.upload(t, "POST", "/api/engines", map[string]any{"name": "bob-bot", "game": "othello", "protocol": "othello-move", "command": studentCommand}, studentEngine(t, "othello-random"), &eb); code != http.StatusCreated {
		t.Fatalf("Bob's upload: %d", code)
	}
	var got struct {
		Owner *struct {
			Name string `json:"name"`
		} `json:"owner"`
		Version int `json:"version"`
	}
	anon.call(t, "GET", fmt.Sprintf("/api/engines/%d", ea.ID), nil, &got)
	if got.Owner == nil || got.Owner.Name != "Alice" || got.Version != 1 {
		t.Errorf("alice-bot: owner %+v version %d, want Alice's version 1", got.Owner, got.Version)
	}
	if c := waitCheck(t, alice, ea.ID, 1); c.Result == nil || !c.Result.OK {
		t.Errorf("the check of Alice's engine: %+v, want a passed check", c.Result)
	} else {
		t.Logf("the check of Alice's engine: %s", c.Result.Message)
	}

	// Neither can change, check, or read the private parts of the other's.
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"DELETE", fmt.Sprintf("/api/engines/%d", eb.ID), nil},
		{"PUT", fmt.Sprintf("/api/engines/%d", eb.ID), map[string]any{"command": studentCommand}},
		{"POST", fmt.Sprintf("/api/engines/%d/check", eb.ID), nil},
		{"GET", fmt.Sprintf("/api/engines/%d/check", eb.ID), nil},
	} {
		var ae errorAnswer
		if code := alice.call(t, tc.method, tc.path, tc.body, &ae); code != http.StatusForbidden {
			t.Errorf("Alice: %s %s: %d %+v, want 403", tc.method, tc.path, code, ae.Error)
		}
	}
	if code := anon.call(t, "GET", fmt.Sprintf("/api/engines/%d/check", ea.ID), nil, nil); code != http.StatusUnauthorized {
		t.Errorf("nobody reading Alice's check: %d, want 401", code)
	}
	// The versions are public, as the engine's command is: its page lists them.
	if code := anon.call(t, "GET", fmt.Sprintf("/api/engines/%d/versions", eb.ID), nil, nil); code != http.StatusOK {
		t.Errorf("nobody reading Bob's versions: %d, want 200", code)
	}

	// A new version keeps the old one in the history.
	var replaced engineAnswer
	if code := alice.upload(t, "PUT", fmt.Sprintf("/api/engines/%d", ea.ID), map[string]any{"protocol": "othello-move", "command": studentCommand}, studentEngine(t, "othello-random"), &replaced); code != http.StatusOK || replaced.Name != "alice-bot" {
		t.Fatalf("Alice's replacement: %d %+v", code, replaced)
	}
	var vs struct {
		Versions []struct {
			Version    int    `json:"version"`
			UploadedBy string `json:"uploaded_by"`
			FilesHash  string `json:"files_hash"`
		} `json:"versions"`
	}
	alice.call(t, "GET", fmt.Sprintf("/api/engines/%d/versions", ea.ID), nil, &vs)
	if len(vs.Versions) != 2 || vs.Versions[0].Version != 2 || vs.Versions[0].UploadedBy != "Alice" || vs.Versions[0].FilesHash == "" || vs.Versions[0].FilesHash == vs.Versions[1].FilesHash {
		t.Errorf("versions %+v, want 2 then 1, by Alice, with different file hashes", vs.Versions)
	}
	waitCheck(t, alice, ea.ID, 2)

	// The admin sees who submitted what and when.
	var list struct {
		Participants []struct {
			Name     string                        `json:"name"`
			Status   string                        `json:"status"`
			Engines  []struct{ ID, Version int64 } `json:"engines"`
			Versions []struct{ Version int }       `json:"versions"`
			Last     *string                       `json:"last_submitted_at"`
		} `json:"participants"`
	}
	admin.call(t, "GET", "/api/participants", nil, &list)
	if len(list.Participants) != 2 || list.Participants[0].Name != "Alice" || list.Participants[0].Status != "active" ||
		len(list.Participants[0].Engines) != 1 || list.Participants[0].Engines[0].Version != 2 || len(list.Participants[0].Versions) != 2 || list.Participants[0].Last == nil {
		t.Errorf("participants %+v, want Alice active with alice-bot at version 2 and two uploads", list.Participants)
	}

	// Submissions close: a late upload and a late replacement are refused,
	// naming the deadline; the admin still may.
	if code := admin.call(t, "PUT", "/api/submissions", map[string]any{"locked": true}, nil); code != http.StatusOK {
		t.Fatalf("lock: %d", code)
	}
	var late errorAnswer
	code := bob.upload(t, "POST", "/api/engines", map[string]any{"name": "bob-late", "game": "othello", "protocol": "othello-move", "command": studentCommand}, studentEngine(t, "othello-random"), &late)
	if code != http.StatusConflict || !strings.Contains(late.Error.Message, "Submissions closed at ") || late.Error.Field != "deadline" {
		t.Errorf("a late upload: %d %+v, want 409 naming the deadline", code, late.Error)
	}
	if code := alice.call(t, "PUT", fmt.Sprintf("/api/engines/%d", ea.ID), map[string]any{"command": studentCommand}, &late); code != http.StatusConflict {
		t.Errorf("a late replacement: %d %+v, want 409", code, late.Error)
	}
	if code := admin.call(t, "POST", "/api/engines", map[string]any{"name": "admin-random", "game": "othello", "builtin": "othello-random"}, nil); code != http.StatusCreated {
		t.Errorf("the admin's registration after the deadline: %d, want 201", code)
	}

	// A tournament of both engines runs; each owner reads their own engine's
	// logs only.
	gl := classGames(t, s, ea.ID, eb.ID)
	for _, g := range gl.Games {
		t.Logf("game %d: %s, %d plies, %s", g.ID, g.Status, g.Plies, strOr(g.Reason))
		if g.Status != "finished" || g.Plies < 10 {
			t.Errorf("game %d: %s after %d plies (%s), want a whole game", g.ID, g.Status, g.Plies, strOr(g.Reason))
		}
		for _, color := range []string{"black", "white"} {
			owner := g.Black.EngineID
			if color == "white" {
				owner = g.White.EngineID
			}
			path := fmt.Sprintf("/api/games/%d/log/%s", g.ID, color)
			mine, theirs := alice, bob
			if owner == eb.ID {
				mine, theirs = bob, alice
			}
			if code := mine.call(t, "GET", path, nil, nil); code != http.StatusOK {
				t.Errorf("the owner reading %s: %d, want 200", path, code)
			}
			if code := theirs.call(t, "GET", path, nil, nil); code != http.StatusForbidden {
				t.Errorf("the other participant reading %s: %d, want 403", path, code)
			}
			if code := anon.call(t, "GET", path, nil, nil); code != http.StatusUnauthorized {
				t.Errorf("nobody reading %s: %d, want 401", path, code)
			}
			if code := admin.call(t, "GET", path, nil, nil); code != http.StatusOK {
				t.Errorf("the admin reading %s: %d, want 200", path, code)
			}
		}
	}
}
