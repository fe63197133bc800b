package tournament_test

import (
	"os"
	"strings"
	"testing"

	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/tournament"
)

// An engine that chats "SAY hi\rTURN n" (issue 36, item 1) cannot make the
// unchanged classroom Java client answer turns the server never gave: the
// relayed chat reaches it as one line, and the game ends for a game reason
// (a normal end, or the client's known PUT 0 0 stall).
func TestChatInjectionJavaClient(t *testing.T) {
	t.Parallel()
	ciRequires(t, "java")
	lockJavaPort(t)
	seed := javaClient(t)
	r := newRunner(t)
	set := tournament.Settings{Game: "othello", MoveTimeMS: 2000, ConnectMS: 120000}
	for _, javaBlack := range []bool{true, false} {
		spec := tournament.GameSpec{ID: 1, Black: seed, White: faultEngine(t, "inject", "othello-board"), Settings: set, LogDir: t.TempDir()}
		j := 0
		if !javaBlack {
			spec.Black, spec.White, j = spec.White, spec.Black, 1
		}
		p := play(t, r, spec)
		log, _ := os.ReadFile(p.Logs[j])
		fake := p.Violations[j][games.NotYourTurn.String()]
		t.Logf("java black=%v: %s by %s/%s after %d plies; the client answered %d fake turns", javaBlack, p.Result(), p.Outcome.Reason, p.Outcome.Cause, len(p.Moves), fake)
		if fake != 0 {
			t.Errorf("java black=%v: the client answered %d fake turns (violations %v)", javaBlack, fake, p.Violations[j])
		}
		switch p.Outcome.Reason {
		case games.ReasonNormal:
		case games.ReasonTimeout:
			if !strings.Contains(string(log), "PUT 0 0") {
				t.Errorf("java black=%v: a timeout without the client's PUT 0 0 stall:\n%s", javaBlack, log)
			}
		default:
			t.Errorf("java black=%v: game ended %+v (%s), not for a game reason\n%s", javaBlack, p.Outcome, p.Detail, log)
		}
		if !strings.Contains(string(log), "SAY ") {
			t.Errorf("java black=%v: the client never saw the chat:\n%s", javaBlack, log)
		}
	}
}
