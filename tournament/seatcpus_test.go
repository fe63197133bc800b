package tournament_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/taikai-dev/taikai/engines"
	"github.com/taikai-dev/taikai/engines/sandbox"
	"github.com/taikai-dev/taikai/games"
	"github.com/taikai-dev/taikai/internal/testkit/sandboxkit"
	"github.com/taikai-dev/taikai/tournament"
)

// In a sandboxed game each engine runs on a CPU of its own, which its
// opponent's is not (on a machine of two CPUs or more; on one, on any),
// and plays the game to its end.
func TestSandboxedSeatCPUs(t *testing.T) {
	cpus, err := engines.AllowedCPUs()
	if err != nil {
		t.Skip(err)
	}
	bin := sandboxkit.Helper(t)
	r := &tournament.Runner{Launcher: &engines.Launcher{Self: bin, Sandbox: true, ExitGrace: 500 * time.Millisecond}}
	// A built-in that first writes the CPUs it may run on to its log.
	seat := func(name string) engines.Engine {
		e := builtinEngine(name, "othello-board")
		e.Builtin = ""
		e.Command = append([]string{"sh", "-c", `grep Cpus_allowed_list /proc/self/status >&2; exec "$@"`, "sh"},
			engines.BuiltinCommand(sandbox.HelperPath, name, e.Protocol)...)
		return e
	}
	allowed := regexp.MustCompile(`Cpus_allowed_list:\s*(\S+)`)
	for g := range 3 {
		p := play(t, r, tournament.GameSpec{ID: int64(g + 1), Black: seat("othello-random"), White: seat("othello-greedy"),
			Settings: tournament.Settings{Game: "othello", MoveTimeMS: 500, ConnectMS: 10000}, LogDir: t.TempDir()})
		if p.Sandbox != "on" || p.Outcome.Reason != games.ReasonNormal {
			t.Fatalf("game %d: sandbox %q, outcome %+v (%s)", g+1, p.Sandbox, p.Outcome, p.Detail)
		}
		var got [2]string
		for i, l := range p.Logs {
			b, _ := os.ReadFile(l)
			m := allowed.FindStringSubmatch(string(b))
			if m == nil {
				t.Fatalf("game %d: %s's log has no Cpus_allowed_list:\n%s", g+1, games.ColorAt(i), b)
			}
			got[i] = m[1]
		}
		t.Logf("game %d on %d CPUs: black on %s, white on %s", g+1, len(cpus), got[0], got[1])
		if len(cpus) < 2 {
			continue // nothing to share out
		}
		if strings.ContainsAny(got[0]+got[1], ",-") || got[0] == got[1] {
			t.Errorf("game %d: black on CPUs %s, white on %s: want one CPU each, not the same", g+1, got[0], got[1])
		}
	}
}
