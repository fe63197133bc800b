package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/taikai-dev/taikai/tournament"
	"github.com/taikai-dev/taikai/web"
)

// playFlags are serve's flags for games with people (issue 39).
func playFlags(fs *flag.FlagSet, o *web.PlayOptions) error {
	guests, err := envBool("TAIKAI_PLAY_GUESTS", false)
	if err != nil {
		return err
	}
	idle := tournament.DefaultIdle
	if v := os.Getenv("TAIKAI_PLAY_IDLE"); v != "" {
		if idle, err = time.ParseDuration(v); err != nil {
			return fmt.Errorf("TAIKAI_PLAY_IDLE=%q: want a duration such as 10m", v)
		}
	}
	fs.BoolVar(&o.Guests, "play-guests", guests, "let visitors who are not signed in play the built-in engines in the browser (/play); the admin and participants always may")
	fs.DurationVar(&o.Idle, "play-idle", idle, "a person who makes no move for this `long` in a game against an engine resigns it")
	fs.IntVar(&o.PerPerson, "play-per-person", 2, "games in the browser one person (a participant, the admin, a guest's address) may play at once")
	fs.IntVar(&o.PerEngine, "play-per-engine", 4, "games in the browser one engine may play against people at once")
	return nil
}

// checkPlay checks the flags of games with people.
func checkPlay(o web.PlayOptions) error {
	switch {
	case o.Idle < time.Second || o.Idle > 24*time.Hour:
		return fmt.Errorf("--play-idle %v: want 1s-24h", o.Idle)
	case o.PerPerson < 1:
		return fmt.Errorf("--play-per-person %d: want at least 1", o.PerPerson)
	case o.PerEngine < 1:
		return fmt.Errorf("--play-per-engine %d: want at least 1", o.PerEngine)
	}
	return nil
}
