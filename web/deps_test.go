package web_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/taikai-dev/taikai/internal/testkit"
)

// TestWebLinksNoNATS: web takes the workers' queue as an interface
// (web.WorkerQueue), so the packages it links hold no NATS client or
// server; nor does it link a wire adapter (DESIGN.md, imports).
func TestWebLinksNoNATS(t *testing.T) {
	gobin := testkit.Tool(t, "go")
	out, err := exec.Command(gobin, "list", "-deps", "github.com/taikai-dev/taikai/web").Output()
	if err != nil {
		t.Fatalf("go list -deps web: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 || !strings.Contains(string(out), "github.com/taikai-dev/taikai/tournament\n") {
		t.Fatalf("go list -deps web listed %d packages, without tournament: %q", len(deps), out)
	}
	for _, p := range deps {
		if strings.Contains(p, "nats-io") || strings.HasPrefix(p, "github.com/taikai-dev/taikai/engines/protocol/") {
			t.Errorf("web links %s", p)
		}
	}
}
