package tournament

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/games"
)

// A game whose engine could not run in its sandbox says so in its Detail
// (what match prints), not only crash or disconnect.
func TestExplainStartNotFoundInSandbox(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "1-black.log")
	_ = os.WriteFile(log, []byte("[taikai] ...: sandboxed: /home/me/brain\nbwrap: execvp /home/me/brain: No such file or directory\n"), 0o644)
	p := &Played{Spec: GameSpec{Black: engines.Engine{Name: "brain"}, White: engines.Engine{Name: "gomoku-random"}}}
	p.Outcome = games.Outcome{Winner: games.White, Loser: games.Black, Reason: games.ReasonDisconnect}
	p.Logs[0] = log
	got := explainStart(p, [2]string{})
	if !strings.Contains(got, "brain (black): the program /home/me/brain could not be run in the sandbox") {
		t.Errorf("detail %q", got)
	}
	p.Outcome.Reason = games.ReasonNormal
	if got := explainStart(p, [2]string{}); got != "" {
		t.Errorf("a game that ended on the board: detail %q", got)
	}
	// No log kept (taikai match without --logs): the output's head says it.
	p.Logs[0] = ""
	p.Outcome.Reason = games.ReasonCrash
	if got := explainStart(p, [2]string{"bwrap: execvp /home/me/brain: No such file or directory\n"}); !strings.Contains(got, "could not be run in the sandbox") {
		t.Errorf("from the output's head: detail %q", got)
	}
	p.Outcome.Reason = games.ReasonNormal
	if got := explainStart(p, [2]string{}); got != "" {
		t.Errorf("a game that ended on the board: detail %q", got)
	}
}
