package engines_test

// The games and protocols taikai registers, as the taikai binary has them.
import (
	"github.com/taikai-dev/taikai/engines"
	_ "github.com/taikai-dev/taikai/engines/protocol/all"
	_ "github.com/taikai-dev/taikai/games/all"
)

// test-stdio is a protocol on pipes, for the launcher's stdio transport.
func init() {
	engines.RegisterProtocol(engines.Protocol{Name: "test-stdio", Game: "othello", Transport: engines.Stdio})
}
