// Command taikai runs tournaments between Othello, Gomoku and checkers engines: the
// referee they connect to, the scheduler, the record of every game and the live
// dashboard. Subcommands: serve, match, engine, bench.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/taikai-dev/taikai/engines/builtin"
	"github.com/taikai-dev/taikai/engines/sandbox"

	_ "github.com/taikai-dev/taikai/engines/protocol/all" // the protocols taikai speaks
	_ "github.com/taikai-dev/taikai/games/all"            // the games it plays
)

func main() {
	// Inside an engine's sandbox, the taikai binary may first be the helper
	// that opens the engine's seat; then this does not return.
	sandbox.MaybeHelper()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `taikai runs tournaments between Othello, Gomoku and checkers engines.

usage: taikai <command> [flags]

commands:
  serve    run the server: REST API, scheduler, referee and live dashboard
  match    play games between two engines without a server and print the result
  engine   run a built-in engine as a client of a server
  worker   play a server's games on this machine (taken from its NATS queue)
  bench    measure games per second, the clock, storage and workers

Run 'taikai <command> -h' for the flags of a command.
`

// run dispatches a subcommand and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], stdout, stderr)
	case "match":
		return runMatch(ctx, args[1:], stdout, stderr)
	case "engine":
		return builtin.Main(args[1:], stderr)
	case "worker":
		return runWorker(ctx, args[1:], stderr)
	case "bench":
		return runBench(ctx, args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "taikai: unknown command %q\n\n%s", args[0], usage)
	return 2
}
