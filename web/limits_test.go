package web_test

import (
	"fmt"
	"net/http"
	"testing"
)

// A participant cannot set their own engine's limits beyond the admin's
// maxima (issue 36, item 2): each over-limit field is a 400 naming it, a value
// within the maxima is kept, and the admin may set any value the engine
// allows.
func TestParticipantLimits(t *testing.T) {
	s := startSite(t)
	_, token := newMember(t, s, "Kana")
	kana := member{s: s, token: token}
	admin := member{s: s, token: s.token}
	type errAnswer struct {
		Error struct {
			Code, Message, Field string
		}
	}
	post := func(m member, name, field string, value int) (int, errAnswer) {
		t.Helper()
		var a errAnswer
		meta := map[string]any{"name": name, "game": "othello", "protocol": "othello-move", "command": studentCommand, field: value}
		code := m.upload(t, "POST", "/api/engines", meta, studentEngine(t, "othello-random"), &a)
		return code, a
	}
	accepted := 0
	for _, tc := range []struct {
		field string
		value int
	}{{"memory_mb", 65536}, {"max_procs", 32768}, {"connect_timeout_ms", 600000}, {"memory_mb", 1025}, {"max_procs", 257}} {
		code, a := post(kana, fmt.Sprintf("big-%s-%d", tc.field, tc.value), tc.field, tc.value)
		if code != http.StatusBadRequest || a.Error.Field != tc.field {
			t.Errorf("participant's %s=%d: %d %+v, want 400 naming %s", tc.field, tc.value, code, a.Error, tc.field)
		}
		if code < 300 {
			accepted++
		}
	}
	t.Logf("over-limit requests accepted from a participant: %d of 5", accepted)
	for _, tc := range []struct {
		field string
		value int
	}{{"memory_mb", 512}, {"max_procs", 64}, {"connect_timeout_ms", 20000}} {
		if code, a := post(kana, "small-"+tc.field, tc.field, tc.value); code != http.StatusCreated {
			t.Errorf("participant's %s=%d: %d %+v, want 201", tc.field, tc.value, code, a.Error)
		}
	}
	if code, a := post(admin, "admin-big", "memory_mb", 4096); code != http.StatusCreated {
		t.Errorf("admin's memory_mb=4096: %d %+v, want 201", code, a.Error)
	}
}
