package main

import (
	"context"
	"fmt"
	"io"
)

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "taikai bench: not yet")
	return 1
}
