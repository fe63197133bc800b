package web_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// versionsAnswer is GET /api/engines/{id}/versions with each version's check.
type versionsAnswer struct {
	Versions []struct {
		Version int `json:"version"`
		Check   *struct {
			Status        string         `json:"status"`
			Version       int            `json:"version"`
			OK            bool           `json:"ok"`
			Message       string         `json:"message"`
			MessageKey    string         `json:"message_key"`
			MessageParams map[string]any `json:"message_params"`
			FinishedAt    *time.Time     `json:"finished_at"`
		} `json:"check"`
	} `json:"versions"`
}

// Each version keeps its own pre-flight check (issue 40): a student's
// version 1, whose check is still waiting for it to connect when version 2
// is uploaded, keeps a check that says version 2 replaced it; version 2's
// check passes; GET .../check answers the last one (version 2's); the
// versions list shows each version's check to its owner and the admin, and
// none to a guest or another participant.
func TestVersionChecksAPI(t *testing.T) {
	s := startSite(t)
	_, token := newMember(t, s, "Aoi")
	_, otherToken := newMember(t, s, "Ren")
	aoi := member{s: s, token: token}
	// Version 1 never connects, and has a minute to: its check is under way
	// when version 2 comes.
	slow := map[string]string{"run.sh": "#!/bin/sh\nexec sleep 600\n"}
	var up struct {
		engineAnswer
		errorAnswer
	}
	if code := aoi.upload(t, "POST", "/api/engines", map[string]any{"name": "aoi-bot", "game": "othello", "protocol": "othello-move", "command": studentCommand, "connect_timeout_ms": 60000}, slow, &up); code != http.StatusCreated {
		t.Fatalf("upload version 1: status %d %+v", code, up.Error)
	}
	e := up.engineAnswer
	var first checkAnswer
	if code := aoi.call(t, "GET", fmt.Sprintf("/api/engines/%d/check", e.ID), nil, &first); code != http.StatusOK || first.Version != 1 || first.Status == "done" {
		t.Fatalf("version 1's check right after the upload: %d %+v, want it queued or running", code, first)
	}
	if code := aoi.upload(t, "PUT", fmt.Sprintf("/api/engines/%d", e.ID), map[string]any{"protocol": "othello-move", "command": studentCommand}, studentEngine(t, "othello-random"), nil); code != http.StatusOK {
		t.Fatalf("upload version 2: status %d", code)
	}
	if c := waitCheck(t, aoi, e.ID, 2); c.Result == nil || !c.Result.OK {
		t.Fatalf("version 2's check: %+v", c)
	}

	versions := func(m member) versionsAnswer {
		t.Helper()
		var v versionsAnswer
		if code := m.call(t, "GET", fmt.Sprintf("/api/engines/%d/versions", e.ID), nil, &v); code != http.StatusOK || len(v.Versions) != 2 {
			t.Fatalf("versions: status %d, %+v", code, v)
		}
		return v
	}
	var v versionsAnswer
	waitAPI(t, "version 1's check to be done", 60*time.Second, func() bool {
		v = versions(aoi)
		return v.Versions[1].Check != nil && v.Versions[1].Check.Status == "done"
	})
	v2, v1 := v.Versions[0], v.Versions[1]
	if v2.Version != 2 || v2.Check == nil || v2.Check.Version != 2 || v2.Check.Status != "done" || !v2.Check.OK || v2.Check.MessageKey != "passed" || v2.Check.FinishedAt == nil {
		t.Errorf("version 2's check in the versions: %+v", v2.Check)
	}
	if c := v1.Check; v1.Version != 1 || c.Version != 1 || c.OK || c.MessageKey != "replaced" || c.MessageParams["version"] != float64(2) || c.Message == "" {
		t.Errorf("version 1's check in the versions: %+v, want not ok, replaced by version 2", c)
	}
	// The engine's last check is still version 2's.
	var last checkAnswer
	if code := aoi.call(t, "GET", fmt.Sprintf("/api/engines/%d/check", e.ID), nil, &last); code != http.StatusOK || last.Version != 2 || last.Result == nil || !last.Result.OK {
		t.Errorf("GET check after both: %d %+v, want version 2's pass", code, last)
	}
	// The admin sees the checks too; a guest and another participant see
	// the versions without them.
	if got := versions(member{s: s, token: s.token}); got.Versions[0].Check == nil || got.Versions[1].Check == nil {
		t.Errorf("the admin's versions lack checks: %+v", got)
	}
	for who, m := range map[string]member{"a guest": {s: s}, "another participant": {s: s, token: otherToken}} {
		if got := versions(m); got.Versions[0].Check != nil || got.Versions[1].Check != nil {
			t.Errorf("%s sees the checks of another's engine: %+v", who, got)
		}
	}
}
