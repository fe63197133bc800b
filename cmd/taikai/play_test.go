package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// serve's flags of games with people: defaults, flags, environment, and a
// clear error for a bad value.
func TestServePlayFlags(t *testing.T) {
	var stderr bytes.Buffer
	c, err := parseServe(nil, &stderr)
	if err != nil || c.play.Guests || c.play.Idle != 10*time.Minute || c.play.PerPerson != 2 || c.play.PerEngine != 4 {
		t.Fatalf("the defaults: %v %+v", err, c.play)
	}
	c, err = parseServe([]string{"--play-guests", "--play-idle", "90s", "--play-per-person", "1", "--play-per-engine", "8"}, &stderr)
	if err != nil || !c.play.Guests || c.play.Idle != 90*time.Second || c.play.PerPerson != 1 || c.play.PerEngine != 8 {
		t.Errorf("flags: %v %+v", err, c.play)
	}
	t.Setenv("TAIKAI_PLAY_GUESTS", "true")
	t.Setenv("TAIKAI_PLAY_IDLE", "2m")
	if c, err := parseServe(nil, &stderr); err != nil || !c.play.Guests || c.play.Idle != 2*time.Minute {
		t.Errorf("environment: %v %+v", err, c.play)
	}
	for _, bad := range [][]string{{"--play-idle", "0s"}, {"--play-idle", "25h"}, {"--play-per-person", "0"}, {"--play-per-engine", "-1"}} {
		if _, err := parseServe(bad, &stderr); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("%v: %v, want an error naming %s", bad, err, bad[0])
		}
	}
	t.Setenv("TAIKAI_PLAY_IDLE", "soon")
	if _, err := parseServe(nil, &stderr); err == nil || !strings.Contains(err.Error(), "TAIKAI_PLAY_IDLE") {
		t.Errorf("TAIKAI_PLAY_IDLE=soon: %v", err)
	}
}
